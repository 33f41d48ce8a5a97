// Seeded random pools of 1–200 mailboxes, run for weeks on the real engine with the network faked
// at the mail layer (see harness.ts), and every hard bound of issue 11 checked over every
// mailbox-day (invariants.ts). A pool of 10,000 mailboxes for two days, all of them planning,
// sending and receiving, runs on request (`WARMUP_SIM_SEED=10009`, on either database; minutes).
// A failure names the seed and the command that reruns that pool.
//
//   WARMUP_SIM_SEED=123        run only the pool of that seed (size and days from the defaults below,
//                              or drawn from the seed, or WARMUP_SIM_SIZE / WARMUP_SIM_DAYS);
//                              also a list or range: 3,7,9 or 11-30
//   WARMUP_SIM_POOLS=40        run more pools (seeds 1..40; sizes drawn from the seed)
//   WARMUP_SIM_SIZE=1000       every pool this large
//   WARMUP_SIM_DAYS=28         every pool this long
//   WARMUP_SIM_STEP_MINUTES=2  engine cycles this far apart (±25 %)
//   WARMUP_SIM_EVERY_CYCLE=1   run idle cycles and idle syncs too (slow; see harness.ts)
import type * as NodeCrypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { randomInt, seededRandom } from '../../src/engine/random.js';
import { testDialect } from '../helpers/test-database.js';
import { BULK_POOL_SIZE, runPool } from './harness.js';
import { checkInvariants, coverage, reportViolations } from './invariants.js';
import { drawPool, type PoolShape } from './scenario.js';

// Ids and Message-IDs get their random tails from a seeded generator, reseeded per pool: rows made
// in the same instant are ordered by those tails, and a seed must replay its run exactly.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeCrypto>();
  const { seededRandomBytes, useRealRandomBytes } = await import('./seeded-bytes.js');
  useRealRandomBytes(actual.randomBytes);
  return { ...actual, default: { ...actual, randomBytes: seededRandomBytes }, randomBytes: seededRandomBytes };
});

/**
 * The default run: sizes from 1 to 200; the small pools for weeks, the large
 * ones for days (a mailbox-day of the real engine costs milliseconds to tens of milliseconds);
 * cycles 5 to 15 minutes apart, as a worker or a `run-once` cron would run them. WARMUP_SIM_DAYS
 * makes every pool run longer.
 */
const DEFAULT_POOLS: PoolShape[] = [
  { seed: 1, size: 1, days: 14, stepMinutes: 5 },
  { seed: 2, size: 2, days: 21, stepMinutes: 5 },
  { seed: 3, size: 3, days: 28, stepMinutes: 15 },
  { seed: 4, size: 5, days: 21, stepMinutes: 15 },
  { seed: 5, size: 8, days: 10, stepMinutes: 15 },
  { seed: 6, size: 12, days: 7, stepMinutes: 15 },
  { seed: 7, size: 20, days: 5, stepMinutes: 15 },
  { seed: 8, size: 40, days: 4, stepMinutes: 15 },
  { seed: 9, size: 80, days: 2, stepMinutes: 15 },
  { seed: 10, size: 200, days: 2, stepMinutes: 15 },
  // a mid-sized pool over ten days, two outages
  { seed: 13, size: 43, days: 10, stepMinutes: 10 },
  // regression: a mailbox paused after its day was planned and resumed inside its window, with none
  // of its mail overdue, sent more than its late share (user38, 2026-03-11)
  { seed: 20, size: 50, days: 5, stepMinutes: 30 },
];

/**
 * Pools run on request only. 10,000 mailboxes for two days, all of them taking part: the bounds at
 * the scale of issue 16. Minutes on SQLite, many more on PostgreSQL (BENCHMARKS.md, "The
 * simulation's bounds at 10,000 mailboxes"). This seed: one worker, and an outage of 11 hours from
 * the second day's midnight UTC (a two-day pool's outage starts then; with most seeds it takes that
 * whole day). Seeds this high stay out of the ranges run for more pools (WARMUP_SIM_SEED=11-40,
 * WARMUP_SIM_POOLS).
 */
const ON_REQUEST_POOLS: PoolShape[] = [{ seed: 10_009, size: 10_000, days: 2, stepMinutes: 15 }];
const DEFAULT_STEP_MINUTES = 5;

/** New mailboxes the engine proves per cycle (`PROOFS_PER_CYCLE`, src/engine/proofs.ts). */
const PROOFS_PER_CYCLE = 20;

function envInt(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, not ${value}`);
  return n;
}

/**
 * On PostgreSQL (the suite's second run) one pool: seed 3, 3 mailboxes over four weeks. The seeds
 * test the engine's arithmetic, which is the same on either dialect and is proved on SQLite by all
 * of them; what PostgreSQL adds is the queries, and this pool reaches the most of them of the small
 * ones: every mailbox created late, a pause resumed inside the run and one never resumed, two engine
 * outages, three time zones (seeds 1, 2 and 4 each lack some of these; more seeds there cost minutes
 * of CI for no query this one does not make). Concurrent workers' claims on PostgreSQL are proved by
 * the claims and scale-out tests. Any seed runs on request.
 */
const POSTGRES_SEEDS = [3];

function defaultSeeds(): number[] {
  return testDialect === 'sqlite' ? DEFAULT_POOLS.map((p) => p.seed) : POSTGRES_SEEDS;
}

/** `123`, `3,7,9` or `11-20`. */
function envSeeds(name: string): number[] | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const seeds: number[] = [];
  for (const part of value.split(',')) {
    const range = /^(\d+)-(\d+)$/.exec(part.trim());
    if (range) {
      for (let seed = Number(range[1]); seed <= Number(range[2]); seed++) seeds.push(seed);
    } else if (/^\d+$/.test(part.trim())) {
      seeds.push(Number(part.trim()));
    } else {
      throw new Error(`${name} must be seeds such as 123, 3,7,9 or 11-20, not ${value}`);
    }
  }
  return seeds;
}

function shapeFor(seed: number): PoolShape {
  const known = [...DEFAULT_POOLS, ...ON_REQUEST_POOLS].find((p) => p.seed === seed);
  if (known) return known;
  // beyond the defaults: sizes skewed towards small pools, two to four weeks
  const random = seededRandom(seed * 7919);
  const size = Math.min(200, Math.max(1, Math.floor(200 ** random())));
  return { seed, size, days: randomInt(random, 14, 28), stepMinutes: DEFAULT_STEP_MINUTES };
}

function poolShapes(): PoolShape[] {
  const stepMinutes = envInt('WARMUP_SIM_STEP_MINUTES');
  const size = envInt('WARMUP_SIM_SIZE');
  const days = envInt('WARMUP_SIM_DAYS');
  const count = envInt('WARMUP_SIM_POOLS');
  const chosen = envSeeds('WARMUP_SIM_SEED');
  const seeds = chosen ?? (count !== undefined ? Array.from({ length: count }, (_, i) => i + 1) : defaultSeeds());
  return seeds.map((seed) => {
    const shape = shapeFor(seed);
    return {
      ...shape,
      size: size ?? shape.size,
      days: days ?? shape.days,
      stepMinutes: stepMinutes ?? shape.stepMinutes,
      everyCycle: process.env.WARMUP_SIM_EVERY_CYCLE === '1',
    };
  });
}

/** Ten minutes for the usual pools; the large ones take minutes per day on SQLite, more on PostgreSQL. */
function timeoutFor(shape: PoolShape): number {
  return Math.max(600_000, shape.size * shape.days * 120);
}

function rerunCommand(shape: PoolShape): string {
  return (
    `WARMUP_SIM_SEED=${shape.seed} WARMUP_SIM_SIZE=${shape.size} WARMUP_SIM_DAYS=${shape.days} ` +
    `WARMUP_SIM_STEP_MINUTES=${shape.stepMinutes} npx vitest run test/simulation/simulation.test.ts`
  );
}

function sendLog(run: Awaited<ReturnType<typeof runPool>>): string[] {
  return run.sends.map((s) => `${s.at.toISOString()} ${s.from} → ${s.to} ${s.messageId} ${s.placement}`);
}

describe('the simulation harness', () => {
  it('replays a run exactly from its seed', async () => {
    const shape: PoolShape = { seed: 99, size: 4, days: 4, stepMinutes: 10 };
    const first = await runPool(drawPool(shape));
    const second = await runPool(drawPool(shape));
    expect(first.sends.length).toBeGreaterThan(10);
    expect(sendLog(second)).toEqual(sendLog(first));
  }, 300_000);
});

describe('warmup pools simulated on the real engine', () => {
  for (const shape of poolShapes()) {
    it(
      `seed ${shape.seed}: ${shape.size} mailboxes, ${shape.days} days — every bound holds on every mailbox-day`,
      async () => {
        const started = performance.now();
        const run = await runPool(drawPool(shape));
        const violations = checkInvariants(run);
        const covered = coverage(run);
        console.info(
          `seed ${shape.seed}: ${shape.size} mailboxes × ${shape.days} days, ${run.pool.workers} worker(s), ` +
            `${run.cycles} cycles, ${run.sends.length} sends, ${covered.mailboxDays} mailbox-days checked ` +
            `(${covered.sendingDays} with sends, by ${covered.sendingMailboxes} mailboxes), ` +
            `${violations.length} violations, ${Math.round(performance.now() - started)} ms`,
        );
        // the run did something: a pool of two or more mailboxes exchanged mail
        if (shape.size >= 2) expect(run.sends.length, 'sends in the run').toBeGreaterThan(0);
        // a pool created in bulk is proven at once: more of it sends than the engine's proofs (20 a
        // cycle) could have let in; the rest are paused, down or created after their send window
        const provable = PROOFS_PER_CYCLE * run.cycles;
        if (shape.size >= BULK_POOL_SIZE && provable < shape.size) {
          expect(covered.sendingMailboxes, 'mailboxes that sent').toBeGreaterThan(provable);
        }
        if (violations.length > 0) expect.fail(reportViolations(run, violations, rerunCommand(shape)));
      },
      timeoutFor(shape),
    );
  }
});
