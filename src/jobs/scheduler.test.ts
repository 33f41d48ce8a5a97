import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../test/helpers/engine.js';
import { seededRandom } from '../engine/random.js';
import { createScheduler } from './scheduler.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error('condition not met in time');
    await sleep(2);
  }
}

describe('createScheduler', () => {
  it('runs cycles one after another, never two at once', async () => {
    let running = 0;
    let maxRunning = 0;
    let cycles = 0;
    const scheduler = createScheduler({
      name: 'test',
      intervalMs: 1,
      jitter: 0.5,
      random: seededRandom(1),
      logger: silentLogger,
      cycle: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(15);
        running -= 1;
        cycles += 1;
      },
    });
    scheduler.start();
    scheduler.start();
    await until(() => cycles >= 4);
    await scheduler.stop();
    expect(maxRunning).toBe(1);
    expect(scheduler.running).toBe(false);
  });

  it('stop waits for the running cycle, then no cycle starts', async () => {
    const gate = deferred();
    let started = 0;
    let finished = 0;
    const scheduler = createScheduler({
      name: 'test',
      intervalMs: 1,
      jitter: 0,
      random: seededRandom(1),
      logger: silentLogger,
      cycle: async () => {
        started += 1;
        await gate.promise;
        finished += 1;
      },
    });
    scheduler.start();
    await until(() => started === 1);
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await sleep(20);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(finished).toBe(1);
    await sleep(20);
    expect(started).toBe(1);
  });

  it('stop cuts the wait between cycles short', async () => {
    let cycles = 0;
    const scheduler = createScheduler({
      name: 'test',
      intervalMs: 60_000,
      jitter: 0,
      random: seededRandom(1),
      logger: silentLogger,
      cycle: async () => {
        cycles += 1;
      },
    });
    scheduler.start();
    await until(() => cycles === 1);
    const before = performance.now();
    await scheduler.stop();
    expect(performance.now() - before).toBeLessThan(500);
    expect(cycles).toBe(1);
  });

  it('goes on after a failing cycle, and can be started again after a stop', async () => {
    let cycles = 0;
    const scheduler = createScheduler({
      name: 'test',
      intervalMs: 1,
      jitter: 0,
      random: seededRandom(1),
      logger: silentLogger,
      cycle: async () => {
        cycles += 1;
        if (cycles === 1) throw new Error('database went away');
      },
    });
    scheduler.start();
    await until(() => cycles >= 3);
    await scheduler.stop();
    const stoppedAt = cycles;
    scheduler.start();
    await until(() => cycles > stoppedAt);
    await scheduler.stop();
  });
});
