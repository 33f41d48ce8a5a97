// The DNS checks against a real DNS server on loopback (dns2) serving test zones, through the
// service's resolver setting: each check passing, failing with its fix, and unreachable (a server
// that answers SERVFAIL, and one that is not there at all). Never the public internet.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { deadDnsPort, startDnsServer, type TestDnsServer, type ZoneRecord } from '../../test/helpers/dns-server.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { saveBlocklistResults, saveChecks } from './checks.repository.js';
import type { DnsStatusList, MailboxChecks } from './checks.schemas.js';

function dkimKey(bits: number): string {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
}

const elevenIncludes = Array.from({ length: 11 }, (_, i) => `include:i${i + 1}.loops.test`).join(' ');

const ZONES: Record<string, ZoneRecord[]> = {
  'good.test': [
    { type: 'MX', exchange: 'mx.good.test', priority: 10 },
    { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' },
    { type: 'TXT', data: 'google-site-verification=abc' },
  ],
  '_dmarc.good.test': [{ type: 'TXT', data: 'v=DMARC1; p=quarantine; adkim=s; rua=mailto:d@good.test' }],
  's1._domainkey.good.test': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${dkimKey(1024)}` }],
  // a subdomain whose DMARC comes from its organisational domain
  'mail.good.test': [
    { type: 'MX', exchange: 'mx.good.test', priority: 10 },
    { type: 'TXT', data: 'v=spf1 include:good.test -all' },
  ],
  'bad.test': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.55 -all' }],
  's1._domainkey.bad.test': [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=' }],
  's2._domainkey.bad.test': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${dkimKey(512)}` }],
  'loops.test': [{ type: 'TXT', data: `v=spf1 ${elevenIncludes} -all` }],
  ...Object.fromEntries(
    Array.from({ length: 11 }, (_, i) => [`i${i + 1}.loops.test`, [{ type: 'TXT', data: 'v=spf1 -all' }]]),
  ),
  'broken.test': [{ type: 'TXT', data: 'v=spf1 ipx4:1.2.3.4 -all' }],
  'twice.test': [
    { type: 'TXT', data: 'v=spf1 -all' },
    { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' },
  ],
};

describe('GET /api/mailboxes/:id/checks', () => {
  let dns: TestDnsServer;
  let testApp: TestApp;

  beforeAll(async () => {
    dns = await startDnsServer(ZONES);
    testApp = await createTestApp({ dnsServers: [dns.address] });
  });
  afterAll(async () => {
    await testApp.close();
    await dns.close();
  });

  async function checksOf(email: string, query = '', app: TestApp = testApp): Promise<MailboxChecks> {
    const mailbox = await insertMailbox(app.database.db, app.workspace.id, { email });
    const response = await app.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}/checks${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as MailboxChecks;
  }

  function byName(result: MailboxChecks) {
    return Object.fromEntries(result.checks.map((check) => [check.check, check]));
  }

  it('passes a domain with MX, an SPF record that authorises its SMTP server, DMARC and a DKIM key', async () => {
    const result = await checksOf('ann@good.test', '?dkimSelector=s1');
    expect(result.domain).toBe('good.test');
    const checks = byName(result);
    expect(checks.mx).toMatchObject({ status: 'pass', detail: 'mail for good.test goes to mx.good.test', fix: null });
    expect(checks.spf).toMatchObject({ status: 'pass', fix: null });
    expect(checks.spf!.detail).toContain('authorises 127.0.0.1');
    expect(checks.dmarc).toMatchObject({ status: 'pass', fix: null });
    expect(checks.dmarc!.detail).toBe('policy quarantine, DKIM alignment strict, SPF alignment relaxed');
    expect(checks.dkim).toMatchObject({
      status: 'pass',
      detail: 's1._domainkey.good.test publishes a rsa 1024-bit key',
    });
  });

  it('follows includes, and finds DMARC on the organisational domain', async () => {
    const checks = byName(await checksOf('bea@mail.good.test'));
    expect(checks.spf!.status).toBe('pass');
    expect(checks.dmarc).toMatchObject({ status: 'pass' });
    expect(checks.dmarc!.detail).toContain('from the organisational domain');
    expect(checks.dkim).toMatchObject({ status: 'skipped' });
    // the fix points at the form beside the checks, never at an API call
    expect(checks.dkim!.fix).toContain('under "DKIM selector"');
    expect(checks.dkim!.fix).not.toMatch(/\/api\/|PUT /);
  });

  it('fails a domain without MX or DMARC, whose SPF leaves its server out and whose DKIM key is revoked, each with a fix', async () => {
    const checks = byName(await checksOf('cal@bad.test', '?dkimSelector=s1'));
    expect(checks.mx).toMatchObject({ status: 'fail', detail: expect.stringContaining('no MX record') });
    expect(checks.spf).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('does not authorise 127.0.0.1'),
    });
    expect(checks.dmarc).toMatchObject({ status: 'fail', detail: expect.stringContaining('no DMARC record') });
    expect(checks.dmarc!.fix).toContain('_dmarc.bad.test');
    expect(checks.dkim).toMatchObject({ status: 'fail', detail: expect.stringContaining('revoked') });
    for (const check of Object.values(checks)) expect(check!.fix).toEqual(expect.any(String));
  });

  it('fails a DKIM key under 1024 bits and a missing selector', async () => {
    expect(byName(await checksOf('dan@bad.test', '?dkimSelector=s2')).dkim).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('512 bits'),
    });
    expect(byName(await checksOf('dee@bad.test', '?dkimSelector=nope')).dkim).toMatchObject({
      status: 'fail',
      detail: 'no DKIM key is published at nope._domainkey.bad.test',
    });
  });

  it('fails SPF past 10 lookups, with a syntax error, and with two records', async () => {
    const loops = byName(await checksOf('eve@loops.test')).spf!;
    expect(loops).toMatchObject({ status: 'fail', detail: expect.stringContaining('is invalid') });
    expect(loops.fix).toContain('10 DNS lookups');
    expect(byName(await checksOf('fay@broken.test')).spf).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('is invalid'),
    });
    expect(byName(await checksOf('gus@twice.test')).spf).toMatchObject({
      status: 'fail',
      detail: 'twice.test publishes 2 SPF records; receivers treat that as an error',
    });
  });

  it('is unreachable, not failed, when the DNS server answers SERVFAIL', async () => {
    const result = await checksOf('hal@down.test', '?dkimSelector=s1');
    expect(result.checks.map((check) => [check.check, check.status])).toEqual([
      ['mx', 'unreachable'],
      ['spf', 'unreachable'],
      ['dmarc', 'unreachable'],
      ['dkim', 'unreachable'],
    ]);
  });

  it('is unreachable when no DNS server answers at all', async () => {
    const deadApp = await createTestApp({ dnsServers: [`127.0.0.1:${await deadDnsPort()}`] });
    try {
      const result = await checksOf('ivy@good.test', '?dkimSelector=s1', deadApp);
      expect(result.checks.map((check) => check.status)).toEqual([
        'unreachable',
        'unreachable',
        'unreachable',
        'unreachable',
      ]);
    } finally {
      await deadApp.close();
    }
  });

  it('checks DKIM with the selector learned from mail, or the one the user gives, which wins until forgotten', async () => {
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, { email: 'kit@good.test' });
    const checksUrl = `/api/mailboxes/${mailbox.id}/checks`;
    const selectorUrl = `/api/mailboxes/${mailbox.id}/dkim-selector`;
    const get = async () =>
      (await testApp.workspace.request({ method: 'GET', url: checksUrl })).json() as MailboxChecks;

    expect(await get()).toMatchObject({ dkimSelector: { selector: null, source: null } });
    // a peer found its warmup mail signed with s=s1
    await db
      .updateTable('mailboxes')
      .set({ dkim_selector: 's1', dkim_selector_source: 'mail' })
      .where('id', '=', mailbox.id)
      .execute();
    const learned = await get();
    expect(learned.dkimSelector).toEqual({ selector: 's1', source: 'mail' });
    expect(byName(learned).dkim).toMatchObject({
      status: 'pass',
      detail: expect.stringContaining('s1._domainkey.good.test'),
    });

    const given = await testApp.workspace.request({ method: 'PUT', url: selectorUrl, payload: { selector: 'nope' } });
    expect(given.statusCode, given.body).toBe(200);
    expect(given.json()).toEqual({ dkimSelector: { selector: 'nope', source: 'user' } });
    expect(byName(await get()).dkim).toMatchObject({
      status: 'fail',
      detail: 'no DKIM key is published at nope._domainkey.good.test',
    });
    // the query still checks another selector once, without keeping it
    expect(byName(await checksOf('kit2@good.test', '?dkimSelector=s1')).dkim!.status).toBe('pass');

    const forgotten = await testApp.workspace.request({ method: 'PUT', url: selectorUrl, payload: { selector: null } });
    expect(forgotten.json()).toEqual({ dkimSelector: { selector: null, source: null } });
    expect(byName(await get()).dkim!.status).toBe('skipped');

    const bad = await testApp.workspace.request({ method: 'PUT', url: selectorUrl, payload: { selector: 'a b' } });
    expect(bad.statusCode).toBe(400);
    const other = await testApp.createWorkspace('selector-other');
    expect((await other.request({ method: 'PUT', url: selectorUrl, payload: { selector: 's1' } })).statusCode).toBe(
      404,
    );
  });

  it("is a 404 for another workspace's mailbox, and a 400 for a bad selector", async () => {
    const mailbox = await insertMailbox(testApp.database.db, testApp.workspace.id, { email: 'jo@good.test' });
    const other = await testApp.createWorkspace('other');
    expect((await other.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}/checks` })).statusCode).toBe(404);
    const bad = await testApp.workspace.request({
      method: 'GET',
      url: `/api/mailboxes/${mailbox.id}/checks?dkimSelector=a%20b`,
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe('GET /api/mailboxes/dns-status', () => {
  let testApp: TestApp;
  const at = new Date('2026-03-15T06:00:00.000Z');

  beforeAll(async () => {
    testApp = await createTestApp();
  });
  afterAll(() => testApp.close());

  it("gives every mailbox of the workspace its status from the stored daily results, never another workspace's", async () => {
    const db = testApp.database.db;
    const { id: failing } = await insertMailbox(db, testApp.workspace.id, { email: 'sam@nodmarc.test' });
    const { id: listed } = await insertMailbox(db, testApp.workspace.id, { email: 'kim@listed.test' });
    await insertMailbox(db, testApp.workspace.id, { email: 'new@fresh.test' });
    const pass = (check: 'mx' | 'spf' | 'dmarc' | 'dkim') => ({
      check,
      status: 'pass' as const,
      detail: 'ok',
      fix: null,
    });
    await saveChecks(
      db,
      failing,
      [
        pass('mx'),
        pass('spf'),
        pass('dkim'),
        { check: 'dmarc', status: 'fail', detail: 'none', fix: 'Publish DMARC.' },
      ],
      at,
    );
    await saveChecks(db, listed, [pass('mx'), pass('spf'), pass('dmarc'), pass('dkim')], at);
    await saveBlocklistResults(
      db,
      listed,
      [
        {
          zone: 'zen.spamhaus.org',
          kind: 'ip',
          subject: '192.0.2.9',
          status: 'listed',
          detail: '127.0.0.2',
          delistUrl: 'https://check.spamhaus.org/',
        },
      ],
      at,
    );
    const other = await testApp.createWorkspace('dns-status-other');
    const { id: theirs } = await insertMailbox(db, other.id, { email: 'them@other.test' });
    await saveChecks(db, theirs, [{ check: 'spf', status: 'fail', detail: 'none', fix: 'Theirs.' }], at);

    const response = await testApp.workspace.request({ method: 'GET', url: '/api/mailboxes/dns-status' });
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as DnsStatusList).mailboxes).toEqual([
      {
        mailboxId: listed,
        email: 'kim@listed.test',
        domain: 'listed.test',
        checkedAt: at.toISOString(),
        tone: 'error',
        label: 'Listed on 1 blocklist',
        fix: 'Find and stop what got 192.0.2.9 listed on zen.spamhaus.org, then ask for its removal at https://check.spamhaus.org/.',
      },
      {
        mailboxId: expect.any(String),
        email: 'new@fresh.test',
        domain: 'fresh.test',
        checkedAt: null,
        tone: 'unknown',
        label: 'Not checked yet',
        fix: null,
      },
      {
        mailboxId: failing,
        email: 'sam@nodmarc.test',
        domain: 'nodmarc.test',
        checkedAt: at.toISOString(),
        tone: 'error',
        label: 'DMARC failing',
        fix: 'Publish DMARC.',
      },
    ]);
    const theirList = (
      await other.request({ method: 'GET', url: '/api/mailboxes/dns-status' })
    ).json() as DnsStatusList;
    expect(theirList.mailboxes.map((m) => [m.email, m.label])).toEqual([['them@other.test', 'SPF failing']]);
  });
});
