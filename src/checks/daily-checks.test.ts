// The daily DNS checks and the DNS pause rule, against a real DNS server on loopback (dns2) and
// the test database (SQLite, or PostgreSQL with WARMUP_TEST_DB=postgres): failing SPF or DMARC
// for the sustained period pauses warmup with the reason in plain words, a fix resumes it, and a
// DNS server that does not answer never pauses anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { deadDnsPort, startDnsServer, type TestDnsServer, type ZoneRecord } from '../../test/helpers/dns-server.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { pdfText } from '../../test/helpers/pdf-text.js';
import type { Mailbox } from '../mailboxes/mailboxes.schemas.js';
import { DEFAULT_WARMUP } from '../mailboxes/warmup-settings.js';
import { applyDnsPauseRule } from '../mailboxes/dns-pause-rule.js';
import { mailboxesDueForChecks } from './checks.repository.js';
import { noteSenderEvidence } from '../engine/sender-evidence.js';
import { blocklistZones } from './blocklists.js';
import type { BlocklistListing } from './checks.schemas.js';
import { FAILING_RECHECK_MS, runDueChecks, type DailyChecksSettings } from './daily-checks.js';
import { createDnsResolver } from './dns-resolver.js';

const HOUR = 3_600_000;
const START = new Date('2026-03-02T08:00:00.000Z');
const at = (hours: number) => new Date(START.getTime() + hours * HOUR);
const SPF_OK = { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' } as const;
const DMARC_OK = { type: 'TXT', data: 'v=DMARC1; p=none' } as const;

const ZONES: Record<string, ZoneRecord[]> = {
  'good.test': [{ type: 'MX', exchange: 'mx.good.test', priority: 10 }, SPF_OK],
  '_dmarc.good.test': [DMARC_OK],
  'bad.test': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.55 -all' }],
  // SPF passes; DMARC is missing until a test publishes it
  'nodmarc.test': [{ type: 'MX', exchange: 'mx.nodmarc.test', priority: 10 }, SPF_OK],
  'flaky.test': [{ type: 'MX', exchange: 'mx.flaky.test', priority: 10 }, SPF_OK],
  'listed.test': [{ type: 'MX', exchange: 'mx.listed.test', priority: 10 }, SPF_OK],
  '_dmarc.listed.test': [DMARC_OK],
  'relaxed.test': [{ type: 'MX', exchange: 'mx.relaxed.test', priority: 10 }, SPF_OK],
};

describe('daily DNS checks and the DNS pause rule', () => {
  let dns: TestDnsServer;
  let testApp: TestApp;
  let live: DailyChecksSettings;

  beforeAll(async () => {
    dns = await startDnsServer(ZONES);
    testApp = await createTestApp({ dnsServers: [dns.address] });
    live = { resolve: createDnsResolver({ servers: [dns.address] }), pauseAfterMs: 72 * HOUR };
  });
  afterAll(async () => {
    await testApp?.close();
    await dns?.close();
  });

  /** One run of the `checks` job at `now` (the checks, the DNS pause rule): no mailbox is due a check after it. */
  async function passAt(now: Date, settings: DailyChecksSettings = live): Promise<void> {
    const { db } = testApp.database;
    const midnight = new Date(`${now.toISOString().slice(0, 10)}T00:00:00.000Z`);
    await runDueChecks(db, settings, now, { afterCheck: (checked) => applyDnsPauseRule(db, checked, settings, now) });
    const due = await mailboxesDueForChecks(db, {
      checkedBefore: midnight,
      recheckBefore: new Date(now.getTime() - FAILING_RECHECK_MS),
      limit: 1,
    });
    expect(due).toEqual([]);
  }

  async function mailboxOf(id: string): Promise<Mailbox> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { mailbox: Mailbox }).mailbox;
  }

  it('tells workspaces that want check.failed of each failing check once a day, and keeps the results', async () => {
    const { db } = testApp.database;
    const workspace = await testApp.createWorkspace('daily-checks');
    const hook = await workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'https://hooks.example.com/warmup', events: ['check.failed'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const good = await insertMailbox(db, workspace.id, { email: 'kim@good.test' });
    const bad = await insertMailbox(db, workspace.id, { email: 'lou@bad.test' });

    await passAt(START);
    await passAt(at(0.1));
    const events = await db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('workspace_id', '=', workspace.id)
      .execute();
    const failed = events.map((event) => JSON.parse(event.payload) as { type: string; data: Record<string, unknown> });
    expect(failed.map((event) => event.type)).toEqual(['check.failed', 'check.failed', 'check.failed']);
    expect(failed.map((event) => event.data.check).sort()).toEqual(['dmarc', 'mx', 'spf']);
    for (const event of failed) {
      expect(event.data).toMatchObject({ mailbox: { id: bad.id, email: 'lou@bad.test' }, domain: 'bad.test' });
      expect(event.data.fix).toEqual(expect.any(String));
    }
    const kept = await db
      .selectFrom('mailbox_checks')
      .select(['mailbox_id', 'check', 'status', 'failing_since'])
      .where('mailbox_id', 'in', [good.id, bad.id])
      .orderBy('mailbox_id')
      .orderBy('check')
      .execute();
    expect(kept.filter((row) => row.mailbox_id === good.id).map((row) => [row.status, row.failing_since])).toEqual([
      ['skipped', null],
      ['pass', null],
      ['pass', null],
      ['pass', null],
    ]);
    const badRows = kept.filter((row) => row.mailbox_id === bad.id);
    expect(badRows.filter((row) => row.status === 'fail').map((row) => row.failing_since)).toEqual([
      START.toISOString(),
      START.toISOString(),
      START.toISOString(),
    ]);

    // the next day the checks run again, and a check still failing is told again
    await passAt(at(24));
    const after = await db.selectFrom('webhook_events').select('id').where('workspace_id', '=', workspace.id).execute();
    expect(after).toHaveLength(6);
    await db.updateTable('mailboxes').set({ status: 'paused' }).where('id', 'in', [good.id, bad.id]).execute();
  });

  it('pauses a mailbox whose DMARC has failed for 72 hours, says why and how to fix it, and resumes it once fixed', async () => {
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, {
      email: 'max@nodmarc.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    await passAt(START);
    // hourly while failing, so the period is measured to the hour, not to the next daily check
    for (const hours of [24, 48, 71]) {
      await passAt(at(hours));
      expect((await mailboxOf(mailbox.id)).status).toBe('active');
    }
    await passAt(at(72));
    const paused = await mailboxOf(mailbox.id);
    expect(paused.status).toBe('paused');
    expect(paused.lastError).toMatch(
      /^Warmup paused: DMARC has failed for 72 hours \(nodmarc\.test publishes no DMARC/,
    );
    expect(paused.lastError).toContain('Fix: Publish a TXT record at _dmarc.nodmarc.test');
    expect(paused.lastError).toContain('resumes by itself once SPF and DMARC pass');
    expect(paused.outlook.summary).toContain('resumes by itself');
    expect(paused.outlook.attention).toEqual([{ kind: 'paused_for_dns', message: paused.lastError }]);
    expect(paused.pool).toMatchObject({ member: false, reason: 'paused' });

    // still failing an hour later: it stays paused
    await passAt(at(73));
    expect((await mailboxOf(mailbox.id)).status).toBe('paused');

    dns.zones['_dmarc.nodmarc.test'] = [DMARC_OK];
    try {
      await passAt(at(74));
      const resumed = await mailboxOf(mailbox.id);
      expect(resumed).toMatchObject({ status: 'active', lastError: null });
      expect(resumed.outlook.attention.map((item) => item.kind)).not.toContain('paused_for_dns');
    } finally {
      delete dns.zones['_dmarc.nodmarc.test'];
      await db.updateTable('mailboxes').set({ status: 'paused' }).where('id', '=', mailbox.id).execute();
    }
  });

  it('never pauses while the DNS server does not answer, and does not forget how long it was failing', async () => {
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, {
      email: 'flo@flaky.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    const dead: DailyChecksSettings = {
      resolve: createDnsResolver({ servers: [`127.0.0.1:${await deadDnsPort()}`], timeoutMs: 300 }),
      pauseAfterMs: live.pauseAfterMs,
    };
    await passAt(START);
    for (const hours of [24, 48, 72, 96]) {
      await passAt(at(hours), dead);
      expect((await mailboxOf(mailbox.id)).status).toBe('active');
    }
    const dmarc = await db
      .selectFrom('mailbox_checks')
      .select(['status', 'failing_since'])
      .where('mailbox_id', '=', mailbox.id)
      .where('check', '=', 'dmarc')
      .executeTakeFirstOrThrow();
    expect(dmarc).toEqual({ status: 'unreachable', failing_since: START.toISOString() });

    // the server answers again and DMARC is still missing: failing since the first check, so it pauses
    await passAt(at(97));
    const paused = await mailboxOf(mailbox.id);
    expect(paused.status).toBe('paused');
    expect(paused.lastError).toMatch(/^Warmup paused: DMARC has failed for 97 hours/);

    // while paused by the rule, an unanswered check does not resume it either
    dns.zones['_dmarc.flaky.test'] = [DMARC_OK];
    try {
      await passAt(at(98), dead);
      expect((await mailboxOf(mailbox.id)).status).toBe('paused');
      await passAt(at(99));
      expect((await mailboxOf(mailbox.id)).status).toBe('active');
    } finally {
      delete dns.zones['_dmarc.flaky.test'];
      await db.updateTable('mailboxes').set({ status: 'paused' }).where('id', '=', mailbox.id).execute();
    }
  });

  it('puts the latest checks, each failing one with its fix, into the PDF report', async () => {
    const { db } = testApp.database;
    const workspace = await testApp.createWorkspace('report');
    const mailbox = await insertMailbox(db, workspace.id, { email: 'pia@nodmarc.test', warmup: { ...DEFAULT_WARMUP } });
    await passAt(at(200));
    const response = await workspace.request({ method: 'GET', url: '/api/stats/export?format=pdf' });
    expect(response.statusCode, response.body).toBe(200);
    try {
      const text = await pdfText(response.rawPayload);
      expect(text).toContain('DNS checks');
      expect(text).toContain('pia@nodmarc.test');
      expect(text).toContain('MX passes: mail for nodmarc.test goes to mx.nodmarc.test');
      expect(text).toContain('DMARC FAILS: nodmarc.test publishes no DMARC record');
      expect(text).toContain('How to fix: Publish a TXT record at _dmarc.nodmarc.test: "v=DMARC1; p=none;');
      expect(text).toContain('DKIM not checked: no DKIM selector is known for this mailbox');
    } finally {
      await db.updateTable('mailboxes').set({ status: 'paused' }).where('id', '=', mailbox.id).execute();
    }
  });

  it('asks the blocklists daily about its domain and sending addresses: listed since when, where to delist, never the DQS key', async () => {
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, {
      email: 'lia@listed.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    // two addresses its mail was seen sent from (the Received fields of copies its peers found)
    for (const ip of ['85.10.20.99', '85.10.20.98']) {
      const headers = `Received: from out.listed.test (out.listed.test [${ip}]) by mx.peer.test\r\n`;
      await noteSenderEvidence(db, mailbox.id, mailbox.workspace_id, headers, START);
    }
    const key = 'dqskey0123';
    const zones = blocklistZones({
      ipZones: ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.down.test'],
      domainZones: ['dbl.spamhaus.org'],
      spamhausDqsKey: key,
    });
    const settings: DailyChecksSettings = { ...live, blocklistZones: zones };
    dns.zones[`99.20.10.85.${key}.zen.dq.spamhaus.net`] = [
      { type: 'A', address: '127.0.0.2' },
      { type: 'TXT', data: 'https://check.spamhaus.org/listed?searchterm=85.10.20.99' },
    ];
    // Spamhaus's answer to a resolver it refuses is not a listing
    dns.zones[`98.20.10.85.${key}.zen.dq.spamhaus.net`] = [{ type: 'A', address: '127.255.255.254' }];
    dns.zones[`listed.test.${key}.dbl.dq.spamhaus.net`] = [{ type: 'A', address: '127.0.1.2' }];
    const blocklists = async () => {
      const response = await testApp.workspace.request({
        method: 'GET',
        url: `/api/mailboxes/${mailbox.id}/blocklists`,
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.body).not.toContain(key);
      return (response.json() as { blocklists: BlocklistListing[] }).blocklists;
    };
    try {
      expect(await blocklists()).toEqual([]);
      await passAt(START, settings);
      await passAt(at(24), settings);
      const listed = await blocklists();
      expect(listed.filter((l) => l.status === 'listed')).toEqual([
        {
          zone: 'dbl.dq.spamhaus.net',
          kind: 'domain',
          subject: 'listed.test',
          status: 'listed',
          detail: 'listed on dbl.dq.spamhaus.net (127.0.1.2)',
          listedSince: START.toISOString(),
          delistUrl: 'https://check.spamhaus.org/',
          checkedAt: at(24).toISOString(),
        },
        {
          zone: 'zen.dq.spamhaus.net',
          kind: 'ip',
          subject: '85.10.20.99',
          status: 'listed',
          detail: 'listed on zen.dq.spamhaus.net (127.0.0.2): https://check.spamhaus.org/listed?searchterm=85.10.20.99',
          listedSince: START.toISOString(),
          delistUrl: 'https://check.spamhaus.org/',
          checkedAt: at(24).toISOString(),
        },
      ]);
      const byKey = new Map(listed.map((l) => [`${l.zone} ${l.subject}`, l]));
      expect(byKey.get('zen.dq.spamhaus.net 85.10.20.98')).toMatchObject({ status: 'unreachable', listedSince: null });
      expect(byKey.get('zen.dq.spamhaus.net 85.10.20.98')!.detail).toContain('127.255.255.254, which is not a listing');
      expect(byKey.get('b.barracudacentral.org 85.10.20.99')).toMatchObject({
        status: 'clear',
        delistUrl: 'https://www.barracudacentral.org/rbl/removal-request',
      });
      expect(byKey.get('bl.down.test 85.10.20.99')).toMatchObject({ status: 'unreachable', delistUrl: null });
      expect(listed).toHaveLength(7);
      // an hour later (a recheck, were SPF failing) the lists are not asked again
      await passAt(at(25), settings);
      expect((await blocklists()).every((l) => l.checkedAt === at(24).toISOString())).toBe(true);

      // delisted: the next day's answer is clear, and the listing's start is gone
      delete dns.zones[`listed.test.${key}.dbl.dq.spamhaus.net`];
      await passAt(at(48), settings);
      expect((await blocklists()).find((l) => l.kind === 'domain')).toMatchObject({
        status: 'clear',
        listedSince: null,
      });
    } finally {
      await db.updateTable('mailboxes').set({ status: 'paused' }).where('id', '=', mailbox.id).execute();
    }
  });

  it("leaves the owner's pause to the owner, and pauses nothing when the rule is off (0 hours)", async () => {
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, {
      email: 'rae@relaxed.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    const off: DailyChecksSettings = { ...live, pauseAfterMs: 0 };
    await passAt(START, off);
    await passAt(at(100), off);
    expect((await mailboxOf(mailbox.id)).status).toBe('active');

    await passAt(at(101));
    expect((await mailboxOf(mailbox.id)).status).toBe('paused');
    const pause = await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${mailbox.id}/pause` });
    expect(pause.statusCode, pause.body).toBe(200);
    dns.zones['_dmarc.relaxed.test'] = [DMARC_OK];
    try {
      await passAt(at(102));
      const owned = await mailboxOf(mailbox.id);
      expect(owned.status).toBe('paused');
      expect(owned.outlook.attention.map((item) => item.kind)).not.toContain('paused_for_dns');
    } finally {
      delete dns.zones['_dmarc.relaxed.test'];
    }
  });
});
