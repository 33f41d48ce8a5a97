// The DNS checks against a real DNS server on loopback (dns2) serving test zones, through the
// service's resolver setting: each check passing, failing with its fix, and unreachable (a server
// that answers SERVFAIL, and one that is not there at all). Never the public internet.
import { generateKeyPairSync } from 'node:crypto';
import dgram from 'node:dgram';
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { emitScheduledEvents } from '../webhooks/webhook-events.js';
import type { MailboxChecks } from './checks.schemas.js';
import { createDnsResolver } from './dns-resolver.js';

const { Packet } = dns2;

function dkimKey(bits: number): string {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
}

type ZoneRecord = { type: 'MX'; exchange: string; priority: number } | { type: 'TXT'; data: string | string[] };

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

/** A DNS server on 127.0.0.1 answering from ZONES; names under down.test get SERVFAIL. */
async function startDnsServer(): Promise<{ address: string; close(): Promise<void> }> {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question!.name.toLowerCase();
      if (name === 'down.test' || name.endsWith('.down.test')) {
        response.header.rcode = 2;
      } else if (!(name in ZONES)) {
        response.header.rcode = 3;
      } else {
        for (const record of ZONES[name]!.filter((r) => Packet.TYPE[r.type] === question!.type)) {
          response.answers.push({
            name: question!.name,
            class: Packet.CLASS.IN,
            ttl: 60,
            ...record,
            type: Packet.TYPE[record.type],
          });
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { address: `127.0.0.1:${addresses.udp!.port}`, close: () => server.close() };
}

/** A loopback UDP port nobody listens on. */
async function deadPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

describe('GET /api/mailboxes/:id/checks', () => {
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  let testApp: TestApp;

  beforeAll(async () => {
    dns = await startDnsServer();
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
    expect(checks.dkim!.fix).toContain('dkimSelector');
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
    const deadApp = await createTestApp({ dnsServers: [`127.0.0.1:${await deadPort()}`] });
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

  it('runs daily for workspaces that want check.failed: one event per failing check and day, results kept', async () => {
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
    const resolve = createDnsResolver({ servers: [dns.address] });
    const now = new Date('2026-03-02T08:00:00.000Z');

    await emitScheduledEvents(db, now, resolve);
    await emitScheduledEvents(db, new Date(now.getTime() + 60_000), resolve);
    const events = await db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('workspace_id', '=', workspace.id)
      .execute();
    const failed = events.map((event) => JSON.parse(event.payload) as { type: string; data: Record<string, unknown> });
    expect(failed.map((event) => event.type)).toEqual(['check.failed', 'check.failed', 'check.failed']);
    expect(failed.map((event) => event.data.check).sort()).toEqual(['dmarc', 'mx', 'spf']);
    for (const event of failed) {
      expect(event.data).toMatchObject({
        mailbox: { id: bad.id, email: 'lou@bad.test' },
        domain: 'bad.test',
        status: 'fail',
      });
      expect(event.data.fix).toEqual(expect.any(String));
    }
    const kept = await db
      .selectFrom('mailbox_checks')
      .select(['mailbox_id', 'check', 'status'])
      .where('mailbox_id', 'in', [good.id, bad.id])
      .orderBy('mailbox_id')
      .orderBy('check')
      .execute();
    expect(kept.filter((row) => row.mailbox_id === good.id).map((row) => row.status)).toEqual([
      'skipped',
      'pass',
      'pass',
      'pass',
    ]);
    expect(kept.filter((row) => row.mailbox_id === bad.id)).toHaveLength(4);

    // the next day the checks run again, and a check still failing is told again
    await emitScheduledEvents(db, new Date(now.getTime() + 86_400_000), resolve);
    const after = await db.selectFrom('webhook_events').select('id').where('workspace_id', '=', workspace.id).execute();
    expect(after).toHaveLength(6);
  });
});
