import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../test/helpers/engine.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { fixedClock } from '../clock.js';
import { createJobRunner, type Cadence, type Job, type PassHeader } from './job-runner.js';
import { acquireLease } from './leases.js';

const AT = new Date('2026-03-02T10:00:00.000Z');

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.close());

function runner(jobs: Job[], workerId = 'w-runner') {
  return createJobRunner<PassHeader & Record<string, unknown>>({
    jobs,
    db: database.db,
    clock: fixedClock(AT),
    logger: silentLogger,
    random: () => 0.5,
    workerId,
  });
}

const until = async (done: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('the job runner', () => {
  it('runs a pass in list order; a job whose lease another worker holds is skipped, the rest still run', async () => {
    const every: Cadence = { name: 'test', intervalMs: 60_000, jitter: 0 };
    const ran: string[] = [];
    const job = (name: string, extra: Partial<Job> = {}): Job => ({
      name,
      every,
      run: async () => {
        ran.push(name);
        return { name };
      },
      ...extra,
    });
    await acquireLease(database.db, 'held-elsewhere', 'another-worker', 60_000, AT);
    const summary = await runner([
      job('first'),
      job('leased', { lease: { key: 'held-elsewhere', ttlMs: 60_000 } }),
      job('failing', {
        run: async () => {
          throw new Error('boom');
        },
      }),
      job('free', { lease: { key: 'free-lease', ttlMs: 60_000 } }),
      job('not-now', { runsIf: ({ ignoreSchedule }) => ignoreSchedule }),
      job('last'),
    ]).runPass({ at: AT });
    expect(ran).toEqual(['first', 'free', 'last']);
    expect(summary).toMatchObject({
      at: AT.toISOString(),
      loop: 'all',
      first: { name: 'first' },
      leased: null,
      failing: null,
      free: { name: 'free' },
      'not-now': null,
      last: { name: 'last' },
      errors: [{ step: 'failing', message: 'boom' }],
      stopped: false,
    });
    // the lease of a job is given back when it ends
    expect(await database.db.selectFrom('leases').select('key').where('key', '=', 'free-lease').execute()).toEqual([]);
  });

  it('runs each cadence in its own loop: a slow job does not hold up the jobs of another cadence', async () => {
    const slow: Cadence = { name: 'slow', intervalMs: 10, jitter: 0 };
    const fast: Cadence = { name: 'fast', intervalMs: 10, jitter: 0 };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let fastRuns = 0;
    const jobs = runner([
      { name: 'stuck', every: slow, run: () => held },
      {
        name: 'quick',
        every: fast,
        run: async () => {
          fastRuns += 1;
        },
      },
    ]);
    jobs.start();
    await until(() => fastRuns >= 3);
    release();
    await jobs.stop();
    expect(fastRuns).toBeGreaterThanOrEqual(3);
  });

  it('stop gives back the worker’s leases and each job’s own claims', async () => {
    const every: Cadence = { name: 'test', intervalMs: 60_000, jitter: 0 };
    const released: string[] = [];
    const giveBack = async (workerId: string) => {
      released.push(workerId);
    };
    const jobs = runner(
      [
        { name: 'a', every, run: async () => null, release: giveBack },
        { name: 'b', every, run: async () => null, release: giveBack },
      ],
      'w-stop',
    );
    await acquireLease(database.db, 'held-by-stopper', 'w-stop', 60_000, AT);
    await jobs.runPass();
    await jobs.stop();
    expect(released).toEqual(['w-stop']);
    expect(await database.db.selectFrom('leases').select('key').where('owner', '=', 'w-stop').execute()).toEqual([]);
  });
});
