// Webhooks end to end over real HTTP: a local receiver that checks every signature with the
// Standard Webhooks library, goes down (connection refused, then 503) and comes back; deliveries
// driven by the delivery job under an injected clock; and a worker process killed mid-delivery,
// whose delivery another worker finishes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { DEFAULT_MAIL_POLICY } from '../mail/policy.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { loadSecretKey } from '../secrets/secrets.js';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { startDnsServer, type TestDnsServer } from '../../test/helpers/dns-server.js';
import { blocklistZones } from '../checks/blocklists.js';
import { createDnsResolver } from '../checks/dns-resolver.js';
import { noteSenderEvidence } from '../engine/sender-evidence.js';
import { DEFAULT_WARMUP } from '../mailboxes/warmup-settings.js';
import { startWarmup, type RunningProcess } from '../../test/helpers/processes.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../../test/helpers/test-app.js';
import { applyDnsPauseRule } from '../mailboxes/dns-pause-rule.js';
import { runDueChecks, type DailyChecksSettings } from '../checks/daily-checks.js';
import { deliverDueWebhooks, DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhook-delivery.js';
import { emitScheduledEvents } from './webhook-events.js';
import type { WebhookDelivery } from './webhooks.schemas.js';

const silent = pino({ level: 'silent' });
const LOOPBACK_POLICY = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };

interface Received {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  verified: boolean;
}

/** An HTTP receiver that verifies each request's signature; `answer` decides each reply (or holds it). */
class Receiver {
  readonly received: Received[] = [];
  secret = '';
  answer: (request: number) => number | 'hold' = () => 200;
  private server: http.Server | undefined;
  private held: http.ServerResponse[] = [];
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        let verified = false;
        try {
          new Webhook(this.secret).verify(body, request.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
        this.received.push({ id: String(request.headers['webhook-id']), body: JSON.parse(body), verified });
        const answer = this.answer(this.received.length);
        if (answer === 'hold') {
          this.held.push(response);
          return;
        }
        response.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Goes down: the port refuses connections until start(port) again. */
  async stop(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.held = [];
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/warmup`;
  }
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook endpoints API', () => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp({ mailPolicy: DEFAULT_MAIL_POLICY });
  });
  afterAll(() => testApp.close());

  it('registers an endpoint, shows its secret once, and scopes it to the workspace', async () => {
    const created = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'https://hooks.example.com/warmup', events: ['mailbox.error', 'daily.summary'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { webhook, secret } = created.json() as { webhook: { id: string; enabled: boolean }; secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook.enabled).toBe(true);
    expect(created.headers.location).toBe(`/api/webhooks/${webhook.id}`);

    const listed = await testApp.workspace.request({ method: 'GET', url: '/api/webhooks' });
    expect(listed.json()).toMatchObject({ webhooks: [{ id: webhook.id, events: ['mailbox.error', 'daily.summary'] }] });
    expect(listed.body).not.toContain(secret);
    const stored = await testApp.database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(stored.secret_encrypted).not.toContain(secret.slice(6));

    const other = await testApp.createWorkspace('other');
    expect((await other.request({ method: 'GET', url: `/api/webhooks/${webhook.id}` })).statusCode).toBe(404);
    expect((await other.request({ method: 'DELETE', url: `/api/webhooks/${webhook.id}` })).statusCode).toBe(404);
    expect((await other.request({ method: 'GET', url: '/api/webhooks' })).json()).toEqual({ webhooks: [] });

    const patched = await testApp.workspace.request({
      method: 'PATCH',
      url: `/api/webhooks/${webhook.id}`,
      payload: { enabled: false, description: 'ops channel' },
    });
    expect(patched.json()).toMatchObject({ webhook: { enabled: false, description: 'ops channel' } });
    const rotated = await testApp.workspace.request({
      method: 'POST',
      url: `/api/webhooks/${webhook.id}/rotate-secret`,
    });
    expect((rotated.json() as { secret: string }).secret).not.toBe(secret);
    expect((await testApp.workspace.request({ method: 'DELETE', url: `/api/webhooks/${webhook.id}` })).statusCode).toBe(
      204,
    );
  });

  it.each([
    [{ url: 'ftp://hooks.example.com/x', events: ['mailbox.error'] }, '/body/url'],
    [{ url: 'https://user:pw@hooks.example.com/x', events: ['mailbox.error'] }, '/body/url'],
    [{ url: 'http://127.0.0.1:8080/x', events: ['mailbox.error'] }, '/body/url'],
    [{ url: 'http://[::1]/x', events: ['mailbox.error'] }, '/body/url'],
    [{ url: 'http://169.254.169.254/latest', events: ['mailbox.error'] }, '/body/url'],
    [{ url: 'https://hooks.example.com/x', events: ['mailbox.exploded'] }, '/body/events/0'],
    [{ url: 'https://hooks.example.com/x', events: [] }, '/body/events'],
  ])('refuses %o', async (payload, path) => {
    const response = await testApp.workspace.request({ method: 'POST', url: '/api/webhooks', payload });
    expect(response.statusCode, response.body).toBe(400);
    expect((response.json() as { errors: Array<{ path: string }> }).errors[0]?.path).toBe(path);
  });
});

describe('webhook delivery', () => {
  let testApp: TestApp;
  const receiver = new Receiver();
  // real time: receivers refuse a signature timestamp more than 5 minutes off their own clock
  const clock = fixedClock(new Date());
  const settings: WebhookSettings = { ...DEFAULT_WEBHOOK_SETTINGS, retryDelaysMs: [1_000, 2_000, 4_000] };
  let deliver: () => Promise<{ delivered: number; retried: number; failed: number }>;

  beforeAll(async () => {
    testApp = await createTestApp({ clock, mailPolicy: LOOPBACK_POLICY });
    await receiver.start();
    const deps = {
      db: testApp.database.db,
      dialect: testApp.database.dialect,
      clock,
      logger: silent,
      secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: testApp.database.dataDir }),
      policy: LOOPBACK_POLICY,
      workerId: 'test-delivery',
      settings,
      random: () => 0,
    };
    deliver = () => deliverDueWebhooks(deps);
  });
  afterEach(async () => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
    await testApp.database.db.deleteFrom('webhook_endpoints').execute();
  });
  afterAll(async () => {
    await receiver.stop();
    await testApp.close();
  });

  async function register(events: string[]): Promise<string> {
    const response = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: receiver.url, events },
    });
    expect(response.statusCode, response.body).toBe(201);
    const { webhook, secret } = response.json() as { webhook: { id: string }; secret: string };
    receiver.secret = secret;
    return webhook.id;
  }

  async function deliveries(webhookId: string): Promise<WebhookDelivery[]> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/webhooks/${webhookId}/deliveries` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { deliveries: WebhookDelivery[] }).deliveries;
  }

  it('signs mailbox.error and mailbox.recovered per Standard Webhooks, and sends only subscribed events', async () => {
    const webhookId = await register(['mailbox.error', 'mailbox.recovered']);
    const mailbox = await insertMailbox(testApp.database.db, testApp.workspace.id, { email: 'ops@hook-one.test' });
    const at = clock.now();
    await applyMailboxEvent(
      testApp.database.db,
      mailbox.id,
      { type: 'stopped', lastError: 'SMTP login refused' },
      { at },
    );
    await applyMailboxEvent(testApp.database.db, mailbox.id, { type: 'resumed', at }, { at });
    expect(await deliver()).toEqual({ delivered: 2, retried: 0, failed: 0 });

    // sent side by side: receivers get no order guarantee (the payload's timestamp orders them)
    expect(receiver.received.map((r) => [r.body.type, r.verified]).sort()).toEqual([
      ['mailbox.error', true],
      ['mailbox.recovered', true],
    ]);
    expect(receiver.received.find((r) => r.body.type === 'mailbox.error')!.body).toEqual({
      type: 'mailbox.error',
      timestamp: at.toISOString(),
      data: {
        mailbox: { id: mailbox.id, email: 'ops@hook-one.test', name: null },
        status: 'error',
        previousStatus: 'active',
        lastError: 'SMTP login refused',
      },
    });
    const log = await deliveries(webhookId);
    expect(log.map((d) => [d.eventType, d.status, d.attempts, d.attemptLog[0]?.statusCode]).sort()).toEqual([
      ['mailbox.error', 'delivered', 1, 200],
      ['mailbox.recovered', 'delivered', 1, 200],
    ]);
    expect(log.map((d) => d.id).sort()).toEqual(receiver.received.map((r) => r.id).sort());
    // nothing left to send
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
  });

  it('a signature made with another secret does not verify', async () => {
    await register(['mailbox.error']);
    receiver.secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const mailbox = await insertMailbox(testApp.database.db, testApp.workspace.id, { email: 'x@hook-two.test' });
    await applyMailboxEvent(testApp.database.db, mailbox.id, { type: 'stopped', lastError: 'x' }, { at: clock.now() });
    await deliver();
    expect(receiver.received.map((r) => r.verified)).toEqual([false]);
  });

  it('survives the receiver going down (refused, then 503) and delivers once it is back, nothing lost', async () => {
    const webhookId = await register(['mailbox.error']);
    const mailboxes = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        insertMailbox(testApp.database.db, testApp.workspace.id, { email: `${name}@hook-outage.test` }),
      ),
    );
    const port = receiver.port;
    await receiver.stop();
    for (const mailbox of mailboxes) {
      await applyMailboxEvent(
        testApp.database.db,
        mailbox.id,
        { type: 'stopped', lastError: 'x' },
        { at: clock.now() },
      );
    }
    // down: nothing listens
    expect(await deliver()).toEqual({ delivered: 0, retried: 3, failed: 0 });
    // not due again before its backoff
    clock.advance(500);
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    // up but failing: 503
    await receiver.start(port);
    receiver.answer = () => 503;
    clock.advance(600);
    expect(await deliver()).toEqual({ delivered: 0, retried: 3, failed: 0 });
    // healthy again
    receiver.answer = () => 200;
    clock.advance(2_100);
    expect(await deliver()).toEqual({ delivered: 3, retried: 0, failed: 0 });
    clock.advance(60_000);
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });

    const log = await deliveries(webhookId);
    expect(log).toHaveLength(3);
    for (const delivery of log) {
      expect(delivery.status).toBe('delivered');
      expect(delivery.attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([
        [1, null],
        [2, 503],
        [3, 200],
      ]);
      expect(delivery.attemptLog[0]!.error).toBe('could not connect to the endpoint');
      expect(delivery.attemptLog[1]!.error).toBe('the endpoint answered 503');
    }
    // every message reached the receiver, each acknowledged once, all with the same id on every attempt
    const ok = receiver.received.filter((_, i) => i >= 3);
    expect(new Set(ok.map((r) => r.id))).toEqual(new Set(log.map((d) => d.id)));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.body.data.mailbox as { email: string }).map((m) => m.email))).toEqual(
      new Set(['a@hook-outage.test', 'b@hook-outage.test', 'c@hook-outage.test']),
    );
  });

  it('gives a delivery up after the last retry, and logs why', async () => {
    const webhookId = await register(['mailbox.error']);
    receiver.answer = () => 500;
    const mailbox = await insertMailbox(testApp.database.db, testApp.workspace.id, { email: 'z@hook-fail.test' });
    await applyMailboxEvent(testApp.database.db, mailbox.id, { type: 'stopped', lastError: 'x' }, { at: clock.now() });
    const outcomes = [];
    for (let i = 0; i < 4; i += 1) {
      outcomes.push(await deliver());
      clock.advance(5_000);
    }
    expect(outcomes.map((o) => o.failed)).toEqual([0, 0, 0, 1]);
    const [delivery] = await deliveries(webhookId);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 4, lastError: 'the endpoint answered 500' });
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
  });

  it('test-sends to one endpoint on demand, whatever it subscribes to', async () => {
    const webhookId = await register(['check.failed']);
    const sent = await testApp.workspace.request({ method: 'POST', url: `/api/webhooks/${webhookId}/test` });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.json()).toMatchObject({ delivery: { eventType: 'webhook.test', status: 'pending', attempts: 0 } });
    await deliver();
    expect(receiver.received.map((r) => [r.body.type, r.verified])).toEqual([['webhook.test', true]]);
  });

  it('sends the day before’s summary once a day, and a reputation drop once', async () => {
    const { db } = testApp.database;
    await register(['daily.summary', 'reputation.dropped']);
    const mailbox = await insertMailbox(db, testApp.workspace.id, { email: 'sum@hook-daily.test' });
    const today = clock.now().toISOString().slice(0, 10);
    const yesterday = new Date(clock.now().getTime() - 86_400_000).toISOString().slice(0, 10);
    await db
      .insertInto('daily_stats')
      .values({
        mailbox_id: mailbox.id,
        workspace_id: testApp.workspace.id,
        day: yesterday,
        sent: 5,
        inbox: 4,
        spam: 1,
        promoted_to_primary: 2,
        reputation: 80,
      })
      .execute();
    await db.updateTable('mailboxes').set({ reputation: 65 }).where('id', '=', mailbox.id).execute();
    await emitScheduledEvents(db, clock.now());
    await deliver();
    await emitScheduledEvents(db, clock.now());
    await deliver();
    const types = receiver.received.map((r) => r.body.type).sort();
    expect(types).toEqual(['daily.summary', 'reputation.dropped']);
    const summary = receiver.received.find((r) => r.body.type === 'daily.summary')!.body.data;
    expect(summary).toMatchObject({
      day: yesterday,
      totals: { sent: 5, inbox: 4, spam: 1, promotions: 0, promotedToPrimary: 2 },
    });
    const mailboxes = summary.mailboxes as Array<{ id: string }>;
    expect(mailboxes.find((m) => m.id === mailbox.id)).toMatchObject({ sent: 5, inbox: 4, promotedToPrimary: 2 });
    const drop = receiver.received.find((r) => r.body.type === 'reputation.dropped')!.body.data;
    expect(drop).toMatchObject({ reputation: 65, previous: 80, day: today });
  });
});

describe('webhook delivery across a worker killed mid-request', () => {
  let testApp: TestApp;
  const receiver = new Receiver();
  const workers: RunningProcess[] = [];

  beforeAll(async () => {
    testApp = await createTestApp({ mailPolicy: LOOPBACK_POLICY });
    await receiver.start();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await receiver.stop();
    await testApp.close();
  });

  function startWorker(): Promise<RunningProcess> {
    return startWarmup(
      ['worker', '--lease', '1500'],
      {
        ...testApp.database.env,
        WARMUP_SECRET_KEY: TEST_SECRET_KEY,
        WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      /warmup worker started/,
    ).then((worker) => {
      workers.push(worker);
      return worker;
    });
  }

  it('is finished by the next worker once the dead one’s claim expires: delivered, same id, not lost', async () => {
    const response = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: receiver.url, events: ['mailbox.error'] },
    });
    const { webhook, secret } = response.json() as { webhook: { id: string }; secret: string };
    receiver.secret = secret;
    // the first request is held: the worker is killed while it waits for the answer
    receiver.answer = (n) => (n === 1 ? 'hold' : 200);
    const mailbox = await insertMailbox(testApp.database.db, testApp.workspace.id, { email: 'k@hook-kill.test' });
    await applyMailboxEvent(testApp.database.db, mailbox.id, { type: 'stopped', lastError: 'x' }, { at: new Date() });

    const first = await startWorker();
    await waitFor('the first attempt to arrive', () => receiver.received.length >= 1 || undefined);
    first.child.kill('SIGKILL');
    await first.exited;
    const row = await testApp.database.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'pending', attempts: 0 });
    expect(row.lease_owner).not.toBeNull();

    const second = await startWorker();
    const delivered = await waitFor('the delivery to be finished', async () => {
      const current = await testApp.database.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      return current.status === 'delivered' ? current : undefined;
    });
    second.child.kill('SIGTERM');
    await second.exited;

    expect(delivered.attempts).toBe(1);
    expect(receiver.received.length).toBe(2);
    expect(receiver.received.map((r) => [r.id, r.body.type, r.verified])).toEqual([
      [row.id, 'mailbox.error', true],
      [row.id, 'mailbox.error', true],
    ]);
    const log = await testApp.workspace.request({ method: 'GET', url: `/api/webhooks/${webhook.id}/deliveries` });
    expect((log.json() as { deliveries: WebhookDelivery[] }).deliveries[0]!.attemptLog).toMatchObject([
      { attempt: 1, statusCode: 200 },
    ]);
  });
});

describe('check.failed from the daily checks, through a DNS server on loopback', () => {
  const DAY = 86_400_000;
  const clock = fixedClock('2026-03-02T08:00:00.000Z');
  let dns: TestDnsServer;
  let testApp: TestApp;
  const receiver = new Receiver();
  let deliver: () => Promise<unknown>;
  let checks: DailyChecksSettings;

  beforeAll(async () => {
    dns = await startDnsServer({
      'hooked.test': [
        { type: 'MX', exchange: 'mx.hooked.test', priority: 10 },
        { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' },
      ],
      '_dmarc.hooked.test': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
    });
    testApp = await createTestApp({ mailPolicy: LOOPBACK_POLICY, dnsServers: [dns.address] });
    await receiver.start();
    const deps = {
      db: testApp.database.db,
      dialect: testApp.database.dialect,
      clock,
      logger: silent,
      secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: testApp.database.dataDir }),
      policy: LOOPBACK_POLICY,
      workerId: 'test-checks',
      settings: { ...DEFAULT_WEBHOOK_SETTINGS, retryDelaysMs: [1_000, 2_000, 4_000] },
      random: () => 0,
    };
    deliver = () => deliverDueWebhooks(deps);
    checks = {
      resolve: createDnsResolver({ servers: [dns.address] }),
      pauseAfterMs: 0,
      blocklistZones: blocklistZones({ ipZones: ['bl.lists.test'], domainZones: ['dbl.spamhaus.org'] }),
    };
  });
  afterAll(async () => {
    await receiver.stop();
    await testApp?.close();
    await dns?.close();
  });

  /** The jobs' passes of one day (the checks, then the deliveries); what reached the receiver. */
  async function day(n: number) {
    clock.set(new Date(Date.parse('2026-03-02T08:00:00.000Z') + n * DAY));
    const before = receiver.received.length;
    const { db } = testApp.database;
    for (let i = 0; i < 3; i += 1) {
      const now = clock.now();
      await runDueChecks(db, checks, now, { afterCheck: (checked) => applyDnsPauseRule(db, checked, checks, now) });
      await deliver();
    }
    // (signed with the simulated day's timestamp: outside the verifier's tolerance of the real clock)
    return receiver.received.slice(before).map((r) => r.body);
  }

  it('tells of a new blocklist listing once, not each day it stays listed, and of a DNS check that starts failing', async () => {
    const response = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: receiver.url, events: ['check.failed'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    receiver.secret = (response.json() as { secret: string }).secret;
    const { db } = testApp.database;
    const mailbox = await insertMailbox(db, testApp.workspace.id, {
      email: 'hal@hooked.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    const headers = 'Received: from out.hooked.test (out.hooked.test [85.10.20.77]) by mx.peer.test\r\n';
    await noteSenderEvidence(db, mailbox.id, mailbox.workspace_id, headers, clock.now());

    // day 0: everything passes, nothing listed
    expect(await day(0)).toEqual([]);
    // day 1: the address is listed
    dns.zones['77.20.10.85.bl.lists.test'] = [{ type: 'A', address: '127.0.0.2' }];
    const listed = await day(1);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      type: 'check.failed',
      data: {
        mailbox: { id: mailbox.id, email: 'hal@hooked.test' },
        domain: 'hooked.test',
        check: 'blocklist',
        status: 'listed',
        zone: 'bl.lists.test',
        kind: 'ip',
        listed: '85.10.20.77',
        listedSince: clock.now().toISOString(),
        delistUrl: null,
      },
    });
    // days 2 and 3: still listed, nothing new; on day 3 DMARC goes from pass to fail, told once that day
    expect(await day(2)).toEqual([]);
    delete dns.zones['_dmarc.hooked.test'];
    const dmarc = await day(3);
    expect(dmarc.map((event) => [event.type, event.data.check, event.data.status])).toEqual([
      ['check.failed', 'dmarc', 'fail'],
    ]);
    dns.zones['_dmarc.hooked.test'] = [{ type: 'TXT', data: 'v=DMARC1; p=none' }];
    // day 4: delisted; day 5: listed anew, told again once
    delete dns.zones['77.20.10.85.bl.lists.test'];
    expect(await day(4)).toEqual([]);
    dns.zones['77.20.10.85.bl.lists.test'] = [{ type: 'A', address: '127.0.0.2' }];
    const again = await day(5);
    expect(again.map((event) => [event.data.check, event.data.listed, event.data.listedSince])).toEqual([
      ['blocklist', '85.10.20.77', clock.now().toISOString()],
    ]);
    expect(await day(6)).toEqual([]);
  });
});
