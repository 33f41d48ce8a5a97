// /metrics scraped the way Prometheus scrapes it, and parsed: the counters after real engine
// cycles on the local mail stack (a junk sender's mail filed into Junk), the database gauges
// after rows and leases written by hand, and the token that guards the route.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { createEngine, type CycleSummary } from '../jobs/job-list.js';
import { acquireLease } from '../jobs/leases.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { createStackMailbox, proveAll, testEngineDeps } from '../../test/helpers/engine.js';
import { insertMailbox, insertMessage, insertWorkspace } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { describeWithMailStack, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { freePort, startWarmup } from '../../test/helpers/processes.js';
import { TEST_SECRET_KEY } from '../../test/helpers/test-app.js';
import type { Metrics } from './metrics.js';

const TOKEN = 'metrics-token-0123456789abcdef';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The text exposition format, line by line: `# HELP`/`# TYPE` comments, then `name{a="b",…} value`. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted),
  )?.value;
}

function sum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted))
    .reduce((total, s) => total + s.value, 0);
}

async function scrape(testApp: TestApp): Promise<Sample[]> {
  const response = await testApp.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(response.body);
}

describe('GET /metrics', () => {
  let testApp: TestApp;
  let metrics: Metrics;

  beforeAll(async () => {
    testApp = await createTestApp({ metricsToken: TOKEN });
    metrics = testApp.metrics;
  });
  afterAll(() => testApp.close());

  it('answers only with the metrics token: no token and a workspace API key are both 401', async () => {
    expect((await testApp.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    const withApiKey = await testApp.workspace.request({ method: 'GET', url: '/metrics' });
    expect(withApiKey.statusCode).toBe(401);
    expect(withApiKey.headers['content-type']).toMatch(/problem\+json/);
    expect(withApiKey.body).not.toContain(TOKEN);
  });

  it('does not exist without a token setting', async () => {
    const app = await buildApp({
      services: testApp.services,
      rateLimit: 0,
      healthCheck: async () => {},
      metrics,
    });
    const response = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.statusCode).toBe(404);
    await app.close();
  });

  it('reads the backlog, the held claims and the mailboxes by status from the database', async () => {
    const { db } = testApp.database;
    const workspaceId = await insertWorkspace(db, 'gauges');
    const ann = await insertMailbox(db, workspaceId, { email: 'ann@gauge-one.test' });
    const bob = await insertMailbox(db, workspaceId, { email: 'bob@gauge-two.test', status: 'paused' });
    const now = Date.now();
    for (const minutesAgo of [1, 2, 3]) {
      await insertMessage(db, { sender: ann, recipient: bob, dueAt: new Date(now - minutesAgo * 60_000) });
    }
    // planned for later: not due yet
    await insertMessage(db, { sender: ann, recipient: bob, dueAt: new Date(now + 3_600_000) });
    // one due send claimed by a worker: held, and no longer backlog
    const claimed = await insertMessage(db, { sender: bob, recipient: ann, dueAt: new Date(now - 60_000) });
    await db
      .updateTable('warmup_messages')
      .set({ lease_owner: 'w1', lease_expires_at: new Date(now + 60_000).toISOString() })
      .where('id', '=', claimed.id)
      .execute();
    await acquireLease(db, 'plan', 'w1', 60_000, new Date(now));
    await acquireLease(db, 'sync:expired', 'w2', 1, new Date(now - 60_000));
    // a mailbox stopped with a webhook registered: one delivery pending in the outbox
    const hook = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'https://hooks.example.com/warmup', events: ['mailbox.error'] },
    });
    expect(hook.statusCode).toBe(201);
    const cy = await insertMailbox(db, testApp.workspace.id, { email: 'cy@gauge-three.test' });
    await applyMailboxEvent(db, cy.id, { type: 'stopped', lastError: 'login refused' }, { at: new Date(now) });

    const samples = await scrape(testApp);
    // the claimed row is still `planned` and due: the backlog counts rows no worker finished
    expect(value(samples, 'warmup_due_messages')).toBe(4);
    expect(value(samples, 'warmup_leases_held', { kind: 'named' })).toBe(1);
    expect(value(samples, 'warmup_leases_held', { kind: 'message' })).toBe(1);
    expect(value(samples, 'warmup_leases_held', { kind: 'sync' })).toBe(0);
    expect(value(samples, 'warmup_mailboxes', { status: 'active' })).toBe(1);
    expect(value(samples, 'warmup_mailboxes', { status: 'paused' })).toBe(1);
    expect(value(samples, 'warmup_mailboxes', { status: 'error' })).toBe(1);
    expect(value(samples, 'warmup_webhook_deliveries', { status: 'pending' })).toBe(1);
    expect(value(samples, 'warmup_webhook_deliveries', { status: 'failed' })).toBe(0);
    // no peer yet: every state is there, at 0
    for (const state of ['pending', 'active', 'paused', 'removed'])
      expect(value(samples, 'warmup_peers', { state })).toBe(0);
    // the process's own metrics come along
    expect(value(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  it('counts the peers by state, and the pending peers greeted again by outcome', async () => {
    const { db } = testApp.database;
    const at = new Date().toISOString();
    const states = ['pending', 'active', 'active', 'removed'] as const;
    await db
      .insertInto('peers')
      .values(
        states.map((state, i) => ({
          id: `peer_metrics_${i}`,
          url: `https://peer${i}.example`,
          public_key: String(i).repeat(43),
          state,
          offer_domains: '[]',
          offer_mailboxes: 0,
          daily_ceiling: 0,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
    testApp.metrics.observeCycle({
      at,
      workerId: 'w-metrics',
      ignoreSchedule: false,
      loop: 'hourly',
      errors: [],
      stopped: false,
      durationMs: 5,
      peerHandshakes: { greeted: 3, activated: 1 },
      peerExchange: { ran: true, peers: 2, announced: 7, reported: 5, failed: 1 },
    });
    // a peer's address kept here as a partner is not one of the installation's mailboxes
    const pausedBefore = value(await scrape(testApp), 'warmup_mailboxes', { status: 'paused' }) ?? 0;
    const standIn = await insertMailbox(db, testApp.workspace.id, { email: 'pia@peer-gauge.test', status: 'paused' });
    await db.updateTable('mailboxes').set({ peer_id: 'peer_gauge' }).where('id', '=', standIn.id).execute();
    try {
      const samples = await scrape(testApp);
      expect(value(samples, 'warmup_mailboxes', { status: 'paused' }) ?? 0).toBe(pausedBefore);
      expect(value(samples, 'warmup_peer_mail_total', { kind: 'announced' })).toBe(7);
      expect(value(samples, 'warmup_peer_mail_total', { kind: 'reported' })).toBe(5);
      expect(value(samples, 'warmup_peer_mail_total', { kind: 'failed' })).toBe(1);
      expect(value(samples, 'warmup_peers', { state: 'pending' })).toBe(1);
      expect(value(samples, 'warmup_peers', { state: 'active' })).toBe(2);
      expect(value(samples, 'warmup_peers', { state: 'paused' })).toBe(0);
      expect(value(samples, 'warmup_peers', { state: 'removed' })).toBe(1);
      expect(value(samples, 'warmup_peer_handshakes_total', { outcome: 'active' })).toBe(1);
      expect(value(samples, 'warmup_peer_handshakes_total', { outcome: 'pending' })).toBe(2);
    } finally {
      await db.deleteFrom('peers').execute();
      await db.deleteFrom('mailboxes').where('id', '=', standIn.id).execute();
    }
  });

  it('times requests by route pattern, never by raw URL', async () => {
    await testApp.workspace.request({ method: 'GET', url: '/api/mailboxes/mbx_nothere' });
    await testApp.workspace.request({ method: 'GET', url: '/api/templates?limit=1' });
    const samples = await scrape(testApp);
    const count = (route: string, status: string) =>
      value(samples, 'warmup_http_request_duration_seconds_count', { route, status_code: status, method: 'GET' });
    expect(count('/api/mailboxes/:id', '404')).toBe(1);
    expect(count('/api/templates', '200')).toBe(1);
    expect(samples.some((s) => Object.values(s.labels).some((label) => label.includes('mbx_nothere')))).toBe(false);
  });
});

describeWithMailStack('GET /metrics after engine cycles on the mail stack', () => {
  const stack = requireMailStack();
  const [mona, max, mike] = MAIL_USERS.deliverability;
  let testApp: TestApp;
  const summaries: CycleSummary[] = [];

  beforeAll(async () => {
    testApp = await createTestApp({ metricsToken: TOKEN });
    const warmup = { startVolume: 2, rampUpIncrement: 0, dailyLimit: 2, replyRate: 0, timezone: 'UTC' };
    for (const user of [mona!, max!, mike!]) await createStackMailbox(testApp.workspace, stack, user, { warmup });
    await proveAll(testApp.database.db);
    const metrics = testApp.metrics;
    const engine = createEngine(testEngineDeps(testApp), {
      onStep: metrics.observeStep,
      onCycle: metrics.observeCycle,
    });
    // send, then sync until every sent message was found (the stack delivers in milliseconds)
    for (let i = 0; i < 10; i += 1) {
      summaries.push(await engine.runCycle({ ignoreSchedule: true }));
      const pending = await testApp.database.db
        .selectFrom('warmup_messages')
        .select('id')
        .where('status', 'in', ['planned', 'sent'])
        .where('found_at', 'is', null)
        .execute();
      if (pending.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await engine.stop();
  });
  afterAll(() => testApp.close());

  it('counts what the cycles did: planned, sent, found, and where the mail landed today', async () => {
    const samples = await scrape(testApp);
    const planned = summaries.reduce((n, s) => n + (s.plan?.messages ?? 0), 0);
    const sent = summaries.reduce((n, s) => n + (s.send?.sent ?? 0) + (s.replies?.sent ?? 0), 0);
    const received = summaries.reduce((n, s) => n + (s.sync?.received ?? 0), 0);
    const { db } = testApp.database;
    const mikeId = (
      await db.selectFrom('mailboxes').select('id').where('email', '=', mike!.email).executeTakeFirstOrThrow()
    ).id;
    const fromJunkSender = (
      await db.selectFrom('warmup_messages').select('id').where('sender_mailbox_id', '=', mikeId).execute()
    ).length;
    expect(planned).toBeGreaterThanOrEqual(3);
    expect(fromJunkSender).toBeGreaterThan(0);
    expect(sent).toBe(planned);
    expect(received).toBe(sent);
    expect(value(samples, 'warmup_emails_planned_total')).toBe(planned);
    expect(value(samples, 'warmup_emails_sent_total')).toBe(sent);
    expect(value(samples, 'warmup_emails_found_total', { outcome: 'received' })).toBe(received);
    // the junk sender's messages were filed into Junk (and rescued), everyone else's into the inbox
    expect(value(samples, 'warmup_emails_found_total', { outcome: 'rescued_from_spam' })).toBe(fromJunkSender);
    expect(value(samples, 'warmup_emails_today', { outcome: 'sent' })).toBe(sent);
    expect(value(samples, 'warmup_emails_today', { outcome: 'spam' })).toBe(fromJunkSender);
    expect(value(samples, 'warmup_emails_today', { outcome: 'inbox' })).toBe(sent - fromJunkSender);
    expect(sum(samples, 'warmup_engine_errors_total')).toBe(0);
    expect(value(samples, 'warmup_due_messages')).toBe(0);
  });

  it('times every cycle and every step of it', async () => {
    const samples = await scrape(testApp);
    expect(value(samples, 'warmup_engine_cycle_duration_seconds_count')).toBe(summaries.length);
    for (const step of ['prove', 'plan', 'send', 'sync', 'replies', 'reputation', 'health', 'rollup']) {
      expect(value(samples, 'warmup_engine_step_duration_seconds_count', { step, result: 'ok' }), step).toBe(
        summaries.length,
      );
    }
    expect(value(samples, 'warmup_engine_step_duration_seconds_sum', { step: 'send', result: 'ok' })).toBeGreaterThan(
      0,
    );
  });

  it('has every series the sample Grafana dashboard in docs/ queries', async () => {
    const names = new Set((await scrape(testApp)).map((s) => s.name));
    const dashboard = JSON.parse(
      readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'),
    ) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const queried = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) =>
        [...target.expr.matchAll(/\b((?:warmup|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!),
      ),
    );
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.filter((name) => !names.has(name))).toEqual([]);
  });
});

describe('GET /metrics of a worker process (WARMUP_METRICS_PORT)', () => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp();
  });
  afterAll(() => testApp.close());

  it('serves its engine cycles behind the token on its own port', async () => {
    const port = await freePort();
    const worker = await startWarmup(
      ['worker', '--interval', '200'],
      {
        ...testApp.database.env,
        WARMUP_SECRET_KEY: TEST_SECRET_KEY,
        WARMUP_METRICS_TOKEN: TOKEN,
        WARMUP_METRICS_PORT: String(port),
        LOG_LEVEL: 'info',
      },
      /warmup worker started/,
    );
    try {
      const url = `http://127.0.0.1:${port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
      let cycles = 0;
      for (let i = 0; i < 100 && cycles < 2; i += 1) {
        const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(response.status).toBe(200);
        cycles = value(parseExposition(await response.text()), 'warmup_engine_cycle_duration_seconds_count') ?? 0;
        if (cycles < 2) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(cycles).toBeGreaterThanOrEqual(2);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  });
});
