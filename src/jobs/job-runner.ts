// The runtime of the job list (job-list.ts): what a job is, one pass over the due jobs, and the
// timer loops of a long-running process. It knows no job: the list is handed in, so this file sits
// below everything the jobs do (the engine, the webhooks, the checks) and imports none of it.
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { releaseLeasesOf, withLease } from './leases.js';
import { createScheduler, type Scheduler } from './scheduler.js';

/**
 * How often jobs run in `serve` and `worker`: the jobs of one cadence run one after another, in
 * list order, every `intervalMs` (± jitter) after the previous pass of that cadence ended; the
 * cadences run side by side, so a slow sync never holds up webhook delivery.
 */
export interface Cadence {
  /** Names its loop in the logs: `<name> cycle`. */
  readonly name: string;
  readonly intervalMs: number;
  /** ± this fraction of the interval, so workers started together drift apart. */
  readonly jitter: number;
}

export interface JobContext {
  /** Business time: the pass's `at` (run-once --at), else the clock read at this moment. */
  now(): Date;
  /** Everything planned for the day is due now (run-once --ignore-schedule, tests). */
  ignoreSchedule: boolean;
  /** Aborted when the process stops: network work drops its connections at once. */
  signal: AbortSignal;
}

/** One piece of background work: one entry of the job list. */
export interface Job<R = unknown> {
  /** Its key in the pass summary, its `step` label in the metrics and its name in the logs. */
  readonly name: string;
  /** How often it runs in a long-running process; `run-once` runs every job once. */
  readonly every: Cadence;
  /**
   * One worker of the installation at a time: a worker that cannot take the lease skips the job
   * this pass (its summary entry stays null). `ttlMs` bounds how long a dead worker holds it.
   * Without: any number of workers run it at once, sharing the work through their own claims.
   */
  readonly lease?: { readonly key: string; readonly ttlMs: number };
  /** Runs only in the passes where this holds (default: every pass). */
  readonly runsIf?: (context: JobContext) => boolean;
  run(context: JobContext): Promise<R>;
  /** Gives back the claims this worker holds in the job's own rows when the process stops. */
  readonly release?: (workerId: string) => Promise<void>;
}

export interface PassOptions {
  /** Business time of the whole pass (run-once --at); default: the clock, read at each job. */
  at?: Date;
  ignoreSchedule?: boolean;
  /** Only the jobs of this cadence (a timer loop's pass); default: every job (run-once). */
  cadence?: Cadence;
}

/** What every pass summary says besides each job's result (under the job's name; null: not run). */
export interface PassHeader {
  at: string;
  workerId: string;
  ignoreSchedule: boolean;
  /** The cadence whose loop ran this pass, or `all` for a pass over every job (run-once). */
  loop: string;
  /** Jobs that threw; the jobs after them still ran. */
  errors: Array<{ step: string; message: string }>;
  /** The process was asked to stop during the pass; the remaining jobs were skipped. */
  stopped: boolean;
  durationMs: number;
}

export interface JobRunnerOptions<S extends PassHeader> {
  jobs: readonly Job[];
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  random: () => number;
  /** This process's name in lease and claim rows. */
  workerId: string;
  /** The timer loops' passes treat the whole day as due too (`worker --ignore-schedule`). */
  ignoreSchedule?: boolean;
  /** Told how long each job took and whether it threw (metrics). */
  onStep?: (job: string, durationMs: number, failed: boolean) => void;
  /** Told the summary of every finished pass, of a timer loop or run by hand (metrics). */
  onPass?: (summary: S) => void;
  /** The level of a timer loop's log line for a pass (default: debug). */
  logLevel?: (summary: S) => 'warn' | 'info' | 'debug';
}

export interface JobRunner<S extends PassHeader> {
  readonly workerId: string;
  /** One pass: every due job of the list (or of one cadence), in list order. */
  runPass(options?: PassOptions): Promise<S>;
  /** Runs each cadence's passes on a timer until stop(). */
  start(): void;
  /**
   * Stops at once: no new job is started, the network work in flight is aborted (a hung server
   * cannot hold it up), the running jobs end, then this worker's leases and claims are given back.
   */
  stop(): Promise<void>;
}

/** One listener per open connection and step, each removed when done: no fixed cap applies. */
function stopSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The distinct cadences of a list, in the order they first appear. */
export function cadencesOf(jobs: readonly Job[]): Cadence[] {
  return [...new Set(jobs.map((job) => job.every))];
}

/**
 * The runner of a job list. `S` is the list's pass summary: the header and, under each job's
 * name, its result (job-list.ts names them).
 */
export function createJobRunner<S extends PassHeader>(options: JobRunnerOptions<S>): JobRunner<S> {
  const { jobs, db, clock, logger, workerId, onStep, onPass } = options;
  let stopping = false;
  let abort = stopSignal();
  const current = new Set<Promise<S>>();

  async function pass(passOptions: PassOptions): Promise<S> {
    const started = performance.now();
    const now = () => passOptions.at ?? clock.now();
    const context: JobContext = {
      now,
      ignoreSchedule: passOptions.ignoreSchedule ?? false,
      signal: abort.signal,
    };
    const selected = passOptions.cadence ? jobs.filter((job) => job.every === passOptions.cadence) : jobs;
    const header: PassHeader = {
      at: now().toISOString(),
      workerId,
      ignoreSchedule: context.ignoreSchedule,
      loop: passOptions.cadence?.name ?? 'all',
      errors: [],
      stopped: false,
      durationMs: 0,
    };
    const results: Record<string, unknown> = Object.fromEntries(selected.map((job) => [job.name, null]));

    // Each job is safe on its own (leases, claims, idempotent writes), so one failing skips none of the rest.
    for (const job of selected) {
      if (stopping) {
        header.stopped = true;
        break;
      }
      if (job.runsIf && !job.runsIf(context)) continue;
      const jobStarted = performance.now();
      let failed = false;
      try {
        if (job.lease) {
          const outcome = await withLease(db, job.lease.key, workerId, job.lease.ttlMs, now(), () => job.run(context));
          if (outcome.ran) results[job.name] = outcome.result;
        } else {
          results[job.name] = await job.run(context);
        }
        if (context.signal.aborted) header.stopped = true;
      } catch (error) {
        failed = true;
        const message = error instanceof Error ? error.message : String(error);
        logger.error({ err: error, step: job.name }, `job ${job.name} failed`);
        header.errors.push({ step: job.name, message });
      }
      onStep?.(job.name, performance.now() - jobStarted, failed);
    }
    header.durationMs = Math.round(performance.now() - started);
    // the header's fields around the results, as run-once has always printed them
    const { at, workerId: worker, ignoreSchedule, loop, ...rest } = header;
    return { at, workerId: worker, ignoreSchedule, loop, ...results, ...rest } as unknown as S;
  }

  function runPass(passOptions: PassOptions = {}): Promise<S> {
    const running = pass(passOptions).then((summary) => {
      onPass?.(summary);
      return summary;
    });
    current.add(running);
    return running.finally(() => current.delete(running));
  }

  const schedulers: Scheduler[] = cadencesOf(jobs).map((cadence) =>
    createScheduler({
      name: cadence.name,
      intervalMs: cadence.intervalMs,
      jitter: cadence.jitter,
      random: options.random,
      logger,
      cycle: async () => {
        const summary = await runPass({ cadence, ignoreSchedule: options.ignoreSchedule });
        logger[options.logLevel?.(summary) ?? 'debug']({ cycle: summary }, `${cadence.name} cycle`);
      },
    }),
  );

  return {
    workerId,
    runPass,
    start() {
      if (stopping) abort = stopSignal();
      stopping = false;
      for (const scheduler of schedulers) scheduler.start();
    },
    async stop() {
      stopping = true;
      abort.abort();
      await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
      await Promise.allSettled([...current]);
      await releaseLeasesOf(db, workerId);
      for (const release of new Set(jobs.map((job) => job.release))) await release?.(workerId);
    },
  };
}
