// Prometheus metrics of one process. Counters and histograms describe what this process did (its
// engine cycles, its HTTP requests); the gauges read the database at scrape time, so they describe
// the whole installation whichever replica is scraped. No label names a mailbox or a workspace:
// the series stay few however many tenants there are.
import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { utcDay } from '../calendar.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { PeerState } from '../db/schema-peers.js';
import { ENGINE_LOOP, type CycleSummary } from '../jobs/job-list.js';
import {
  TODAY_COUNT_COLUMNS,
  countClaimedMessages,
  countDueMessages,
  countClaimedSyncs,
  countHeldLeases,
  countMailboxesByStatus,
  countPeersByState,
  countWebhookDeliveries,
  sumTodayCounts,
} from './metrics.repository.js';

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

const PEER_STATES: readonly PeerState[] = ['pending', 'active', 'paused', 'removed'];

/** Engine cycles take seconds to minutes; steps from milliseconds (nothing to do) to minutes (a slow IMAP server). */
const ENGINE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Metrics {
  readonly registry: Registry;
  /** Counts what one pass over the job list did, from its summary; times the engine cycles among them. */
  observeCycle(summary: CycleSummary): void;
  /** How long one job (an engine step, webhook delivery, the checks…) took, and whether it threw. */
  observeStep(step: string, durationMs: number, failed: boolean): void;
  /** One answered HTTP request; `route` is the route's pattern (`/api/mailboxes/:id`), never the raw URL. */
  observeRequest(method: string, route: string, statusCode: number, durationMs: number): void;
  /** The exposition text. */
  render(): Promise<string>;
}

export function createMetrics(deps: { db: Kysely<Database>; clock: Clock }): Metrics {
  const { db, clock } = deps;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const nowIso = () => clock.now().toISOString();

  const planned = new Counter({
    name: 'warmup_emails_planned_total',
    help: 'Warmup emails planned by this process',
    registers: [registry],
  });
  const sent = new Counter({
    name: 'warmup_emails_sent_total',
    help: 'Warmup emails (new threads and replies) sent by this process',
    registers: [registry],
  });
  const found = new Counter({
    name: 'warmup_emails_found_total',
    help: 'Warmup emails found by their receivers in this process, by what happened to them',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'warmup_engine_errors_total',
    help: 'Engine failures by kind: a step that threw, a send given up or retried, a mailbox sync that failed, a mailbox put into error',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const handshakes = new Counter({
    name: 'warmup_peer_handshakes_total',
    help: 'Pending peers greeted again with a signed hello by this process, by outcome: turned `active`, or still `pending`',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const peerMail = new Counter({
    name: 'warmup_peer_mail_total',
    help: "Mail between peers handled by this process's peerExchange passes: our messages a peer accepted the announcement of (`announced`), outcomes of a peer's mail reported to it (`reported`), and peers that could not be reached or refused (`failed`)",
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const cycles = new Histogram({
    name: 'warmup_engine_cycle_duration_seconds',
    help: 'Duration of whole engine cycles in this process',
    buckets: ENGINE_BUCKETS,
    registers: [registry],
  });
  const steps = new Histogram({
    name: 'warmup_engine_step_duration_seconds',
    help: 'Duration of the jobs of this process: the engine steps, webhook delivery, scheduled events, daily checks',
    labelNames: ['step', 'result'] as const,
    buckets: ENGINE_BUCKETS,
    registers: [registry],
  });
  const requests = new Histogram({
    name: 'warmup_http_request_duration_seconds',
    help: 'HTTP requests answered by this process',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });

  new Gauge({
    name: 'warmup_emails_today',
    help: 'Warmup emails of the whole installation today (UTC), from the daily rollups: sent, where they were found, bounced, failed, lost',
    labelNames: ['outcome'] as const,
    registers: [registry],
    async collect() {
      const counts = await sumTodayCounts(db, utcDay(clock.now()));
      for (const column of TODAY_COUNT_COLUMNS) this.set({ outcome: column }, counts[column]);
    },
  });
  new Gauge({
    name: 'warmup_due_messages',
    help: 'Planned sends that are due and not claimed by any worker: the engine backlog of the whole installation',
    registers: [registry],
    async collect() {
      this.set(await countDueMessages(db, nowIso()));
    },
  });
  new Gauge({
    name: 'warmup_leases_held',
    help: 'Claims held right now by the workers of the installation: named leases (planning, a sender), mailboxes claimed for a sync, and claimed sends',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      const now = nowIso();
      const [named, syncs, messages] = await Promise.all([
        countHeldLeases(db, now),
        countClaimedSyncs(db, now),
        countClaimedMessages(db, now),
      ]);
      this.set({ kind: 'named' }, named);
      this.set({ kind: 'sync' }, syncs);
      this.set({ kind: 'message' }, messages);
    },
  });
  new Gauge({
    name: 'warmup_mailboxes',
    help: 'Mailboxes of the whole installation by status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { status, count } of await countMailboxesByStatus(db)) this.set({ status }, count);
    },
  });

  new Gauge({
    name: 'warmup_webhook_deliveries',
    help: 'Webhook deliveries of the whole installation still pending (retrying) or given up as failed (kept 30 days)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.set({ status: 'pending' }, 0);
      this.set({ status: 'failed' }, 0);
      for (const { status, count } of await countWebhookDeliveries(db)) this.set({ status }, count);
    },
  });

  new Gauge({
    name: 'warmup_peers',
    help: 'Installations this one peers with, by state',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      for (const state of PEER_STATES) this.set({ state }, 0);
      for (const { state, count } of await countPeersByState(db)) this.set({ state }, count);
    },
  });

  return {
    registry,
    observeCycle(summary) {
      // the passes of the other cadences (webhook delivery every few seconds) are not engine cycles
      if (summary.loop === ENGINE_LOOP || summary.loop === 'all') cycles.observe(summary.durationMs / 1000);
      planned.inc(summary.plan?.messages ?? 0);
      for (const send of [summary.send, summary.replies]) {
        if (!send) continue;
        sent.inc(send.sent);
        found.inc({ outcome: 'bounced' }, send.bounced);
        errors.inc({ kind: 'send_failed' }, send.failed);
        errors.inc({ kind: 'send_retried' }, send.retried);
        errors.inc({ kind: 'mailbox_error' }, send.mailboxErrors.length);
      }
      const sync = summary.sync;
      if (sync) {
        found.inc({ outcome: 'received' }, sync.received);
        found.inc({ outcome: 'rescued_from_spam' }, sync.rescued);
        found.inc({ outcome: 'moved_to_primary' }, sync.promoted);
        found.inc({ outcome: 'bounced' }, sync.bounced);
        found.inc({ outcome: 'lost' }, sync.lost);
        errors.inc({ kind: 'sync_failed' }, sync.failed);
        errors.inc({ kind: 'mailbox_error' }, sync.mailboxErrors.length);
      }
      errors.inc({ kind: 'mailbox_error' }, summary.health?.stopped.length ?? 0);
      errors.inc({ kind: 'step_failed' }, summary.errors.length);
      const exchanged = summary.peerExchange;
      if (exchanged) {
        peerMail.inc({ kind: 'announced' }, exchanged.announced);
        peerMail.inc({ kind: 'reported' }, exchanged.reported);
        peerMail.inc({ kind: 'failed' }, exchanged.failed);
      }
      const greeted = summary.peerHandshakes;
      if (greeted) {
        handshakes.inc({ outcome: 'active' }, greeted.activated);
        handshakes.inc({ outcome: 'pending' }, greeted.greeted - greeted.activated);
      }
    },
    observeStep(step, durationMs, failed) {
      steps.observe({ step, result: failed ? 'error' : 'ok' }, durationMs / 1000);
    },
    observeRequest(method, route, statusCode, durationMs) {
      requests.observe({ method, route, status_code: String(statusCode) }, durationMs / 1000);
    },
    render: () => registry.metrics(),
  };
}
