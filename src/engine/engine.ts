import { foldFinishedDays, type FoldSummary } from '../interactions/workspace-rollup.js';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { DEFAULT_RETENTION_DAYS } from '../config.js';
import type { Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { MailServerConfig } from '../mail/errors.js';
import { DEFAULT_ROUND_TRIP_WAIT_MS } from '../mail/round-trip.js';
import type { ImapSession } from '../mail/imap.js';
import type { SmtpSender } from '../mail/smtp.js';
import { runPlacementTests, type PlacementSummary } from '../placement-tests/placement-runner.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import { applyHealthGuard, type HealthSummary } from './health.js';
import { newWorkerId, releaseAllLeases, withLease } from './leases.js';
import { planDay, type PlanSummary } from './planner.js';
import { proveDueMailboxes, type ProofSummary } from './proofs.js';
import type { Random } from './random.js';
import { syncMailboxes, type SyncSummary } from './reader.js';
import { updateReputation, type ReputationSummary } from './reputation.js';
import { removeExpiredHistory, type RetentionSummary } from './retention.js';
import { createScheduler } from './scheduler.js';
import { sendDueMessages, type SendSummary } from './sender.js';

export interface EngineSettings {
  /** How long a claim (planning, a mailbox's sync, a planned row) holds before another worker may take it over. */
  leaseMs: number;
  imapTimeoutMs: number;
  smtpTimeoutMs: number;
  /**
   * The longest one mailbox's whole sync may take: a server that answers each command just in time
   * must not hold a sync slot (and the mailbox's lease) for ever. Below the lease, so no other worker
   * starts a second session meanwhile.
   */
  syncDeadlineMs: number;
  /** Days the Warmup folder keeps warmup mail before it is removed (WARMUP_FOLDER_RETENTION_DAYS). */
  warmupFolderRetentionDays: number;
  /** Days raw interactions and finished warmup messages are kept (WARMUP_RETENTION_DAYS; 0: for ever). */
  retentionDays: number;
  /** How long a mailbox's round trip waits for its test message (engine/proofs.ts). */
  proofWaitMs: number;
}

export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  leaseMs: 5 * 60_000,
  imapTimeoutMs: 30_000,
  smtpTimeoutMs: 30_000,
  syncDeadlineMs: 3 * 60_000,
  warmupFolderRetentionDays: 30,
  retentionDays: DEFAULT_RETENTION_DAYS,
  proofWaitMs: DEFAULT_ROUND_TRIP_WAIT_MS,
};

/** Everything the engine touches, passed in: time and chance included, so a test can replay days. */
export interface EngineDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  random: Random;
  logger: Logger;
  /** This process's name in lease rows. */
  workerId: string;
  mailboxes: {
    getCredentials(mailboxId: string): Promise<{ imap: MailServerConfig; smtp: MailServerConfig }>;
  };
  templates: {
    pickTemplate(
      workspaceId: string,
      criteria: { type: TemplateType; language: string },
      seed: number,
    ): Promise<{ id: string; subject: string; body: string } | undefined>;
  };
  settings: EngineSettings;
  /**
   * The mail clients; tests of failure handling give fakes, everything else uses the real ones.
   * Aborting `signal` must drop the connection at once (the engine is stopping).
   */
  smtp?: (config: MailServerConfig, opts: { timeoutMs: number; signal?: AbortSignal }) => SmtpSender;
  imap?: (config: MailServerConfig, opts: { timeoutMs: number; signal?: AbortSignal }) => Promise<ImapSession>;
}

export interface EngineWiring extends Omit<EngineDeps, 'random' | 'workerId' | 'settings'> {
  random?: Random;
  workerId?: string;
  settings?: Partial<EngineSettings>;
}

/** The engine's dependencies from the composition root's parts; the same for `serve`, `worker`, `run-once` and tests. */
export function createEngineDeps(wiring: EngineWiring): EngineDeps {
  return {
    ...wiring,
    random: wiring.random ?? Math.random,
    workerId: wiring.workerId ?? newWorkerId(),
    settings: { ...DEFAULT_ENGINE_SETTINGS, ...wiring.settings },
  };
}

export interface CycleOptions {
  /** Business time of the whole cycle (run-once --at); default: the clock, read at each step. */
  at?: Date;
  /** Everything planned for the day is due now, and replies go out in the same cycle. */
  ignoreSchedule?: boolean;
}

/**
 * What a cycle says of its planning: how many mailboxes, not which. The cycle is logged and printed
 * whole, and the list of a day of 100,000 mailboxes is a log line of megabytes.
 */
export interface CyclePlanSummary extends Omit<PlanSummary, 'mailboxes'> {
  /** Mailboxes planned this cycle. */
  mailboxes: number;
}

export interface CycleSummary {
  at: string;
  workerId: string;
  ignoreSchedule: boolean;
  /** Mailboxes whose round trip ran this cycle: proven (they join the pool) or failed. */
  prove: ProofSummary | null;
  plan: CyclePlanSummary | null;
  send: SendSummary | null;
  sync: SyncSummary | null;
  /** The second send of an ignore-schedule cycle: the replies planned during sync. */
  replies: SendSummary | null;
  /** Placement tests of users' own copy: copies sent, found, given up (placement-tests/). */
  placement: PlacementSummary | null;
  reputation: ReputationSummary | null;
  health: HealthSummary | null;
  /**
   * Finished days folded into the workspace rollup of the statistics, then raw rows past the
   * retention removed (ran: false when another worker did).
   */
  rollup: (FoldSummary & { ran: boolean; retention: RetentionSummary | null }) | null;
  /** Steps that threw; the steps after them still ran. */
  errors: Array<{ step: string; message: string }>;
  /** The engine was asked to stop during the cycle; the remaining steps were skipped. */
  stopped: boolean;
  durationMs: number;
}

/** The steps of a cycle, in order. */
export type EngineStep =
  'prove' | 'plan' | 'send' | 'sync' | 'replies' | 'placement' | 'reputation' | 'health' | 'rollup';

export interface EngineOptions {
  /** Pause between cycles of the scheduler (default 2 min). */
  intervalMs?: number;
  /** ± fraction of the interval (default 0.2). */
  jitter?: number;
  /** Scheduled cycles too treat the whole day as due now (`worker --ignore-schedule`: tests, benchmarks). */
  ignoreSchedule?: boolean;
  /** Told how long each step took and whether it threw (metrics). */
  onStep?: (step: EngineStep, durationMs: number, failed: boolean) => void;
  /** Told the summary of every finished cycle, scheduled or run by hand (metrics). */
  onCycle?: (summary: CycleSummary) => void;
}

export interface Engine {
  readonly deps: EngineDeps;
  /** One whole cycle: prove → plan → send due → sync → (replies) → placement tests → reputation → health guard. */
  runCycle(options?: CycleOptions): Promise<CycleSummary>;
  /** Runs cycles on a timer until stop(). */
  start(): void;
  /**
   * Stops at once: no new step, mailbox or message is started, IMAP and SMTP sessions in flight are
   * dropped (a hung server cannot hold it up), then this worker's leases are given back.
   */
  stop(): Promise<void>;
}

/** The statistics' workspace rollup is folded, and old raw rows removed, by one worker at a time. */
export const FOLD_LEASE_KEY = 'stats-fold';

async function foldStatistics(
  deps: EngineDeps,
  now: Date,
): Promise<FoldSummary & { ran: boolean; retention: RetentionSummary | null }> {
  const outcome = await withLease(deps.db, FOLD_LEASE_KEY, deps.workerId, deps.settings.leaseMs, now, async () => {
    const fold = await foldFinishedDays(deps.db, now);
    // after the fold, so the days whose raw rows go are in the rollup already
    const retention = await removeExpiredHistory(deps.db, deps.dialect, now, {
      retentionDays: deps.settings.retentionDays,
    });
    return { ...fold, retention };
  });
  return outcome.ran
    ? { ran: true, ...outcome.result }
    : { ran: false, workspaces: 0, throughDay: '', retention: null };
}

/** Often enough that sends leave within a couple of minutes of their time; the reader paces IMAP itself. */
export const DEFAULT_CYCLE_INTERVAL_MS = 120_000;

/** `warmup run-once`: one cycle, then the worker's leases are given back (whatever happened). */
export async function runOnce(engine: Engine, options: CycleOptions): Promise<CycleSummary> {
  try {
    return await engine.runCycle(options);
  } finally {
    await engine.stop();
  }
}

/** A cycle is worth an `info` line when it did something, a `warn` line when a step or a mailbox failed. */
export function cycleLogLevel(summary: CycleSummary): 'warn' | 'info' | 'debug' {
  const failed =
    summary.errors.length +
    (summary.send?.failed ?? 0) +
    (summary.send?.retried ?? 0) +
    (summary.send?.mailboxErrors.length ?? 0) +
    (summary.replies?.failed ?? 0) +
    (summary.replies?.retried ?? 0) +
    (summary.sync?.failed ?? 0) +
    (summary.sync?.mailboxErrors.length ?? 0);
  if (failed > 0) return 'warn';
  const did = (summary.plan?.messages ?? 0) + (summary.send?.claimed ?? 0) + (summary.replies?.claimed ?? 0);
  return did > 0 ? 'info' : 'debug';
}

/** One listener per open SMTP sender and IMAP step, each removed when done: no fixed cap applies. */
function stopSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function createEngine(deps: EngineDeps, options: EngineOptions = {}): Engine {
  const { onStep, onCycle } = options;
  let stopping = false;
  // Aborted by stop(): the send and sync steps check it between mailboxes and messages, and the
  // mail clients drop their sockets on it.
  let abort = stopSignal();
  const current = new Set<Promise<CycleSummary>>();

  async function cycle(options: CycleOptions): Promise<CycleSummary> {
    const started = performance.now();
    const ignoreSchedule = options.ignoreSchedule ?? false;
    const now = () => options.at ?? deps.clock.now();
    const { signal } = abort;
    const summary: CycleSummary = {
      at: now().toISOString(),
      workerId: deps.workerId,
      ignoreSchedule,
      prove: null,
      plan: null,
      send: null,
      sync: null,
      replies: null,
      placement: null,
      reputation: null,
      health: null,
      rollup: null,
      errors: [],
      stopped: false,
      durationMs: 0,
    };

    // Each step is safe on its own (leases, idempotent writes), so one failing does not skip the rest.
    async function step<K extends EngineStep>(name: K, work: () => Promise<CycleSummary[K]>): Promise<void> {
      if (stopping) {
        summary.stopped = true;
        return;
      }
      const stepStarted = performance.now();
      let failed = false;
      try {
        summary[name] = await work();
        if (signal.aborted) summary.stopped = true;
      } catch (error) {
        failed = true;
        const message = error instanceof Error ? error.message : String(error);
        deps.logger.error({ err: error, step: name }, `engine step ${name} failed`);
        summary.errors.push({ step: name, message });
      }
      onStep?.(name, performance.now() - stepStarted, failed);
    }

    await step('prove', () => proveDueMailboxes(deps, now()));
    await step('plan', async () => {
      const { mailboxes, ...planned } = await planDay(deps, now(), { ignoreSchedule });
      return { ...planned, mailboxes: mailboxes.length };
    });
    await step('send', () => sendDueMessages(deps, { now: now(), ignoreSchedule, signal }));
    await step('sync', () => syncMailboxes(deps, { now: now(), ignoreSchedule, signal }));
    if (ignoreSchedule) await step('replies', () => sendDueMessages(deps, { now: now(), ignoreSchedule, signal }));
    await step('placement', () => runPlacementTests(deps, { now: now(), ignoreSchedule, signal }));
    await step('reputation', () => updateReputation(deps, now(), { ignoreSchedule }));
    await step('health', () => applyHealthGuard(deps, now(), { ignoreSchedule }));
    await step('rollup', () => foldStatistics(deps, now()));
    summary.durationMs = Math.round(performance.now() - started);
    return summary;
  }

  const scheduler = createScheduler({
    intervalMs: options.intervalMs ?? DEFAULT_CYCLE_INTERVAL_MS,
    jitter: options.jitter ?? 0.2,
    random: deps.random,
    logger: deps.logger,
    cycle: async () => {
      const summary = await runCycle({ ignoreSchedule: options.ignoreSchedule });
      deps.logger[cycleLogLevel(summary)]({ cycle: summary }, 'engine cycle');
    },
  });

  function runCycle(options: CycleOptions = {}): Promise<CycleSummary> {
    const running = cycle(options).then((summary) => {
      onCycle?.(summary);
      return summary;
    });
    current.add(running);
    return running.finally(() => current.delete(running));
  }

  return {
    deps,
    runCycle,
    start() {
      if (stopping) abort = stopSignal();
      stopping = false;
      scheduler.start();
    },
    async stop() {
      stopping = true;
      abort.abort();
      await scheduler.stop();
      await Promise.allSettled([...current]);
      await releaseAllLeases(deps.db, deps.workerId);
    },
  };
}
