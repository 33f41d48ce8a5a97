// Planning one day on PostgreSQL by 1 worker and by 3 workers at once: the same pool, seeded the
// same way into a fresh schema for each run, planned by that many planner processes started
// together (test/scale/planners.ts: each its own process and connections, so they really run in
// parallel). Timed from the moment they are told to start until the last one is done; the CPU time
// each process spent planning is summed, and the pool's plans are counted afterwards (every mailbox
// exactly once).
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- --only parallel-planner [-- --quick]
//   (standalone: node --import tsx bench/parallel-planner.bench.ts [--mailboxes 10000] [--workers 1,3])
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { migrateToLatest, openDatabase } from '../src/db/database.js';
import { planBucketsFor } from '../src/engine/planner.js';
import { machine } from '../test/scale/cluster.js';
import { cpuTimes } from './workers.bench.js';
import { seedPool, startPlanner, type PlannerReport } from '../test/scale/planners.js';
import { createPostgresSchema } from '../test/helpers/postgres-schema.js';

export interface ParallelPlannerBenchOptions {
  /** 10,000 mailboxes instead of 100,000. */
  quick?: boolean;
  mailboxes?: number;
  /** Worker counts, each a run of its own (default 1 and 3). */
  workers?: number[];
  databaseUrl?: string;
  log?: (line: string) => void;
}

export interface ParallelPlannerRun {
  workers: number;
  seedMs: number;
  /** From "start" to the last planner done. */
  wallMs: number;
  /** CPU of the planner processes while planning, summed. */
  cpuMs: number;
  /**
   * Busy CPU time of the whole machine while planning (every core: the planners, PostgreSQL and
   * anything else), and its share of the cores' time.
   */
  machineBusyMs: number;
  machineBusy: number;
  planners: PlannerReport[];
  /** Plan rows of the day afterwards, and the distinct mailboxes among them. */
  plans: number;
  distinctMailboxes: number;
  messages: number;
  /** The machine's 1-minute load average when the run started (other work shares the 2 CPUs). */
  loadAverage: number;
}

export interface ParallelPlannerBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  mailboxes: number;
  buckets: number;
  runs: ParallelPlannerRun[];
}

/** 3 workers should plan the day at least this many times faster than 1. */
const TARGET_SPEEDUP = 2;
/** A Wednesday, before every mailbox's send window (08:00–18:00 UTC): a normal morning plan. */
const PLAN_AT = new Date('2026-03-04T06:00:00.000Z');

export async function runParallelPlannerBench(
  options: ParallelPlannerBenchOptions = {},
): Promise<ParallelPlannerBenchResult | null> {
  const log = options.log ?? ((line: string) => console.log(line));
  const baseUrl = options.databaseUrl ?? process.env.TEST_DATABASE_URL;
  if (!baseUrl) {
    log('parallel-planner bench skipped: set TEST_DATABASE_URL=postgres://… (parallel planning needs PostgreSQL)');
    return null;
  }
  const mailboxes = options.mailboxes ?? (options.quick ? 10_000 : 100_000);
  const runs: ParallelPlannerRun[] = [];
  for (const workers of options.workers ?? [1, 3]) {
    const run = await runWorkers(baseUrl, mailboxes, workers);
    runs.push(run);
    log(
      `workers=${workers}: ${run.distinctMailboxes} of ${mailboxes} mailboxes planned (${run.messages} messages) in ${(run.wallMs / 1000).toFixed(1)} s, ` +
        `planner CPU ${(run.cpuMs / 1000).toFixed(1)} s; per planner ${run.planners.map((p) => `${p.mailboxes} mailboxes/${(p.wallMs / 1000).toFixed(1)} s/${(p.cpuMs / 1000).toFixed(1)} s CPU`).join(', ')}; load ${run.loadAverage.toFixed(1)}`,
    );
  }
  return { machine: machine(), node: process.version, mailboxes, buckets: planBucketsFor(mailboxes), runs };
}

async function runWorkers(baseUrl: string, mailboxes: number, workers: number): Promise<ParallelPlannerRun> {
  const schema = await createPostgresSchema(baseUrl, 'bench');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-parplan-'));
  const database = openDatabase({ databaseUrl: schema.url, dataDir, poolSize: 2 });
  try {
    await migrateToLatest(database.db, database.dialect);
    const now = PLAN_AT.toISOString();
    await database.db.insertInto('workspaces').values({ id: 'ws_bench', name: 'bench', created_at: now }).execute();
    const seedStarted = performance.now();
    // as the SQLite planner bench: 20 mailboxes a domain, UTC, a spread of ramp positions
    await seedPool(database.db, {
      workspaceId: 'ws_bench',
      count: mailboxes,
      perDomain: 20,
      zones: ['UTC'],
      warmup: () => ({ replyRate: 0 }),
      warmupDay: (i) => i % 30,
      now,
    });
    // fresh statistics, as a live database has them
    await sql`analyze`.execute(database.db);
    const seedMs = performance.now() - seedStarted;
    const planners = await Promise.all(
      Array.from({ length: workers }, (_, i) =>
        startPlanner(
          { DATABASE_URL: schema.url, WARMUP_DATA_DIR: dataDir },
          // one lease for a whole bucket however slow the machine is
          { workerId: `bench-${i + 1}`, at: PLAN_AT, seed: i + 1, leaseMs: 3_600_000 },
        ),
      ),
    );
    const loadAverage = os.loadavg()[0];
    const started = performance.now();
    const cpuBefore = cpuTimes();
    for (const planner of planners) planner.go();
    const reports = await Promise.all(planners.map((p) => p.done));
    const wallMs = performance.now() - started;
    const cpuAfter = cpuTimes();
    const plans = await database.db.selectFrom('mailbox_plans').select('mailbox_id').execute();
    const messages = await database.db
      .selectFrom('warmup_messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return {
      workers,
      seedMs,
      wallMs,
      cpuMs: reports.reduce((sum, r) => sum + r.cpuMs, 0),
      machineBusyMs: cpuAfter.busy - cpuBefore.busy,
      machineBusy: (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total),
      planners: reports,
      plans: plans.length,
      distinctMailboxes: new Set(plans.map((p) => p.mailbox_id)).size,
      messages: Number(messages.n),
      loadAverage,
    };
  } finally {
    await database.close();
    await schema.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The BENCHMARKS.md report: one row per worker count, and 3 workers against 1. */
export function parallelPlannerReport(result: ParallelPlannerBenchResult | null): string {
  if (!result) return 'skipped: no PostgreSQL (set TEST_DATABASE_URL)';
  const { cpus, model, memoryGb } = result.machine;
  const lines = [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, Node ${result.node}; PostgreSQL on the same machine; ` +
      `${result.mailboxes.toLocaleString('en-US')} active mailboxes in ${result.buckets} buckets, each run on a fresh schema`,
    '',
    '| workers | planned (plan rows / distinct mailboxes) | messages | wall clock | planner CPU (sum) | machine CPU busy | per planner: mailboxes, wall, CPU | load average at start |',
    '|---:|---:|---:|---:|---:|---:|---|---:|',
    ...result.runs.map(
      (r) =>
        `| ${r.workers} | ${r.plans.toLocaleString('en-US')} / ${r.distinctMailboxes.toLocaleString('en-US')} | ${r.messages.toLocaleString('en-US')} | ` +
        `${(r.wallMs / 1000).toFixed(1)} s | ${(r.cpuMs / 1000).toFixed(1)} s | ` +
        `${(r.machineBusyMs / 1000).toFixed(1)} s (${Math.round(r.machineBusy * 100)} %) | ` +
        `${r.planners.map((p) => `${p.mailboxes.toLocaleString('en-US')}, ${(p.wallMs / 1000).toFixed(1)} s, ${(p.cpuMs / 1000).toFixed(1)} s`).join('; ')} | ${r.loadAverage.toFixed(1)} |`,
    ),
  ];
  const one = result.runs.find((r) => r.workers === 1);
  const three = result.runs.find((r) => r.workers === 3);
  if (one && three) {
    const speedup = one.wallMs / three.wallMs;
    lines.push(
      '',
      `3 workers vs 1: ×${speedup.toFixed(2)} faster (target ≥ ×${TARGET_SPEEDUP}: ${speedup >= TARGET_SPEEDUP ? 'met' : 'missed'}); ` +
        `planner CPU ${(three.cpuMs / 1000).toFixed(1)} s against ${(one.cpuMs / 1000).toFixed(1)} s.`,
    );
  }
  return lines.join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const mailboxes = argument('--mailboxes');
  const workers = argument('--workers');
  const result = await runParallelPlannerBench({
    quick: process.argv.includes('--quick'),
    mailboxes: mailboxes ? Number(mailboxes) : undefined,
    workers: workers ? workers.split(',').map(Number) : undefined,
  });
  console.log(`\n${parallelPlannerReport(result)}`);
}
