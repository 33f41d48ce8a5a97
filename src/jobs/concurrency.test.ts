import { describe, expect, it } from 'vitest';
import { forEachClaimed } from './concurrency.js';

/** A promise with its resolve, for holding one item's work until the test lets it go. */
function held(): { promise: Promise<void>; release: () => void } {
  let release = () => {};
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('forEachClaimed', () => {
  it('claims as many items as lanes are idle, one claim at a time, and each item once', async () => {
    const pool = Array.from({ length: 10 }, (_, i) => i);
    const asked: number[] = [];
    let claimsInFlight = 0;
    let mostClaimsInFlight = 0;
    const done: number[] = [];
    await forEachClaimed(
      3,
      async (limit) => {
        asked.push(limit);
        claimsInFlight += 1;
        mostClaimsInFlight = Math.max(mostClaimsInFlight, claimsInFlight);
        await tick();
        claimsInFlight -= 1;
        return pool.splice(0, limit);
      },
      async (item) => {
        await tick();
        done.push(item);
      },
    );
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(mostClaimsInFlight).toBe(1);
    // all three lanes at the start; later only those that fell idle
    expect(asked[0]).toBe(3);
    expect(asked.every((limit) => limit >= 1 && limit <= 3)).toBe(true);
  });

  it('a lane freed by a quick item takes the next one while a slow item still runs', async () => {
    const pool = ['slow', 'a', 'b', 'c'];
    const slow = held();
    const done: string[] = [];
    const running = forEachClaimed(
      2,
      async (limit) => pool.splice(0, limit),
      async (item) => {
        if (item === 'slow') await slow.promise;
        done.push(item);
      },
    );
    for (let i = 0; i < 20 && done.length < 3; i += 1) await tick();
    expect(done).toEqual(['a', 'b', 'c']);
    slow.release();
    await running;
    expect(done).toEqual(['a', 'b', 'c', 'slow']);
  });

  it('a failed claim stops the claiming and is thrown only after the items in hand are done', async () => {
    const slow = held();
    let claims = 0;
    let slowFinished = false;
    const running = forEachClaimed(
      2,
      async () => {
        claims += 1;
        if (claims === 1) return ['slow', 'quick'];
        throw new Error('database gone');
      },
      async (item) => {
        if (item !== 'slow') return;
        await slow.promise;
        slowFinished = true;
      },
    );
    let settled = false;
    void running.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let i = 0; i < 5; i += 1) await tick();
    // the quick lane's next claim failed while the slow item was still in hand
    expect(claims).toBe(2);
    expect(settled).toBe(false);
    slow.release();
    await expect(running).rejects.toThrow('database gone');
    expect(slowFinished).toBe(true);
  });

  it('once stopped it claims nothing more but still hands out what it holds', async () => {
    let stopped = false;
    const asked: number[] = [];
    const done: string[] = [];
    await forEachClaimed(
      2,
      async (limit) => {
        asked.push(limit);
        // the stop comes while the claim is on its way: its items are still worked on
        stopped = true;
        return ['a', 'b'].slice(0, limit);
      },
      async (item) => {
        done.push(item);
      },
      () => stopped,
    );
    expect(asked).toEqual([2]);
    expect(done.sort()).toEqual(['a', 'b']);
  });
});
