// The one list of background work. Every job the installation runs is an entry here — its name,
// how often it runs, its lease and the function it runs — and `serve`, `worker` and `run-once` all
// run this list (job-runner.ts): `run-once` is one pass over every entry, the long-running
// processes run each cadence on a timer. The engine's steps keep their order (prove before plan
// before send before sync …): later steps read what the earlier ones wrote in the same pass.
//
// This file sits above what it lists (engine/, webhooks/, checks/, mailboxes/'s DNS pause rule);
// nothing below imports it. The runtime beside it (job-runner.ts, scheduler.ts, leases.ts,
// concurrency.ts) sits below all of them.
import type { DailyChecksSummary, DailyChecksSettings } from '../checks/daily-checks.js';
import { runDueChecks } from '../checks/daily-checks.js';
import type { EngineDeps } from '../engine/engine-deps.js';
import { proveDueMailboxes, type ProofSummary } from '../engine/proofs.js';
import { applyHealthGuard, type HealthSummary } from '../engine/health.js';
import { releaseSyncClaims } from '../engine/mailbox-engine-state.repository.js';
import { runPlacementTests, type PlacementSummary } from '../engine/placement-runner.js';
import { planDay, type PlanSummary } from '../engine/planner.js';
import { syncMailboxes, type SyncSummary } from '../engine/reader.js';
import { detectFilteringReceivers, type FilteringSummary } from '../engine/receiver-filtering.js';
import { updateReputation, type ReputationSummary } from '../engine/reputation.js';
import { FOLD_LEASE_KEY, foldStatistics, type RollupSummary } from '../engine/rollup.js';
import { sendDueMessages, type SendSummary } from '../engine/sender.js';
import { releaseAllMessageLeases } from '../engine/warmup-message-claims.repository.js';
import type { MailPolicy } from '../mail/policy.js';
import { applyDnsPauseRule } from '../mailboxes/dns-pause-rule.js';
import { readDmarcReports, type DmarcSummary } from '../dmarc/dmarc-reader.js';
import { nameDmarcSources, type SourceNamesSummary } from '../dmarc/source-names.js';
import { fetchProviderFeeds, type FeedJobDeps, type FeedsSummary } from '../feeds/feeds-job.js';
import { removeExpiredOAuthRows } from '../oauth/oauth-retention.js';
import {
  deliverDueWebhooks,
  removeExpiredEvents,
  type DeliverySummary,
  type WebhookSettings,
} from '../webhooks/webhook-delivery.js';
import { emitScheduledEvents, type ScheduledEventsSummary } from '../webhooks/webhook-events.js';
import type { AlertMailer } from '../alerts/alert-mail.js';
import { releaseDeliveryClaims } from '../webhooks/webhooks.repository.js';
import type { PeerExchangeSummary } from '../peers/peer-mail.js';
import type { PeerHandshakeSummary } from '../peers/peers.service.js';
import { createJobRunner, type Cadence, type Job, type PassHeader, type PassOptions } from './job-runner.js';

/** Often enough that sends leave within a couple of minutes of their time; the reader paces IMAP itself. */
export const DEFAULT_CYCLE_INTERVAL_MS = 120_000;
/** The daily work (scheduled events, DNS checks) is looked at this often: each is done once a day. */
const DAILY_WORK_INTERVAL_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Providers send aggregate reports once a day; a quarter of an hour shows one soon after it arrives. */
const DMARC_INTERVAL_MS = 15 * 60_000;
/** How long the lease of a daily job holds when its worker died holding it. */
const DAILY_LEASE_MS = 10 * 60_000;

/** The name of the engine's cadence: its passes are the engine cycles of the logs and the metrics. */
export const ENGINE_LOOP = 'engine';

/**
 * What a cycle says of its planning: how many mailboxes, not which. The cycle is logged and printed
 * whole, and the list of a day of 100,000 mailboxes is a log line of megabytes.
 */
export interface CyclePlanSummary extends Omit<PlanSummary, 'mailboxes'> {
  /** Mailboxes planned this cycle. */
  mailboxes: number;
}

/** Each job's result, under its name. */
export interface JobResults {
  /** Mailboxes whose round trip ran: proven (they join the pool) or failed. */
  prove: ProofSummary;
  plan: CyclePlanSummary;
  send: SendSummary;
  sync: SyncSummary;
  /** The second send of an ignore-schedule pass: the replies planned during sync. */
  replies: SendSummary;
  /** Placement tests of users' own copy: copies sent, found, given up. */
  placement: PlacementSummary;
  /** Receivers found filing most senders' mail into spam (the culprit rule), before the senders are judged. */
  filtering: FilteringSummary;
  reputation: ReputationSummary;
  /** The providers' feeds (SNDS, Postmaster Tools) fetched for the day, before the health guard judges them. */
  feeds: FeedsSummary;
  health: HealthSummary;
  /** Finished days folded into the statistics' workspace rollup, then raw rows past the retention removed. */
  rollup: RollupSummary;
  /** `daily.summary` and `reputation.dropped` events queued. */
  events: ScheduledEventsSummary;
  /** The daily DNS and blocklist checks (with the DNS pause rule and their `check.failed` events). */
  checks: DailyChecksSummary;
  /** Webhook deliveries attempted from the outbox. */
  webhooks: DeliverySummary;
  /** Webhook events past their retention removed. */
  webhookRetention: { ran: true };
  /** Expired OAuth consents and unconfirmed connections removed. */
  oauthRetention: { removed: number };
  /** DMARC aggregate reports read from each workspace's report folder: kept, set aside, left. */
  dmarc: DmarcSummary;
  /** The reverse names of the addresses new DMARC reports name as sources, asked after the reports are kept. */
  dmarcNames: SourceNamesSummary;
  /** Pending peers greeted again with a signed hello: how many, and how many turned active. */
  peerHandshakes: PeerHandshakeSummary;
  /** Offers fetched, our mail to peers announced and their mail's outcomes reported. */
  peerExchange: PeerExchangeSummary;
}

export type JobName = keyof JobResults;

/**
 * One pass over the list (an engine cycle, a pass of another cadence, or run-once's pass over
 * every job). A job's entry is null when it did not run in the pass (another worker held its
 * lease, it does not apply, a job before it stopped the pass, or it threw), and absent when the
 * pass does not include it (another cadence's job, or a part this process does not run).
 */
export type CycleSummary = PassHeader & { [K in JobName]?: JobResults[K] | null };

export interface JobParts {
  engine: EngineDeps;
  /** The webhook outbox: scheduled events and deliveries (absent: neither runs). */
  webhooks?: { secretKey: Buffer; policy: MailPolicy; settings: WebhookSettings; alertMailer?: AlertMailer };
  /** The daily DNS and blocklist checks and the DNS pause rule (absent: they do not run). */
  checks?: DailyChecksSettings;
  /** The providers' feeds: where they are fetched from and how (absent: they are not fetched). */
  feeds?: Omit<FeedJobDeps, 'db'>;
  /** Peering: pending peers greeted again (absent: the job does not run). */
  peers?: { greetPending(): Promise<PeerHandshakeSummary> };
  /** Mail between peers: offers, announcements and evidence exchanged (absent: the job does not run). */
  peerMail?: { exchange(): Promise<PeerExchangeSummary> };
}

export interface CadenceOptions {
  /** Pause between engine cycles (default 2 min). */
  intervalMs?: number;
  /** ± fraction of the interval (default 0.2). */
  jitter?: number;
}

type Entry<K extends JobName> = Job<JobResults[K]> & { name: K };

/** The list, in the order a pass runs it. */
export function createJobList(parts: JobParts, options: CadenceOptions = {}): Job[] {
  const deps = parts.engine;
  const jitter = options.jitter ?? 0.2;
  const engine: Cadence = { name: ENGINE_LOOP, intervalMs: options.intervalMs ?? DEFAULT_CYCLE_INTERVAL_MS, jitter };
  const daily: Cadence = { name: 'daily', intervalMs: DAILY_WORK_INTERVAL_MS, jitter };
  const hourly: Cadence = { name: 'hourly', intervalMs: HOUR_MS, jitter };

  const jobs: Array<Entry<JobName>> = [];
  const add = <K extends JobName>(entry: Entry<K>) => jobs.push(entry as unknown as Entry<JobName>);

  add({ name: 'prove', every: engine, run: ({ now }) => proveDueMailboxes(deps, now()) });
  add({
    name: 'plan',
    every: engine,
    run: async ({ now, ignoreSchedule }) => {
      const { mailboxes, ...planned } = await planDay(deps, now(), { ignoreSchedule });
      return { ...planned, mailboxes: mailboxes.length };
    },
  });
  const { peerMail } = parts;
  if (peerMail) {
    // between planning and sending: mail to a peer leaves only once the peer accepted its announcement
    add({
      name: 'peerExchange',
      every: engine,
      // one worker talks to the peers: two would announce the same mail twice (harmless, but wasted)
      lease: { key: 'peer-exchange', ttlMs: deps.settings.leaseMs },
      run: () => peerMail.exchange(),
    });
  }
  add({
    name: 'send',
    every: engine,
    run: ({ now, ignoreSchedule, signal }) => sendDueMessages(deps, { now: now(), ignoreSchedule, signal }),
    release: (workerId) => releaseAllMessageLeases(deps.db, workerId),
  });
  add({
    name: 'sync',
    every: engine,
    run: ({ now, ignoreSchedule, signal }) => syncMailboxes(deps, { now: now(), ignoreSchedule, signal }),
    release: (workerId) => releaseSyncClaims(deps.db, workerId),
  });
  add({
    name: 'replies',
    every: engine,
    runsIf: ({ ignoreSchedule }) => ignoreSchedule,
    run: ({ now, ignoreSchedule, signal }) => sendDueMessages(deps, { now: now(), ignoreSchedule, signal }),
    release: (workerId) => releaseAllMessageLeases(deps.db, workerId),
  });
  add({
    name: 'placement',
    every: engine,
    run: ({ now, ignoreSchedule, signal }) => runPlacementTests(deps, { now: now(), ignoreSchedule, signal }),
  });
  add({
    name: 'filtering',
    // a read of the whole pool's week: an hour's new placements barely move it, so once an hour, one worker
    every: hourly,
    lease: { key: 'receiver-filtering', ttlMs: DAILY_LEASE_MS },
    run: ({ now }) => detectFilteringReceivers(deps.db, now()),
  });
  add({
    name: 'reputation',
    every: engine,
    run: ({ now, ignoreSchedule }) => updateReputation(deps, now(), { ignoreSchedule }),
  });
  if (parts.feeds) {
    const feedDeps = { ...parts.feeds, db: deps.db };
    add({
      name: 'feeds',
      // looked at hourly, each connection fetched once a UTC day (a failed fetch is tried again next hour)
      every: hourly,
      lease: { key: 'provider-feeds', ttlMs: DAILY_LEASE_MS },
      run: ({ now, signal }) => fetchProviderFeeds(feedDeps, { now: now(), signal }),
    });
  }
  add({
    name: 'health',
    every: engine,
    run: ({ now, ignoreSchedule }) => applyHealthGuard(deps, now(), { ignoreSchedule }),
  });
  add({
    name: 'rollup',
    every: engine,
    lease: { key: FOLD_LEASE_KEY, ttlMs: deps.settings.leaseMs },
    run: ({ now }) => foldStatistics(deps, now()),
  });

  add({
    name: 'oauthRetention',
    every: hourly,
    lease: { key: 'oauth-retention', ttlMs: DAILY_LEASE_MS },
    run: ({ now }) => removeExpiredOAuthRows(deps.db, now()),
  });
  add({
    name: 'dmarc',
    every: { name: 'dmarc', intervalMs: DMARC_INTERVAL_MS, jitter },
    // one worker reads the folders: two would file the same message twice
    lease: { key: 'dmarc-reports', ttlMs: DAILY_LEASE_MS },
    run: ({ signal }) => readDmarcReports(deps, { signal }),
  });

  const { webhooks, checks, peers } = parts;
  if (checks) {
    add({
      name: 'dmarcNames',
      every: { name: 'dmarc', intervalMs: DMARC_INTERVAL_MS, jitter },
      lease: { key: 'dmarc-names', ttlMs: DAILY_LEASE_MS },
      run: ({ signal }) => nameDmarcSources(deps.db, checks.resolve, { signal }),
    });
  }
  if (peers) {
    add({
      name: 'peerHandshakes',
      every: hourly,
      // one worker greets: two would send the same hello twice
      lease: { key: 'peer-handshakes', ttlMs: DAILY_LEASE_MS },
      run: () => peers.greetPending(),
    });
  }
  if (webhooks) {
    add({
      name: 'events',
      every: daily,
      lease: { key: 'scheduled-events', ttlMs: DAILY_LEASE_MS },
      run: ({ now }) => emitScheduledEvents(deps.db, now()),
    });
  }
  if (checks) {
    add({
      name: 'checks',
      every: daily,
      lease: { key: 'daily-checks', ttlMs: DAILY_LEASE_MS },
      run: ({ now, signal }) => {
        const at = now();
        return runDueChecks(deps.db, checks, at, {
          signal,
          afterCheck: (checked) => applyDnsPauseRule(deps.db, checked, checks, at),
        });
      },
    });
  }
  if (webhooks) {
    const delivery = { ...deps, ...webhooks };
    // after the jobs that queue events, so run-once delivers what its own pass queued
    add({
      name: 'webhooks',
      every: { name: 'webhooks', intervalMs: webhooks.settings.intervalMs, jitter },
      run: ({ signal }) => deliverDueWebhooks(delivery, { signal }),
      release: (workerId) => releaseDeliveryClaims(deps.db, workerId),
    });
    add({
      name: 'webhookRetention',
      every: hourly,
      lease: { key: 'webhook-retention', ttlMs: DAILY_LEASE_MS },
      run: async ({ now }) => {
        await removeExpiredEvents(delivery, now());
        return { ran: true as const };
      },
    });
  }
  return jobs;
}

/** A pass is worth an `info` line when it did something, a `warn` line when a job, a mailbox or a delivery failed. */
export function cycleLogLevel(summary: CycleSummary): 'warn' | 'info' | 'debug' {
  const failed =
    summary.errors.length +
    (summary.send?.failed ?? 0) +
    (summary.send?.retried ?? 0) +
    (summary.send?.mailboxErrors.length ?? 0) +
    (summary.replies?.failed ?? 0) +
    (summary.replies?.retried ?? 0) +
    (summary.sync?.failed ?? 0) +
    (summary.sync?.mailboxErrors.length ?? 0) +
    (summary.webhooks?.failed ?? 0) +
    (summary.dmarc?.failed ?? 0) +
    (summary.feeds?.failed ?? 0);
  if (failed > 0) return 'warn';
  const did =
    (summary.plan?.messages ?? 0) +
    (summary.send?.claimed ?? 0) +
    (summary.replies?.claimed ?? 0) +
    (summary.webhooks?.delivered ?? 0) +
    (summary.webhooks?.retried ?? 0) +
    (summary.events?.summaries ?? 0) +
    (summary.events?.reputationDrops ?? 0) +
    (summary.checks?.checked ?? 0) +
    (summary.dmarc?.stored ?? 0) +
    (summary.dmarc?.setAside ?? 0) +
    (summary.dmarcNames?.named ?? 0) +
    (summary.feeds?.fetched ?? 0);
  return did > 0 ? 'info' : 'debug';
}

export type CycleOptions = Omit<PassOptions, 'cadence'>;

export interface EngineOptions extends CadenceOptions, Omit<JobParts, 'engine'> {
  /** The timer loops too treat the whole day as due now (`worker --ignore-schedule`: tests, benchmarks). */
  ignoreSchedule?: boolean;
  /** Told how long each job took and whether it threw (metrics). */
  onStep?: (step: string, durationMs: number, failed: boolean) => void;
  /** Told the summary of every finished pass, of a timer loop or run by hand (metrics). */
  onCycle?: (summary: CycleSummary) => void;
}

/** The job list of one process, run: what `serve`, `worker`, `run-once` and the tests start. */
export interface Engine {
  readonly deps: EngineDeps;
  /** One pass over every job of the list, in order. */
  runCycle(options?: CycleOptions): Promise<CycleSummary>;
  /** Runs each cadence's passes on a timer until stop(). */
  start(): void;
  /**
   * Stops at once: no new job is started, IMAP, SMTP and webhook requests in flight are dropped (a
   * hung server cannot hold it up), then this worker's leases and claims are given back.
   */
  stop(): Promise<void>;
}

export function createEngine(deps: EngineDeps, options: EngineOptions = {}): Engine {
  const runner = createJobRunner<CycleSummary>({
    jobs: createJobList(
      {
        engine: deps,
        webhooks: options.webhooks,
        checks: options.checks,
        feeds: options.feeds,
        peers: options.peers,
        peerMail: options.peerMail,
      },
      options,
    ),
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    random: deps.random,
    workerId: deps.workerId,
    ignoreSchedule: options.ignoreSchedule,
    onStep: options.onStep,
    onPass: options.onCycle,
    logLevel: cycleLogLevel,
  });
  return {
    deps,
    runCycle: (cycle = {}) => runner.runPass(cycle),
    start: () => runner.start(),
    stop: () => runner.stop(),
  };
}

/** `warmup run-once`: one pass over every job, then the worker's leases are given back (whatever happened). */
export async function runOnce(engine: Engine, options: CycleOptions): Promise<CycleSummary> {
  try {
    return await engine.runCycle(options);
  } finally {
    await engine.stop();
  }
}
