// Cron mode as a user runs it: `warmup serve --no-engine` for the API, and `warmup run-once` as a
// separate process against the same database (SQLite here, PostgreSQL with WARMUP_TEST_DB=postgres).
// The API process runs no job; one run-once runs every job once: the daily DNS checks (and the
// DNS pause rule on them) and webhook delivery included, signed, to a local receiver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { insertMailbox } from '../helpers/engine-fixtures.js';
import { freePort, runWarmup, startWarmup, type RunningProcess } from '../helpers/processes.js';
import { TEST_SECRET_KEY } from '../helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const API_KEY = 'bootstrap-key-for-cron-mode-0123456789abcdef';
const SPF_OK = { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' } as const;

interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
  verified: boolean;
}

let database: TestDatabase;
let dns: TestDnsServer;
let server: RunningProcess | undefined;
let receiver: http.Server;
let secret = '';
const received: Received[] = [];
let baseUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  dns = await startDnsServer({
    'fixed.test': [{ type: 'MX', exchange: 'mx.fixed.test', priority: 10 }, SPF_OK],
    '_dmarc.fixed.test': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
    // SPF passes, DMARC is missing
    'nodmarc.test': [{ type: 'MX', exchange: 'mx.nodmarc.test', priority: 10 }, SPF_OK],
  });
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      let verified = false;
      try {
        new Webhook(secret).verify(body, request.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      const { type, data } = JSON.parse(body) as { type: string; data: Record<string, unknown> };
      received.push({ id: String(request.headers['webhook-id']), type, data, verified });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    DATABASE_URL: '',
    ...database.env,
    PORT: String(port),
    WARMUP_SECRET_KEY: TEST_SECRET_KEY,
    WARMUP_API_KEY: API_KEY,
    // the receiver listens on loopback, which webhook endpoints may reach only when allowed
    WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1',
    WARMUP_DNS_SERVERS: dns.address,
    LOG_LEVEL: 'info',
  };
  server = await startWarmup(['serve', '--no-engine'], env, /Warmup is serving/);
}, 60_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await new Promise((resolve) => receiver?.close(resolve));
  await dns?.close();
  await database?.close();
});

async function api<T>(method: string, path: string, payload?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
    body: payload ? JSON.stringify(payload) : undefined,
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** A mailbox the DNS rule keeps paused: no engine step touches it, only the daily checks look at it. */
async function pausedByDnsRule(email: string): Promise<string> {
  const mailbox = await insertMailbox(database.db, 'ws_default', { email, status: 'paused' });
  await database.db.updateTable('mailboxes').set({ paused_for: 'dns' }).where('id', '=', mailbox.id).execute();
  return mailbox.id;
}

async function statusOf(id: string) {
  return database.db
    .selectFrom('mailboxes')
    .select(['status', 'paused_for'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('cron mode: serve --no-engine, and run-once from cron', () => {
  it('delivers a webhook test event, signed, and runs the daily DNS checks and their rule, in run-once and only there', async () => {
    const hook = await api<{ webhook: { id: string }; secret: string }>('POST', '/api/webhooks', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['check.failed'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    secret = hook.body.secret;
    const webhookId = hook.body.webhook.id;
    const fixed = await pausedByDnsRule('ops@fixed.test');
    const broken = await pausedByDnsRule('ops@nodmarc.test');

    const sent = await api<{ delivery: { id: string } }>('POST', `/api/webhooks/${webhookId}/test`);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body.delivery).toMatchObject({ eventType: 'webhook.test', status: 'pending' });

    // the API process runs no job: nothing is delivered, nothing checked, however long it runs
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(received).toEqual([]);
    expect(await database.db.selectFrom('mailbox_checks').select('mailbox_id').execute()).toEqual([]);
    expect(await statusOf(fixed)).toEqual({ status: 'paused', paused_for: 'dns' });

    const run = await runWarmup(['run-once'], env);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      loop: 'all',
      checks: { checked: 2, failing: 1 },
      webhooks: { delivered: 2, retried: 0, failed: 0 },
      errors: [],
    });

    // delivered, signed with the endpoint's secret: the test event and the failing DMARC
    expect(received.map((r) => [r.type, r.verified]).sort()).toEqual([
      ['check.failed', true],
      ['webhook.test', true],
    ]);
    expect(received.find((r) => r.type === 'webhook.test')!.id).toBe(sent.body.delivery.id);
    expect(received.find((r) => r.type === 'check.failed')!.data).toMatchObject({
      mailbox: { id: broken, email: 'ops@nodmarc.test' },
      check: 'dmarc',
      status: 'fail',
    });
    const log = await api<{ deliveries: Array<{ status: string }> }>('GET', `/api/webhooks/${webhookId}/deliveries`);
    expect(log.body.deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered']);

    // the checks ran and were kept, and the DNS rule resumed the mailbox whose SPF and DMARC pass
    const checks = await database.db
      .selectFrom('mailbox_checks')
      .select(['mailbox_id', 'check', 'status'])
      .where('check', 'in', ['spf', 'dmarc'])
      .execute();
    const named = (row: { mailbox_id: string; check: string; status: string }) =>
      `${row.mailbox_id === fixed ? 'fixed' : 'broken'} ${row.check} ${row.status}`;
    expect(checks.map(named).sort()).toEqual([
      'broken dmarc fail',
      'broken spf pass',
      'fixed dmarc pass',
      'fixed spf pass',
    ]);
    expect(await statusOf(fixed)).toEqual({ status: 'active', paused_for: null });
    expect(await statusOf(broken)).toEqual({ status: 'paused', paused_for: 'dns' });
  }, 120_000);
});
