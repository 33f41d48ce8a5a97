// The planner's arithmetic, without a database: the ramp, the per-day variance, the target, the
// calendar of a mailbox's time zone, stored settings, and how sends are spread over the window.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, isWeekend, localDay, localTimeToUtc } from '../calendar.js';
import {
  dailyTarget,
  dayVariance,
  LIGHT_DAY_FACTOR,
  rampVolume,
  retimeUnplaced,
  spreadSendTimes,
} from './plan-volume.js';
import { seededRandom } from './random.js';
import { MIN_SEND_GAP_MS } from './send-budget.js';
const HOUR = 3_600_000;

describe('planner arithmetic', () => {
  const settings = { startVolume: 2, rampUpIncrement: 2, dailyLimit: 40 };

  it('ramps by the increment from the start volume and stops at the daily limit', () => {
    expect([1, 2, 3, 10, 20, 21, 100].map((n) => rampVolume(settings, n))).toEqual([2, 4, 6, 20, 40, 40, 40]);
    expect(rampVolume({ startVolume: 5, rampUpIncrement: 0, dailyLimit: 40 }, 30)).toBe(5);
    expect(rampVolume(settings, 0)).toBe(2);
  });

  it('has a stable per-day variance: 0.6 on about one day in seven, else 0.75–1.10', () => {
    expect(dayVariance('mbx_a', '2025-03-03')).toBe(dayVariance('mbx_a', '2025-03-03'));
    const factors = Array.from({ length: 7000 }, (_, i) => dayVariance('mbx_a', addDays('2025-01-01', i)));
    const light = factors.filter((f) => f === LIGHT_DAY_FACTOR);
    const normal = factors.filter((f) => f !== LIGHT_DAY_FACTOR);
    expect(light.length / factors.length).toBeGreaterThan(1 / 7 - 0.02);
    expect(light.length / factors.length).toBeLessThan(1 / 7 + 0.02);
    expect(Math.min(...normal)).toBeGreaterThanOrEqual(0.75);
    expect(Math.max(...normal)).toBeLessThanOrEqual(1.1);
    expect(normal.reduce((a, b) => a + b, 0) / normal.length).toBeCloseTo(0.925, 1);
    // another mailbox has its light days on other days
    const other = Array.from({ length: 70 }, (_, i) => dayVariance('mbx_b', addDays('2025-01-01', i)));
    expect(other).not.toEqual(factors.slice(0, 70));
  });

  it('targets ramp × variance × health factor, rounded, at least 1, never above the daily limit', () => {
    fc.assert(
      fc.property(
        fc.record({
          startVolume: fc.integer({ min: 1, max: 500 }),
          rampUpIncrement: fc.integer({ min: 0, max: 100 }),
          dailyLimit: fc.integer({ min: 1, max: 500 }),
          warmupDay: fc.integer({ min: 1, max: 400 }),
          dayIndex: fc.nat(3000),
          volumeFactor: fc.constantFrom(1, 0.5),
        }),
        ({ warmupDay, dayIndex, volumeFactor, ...ramp }) => {
          const day = addDays('2025-01-01', dayIndex);
          const target = dailyTarget({ settings: ramp, warmupDay, mailboxId: 'mbx_x', day, volumeFactor });
          const expected = Math.round(rampVolume(ramp, warmupDay) * dayVariance('mbx_x', day) * volumeFactor);
          expect(target).toBe(Math.min(ramp.dailyLimit, Math.max(1, expected)));
          expect(target).toBeGreaterThanOrEqual(1);
          expect(target).toBeLessThanOrEqual(ramp.dailyLimit);
        },
      ),
    );
    // at the limit, a 1.10 day stays at the limit
    const highDay = Array.from({ length: 100 }, (_, i) => addDays('2025-01-01', i)).find(
      (d) => dayVariance('mbx_x', d) > 1.05,
    )!;
    expect(dailyTarget({ settings, warmupDay: 50, mailboxId: 'mbx_x', day: highDay, volumeFactor: 1 })).toBe(40);
    expect(dailyTarget({ settings, warmupDay: 50, mailboxId: 'mbx_x', day: highDay, volumeFactor: 0.5 })).toBe(
      Math.round(40 * dayVariance('mbx_x', highDay) * 0.5),
    );
  });

  it('knows the local day and turns local times into instants, across DST changes', () => {
    expect(localDay(new Date('2025-03-03T23:30:00Z'), 'Europe/Berlin')).toBe('2025-03-04');
    expect(localDay(new Date('2025-03-03T23:30:00Z'), 'America/Los_Angeles')).toBe('2025-03-03');
    expect(localDay(new Date('2025-03-03T12:00:00Z'), 'Pacific/Auckland')).toBe('2025-03-04');
    expect(localTimeToUtc('2025-01-15', '08:00', 'Europe/Berlin').toISOString()).toBe('2025-01-15T07:00:00.000Z');
    expect(localTimeToUtc('2025-07-15', '08:00', 'Europe/Berlin').toISOString()).toBe('2025-07-15T06:00:00.000Z');
    expect(localTimeToUtc('2025-07-15', '18:00', 'America/New_York').toISOString()).toBe('2025-07-15T22:00:00.000Z');
    expect(localTimeToUtc('2025-03-03', '08:00', 'UTC').toISOString()).toBe('2025-03-03T08:00:00.000Z');
    // 02:30 does not exist on 30 March in Berlin: it becomes 03:30 CEST
    expect(localTimeToUtc('2025-03-30', '02:30', 'Europe/Berlin').toISOString()).toBe('2025-03-30T01:30:00.000Z');
    // 02:30 happens twice on 26 October: the first one (CEST)
    expect(localTimeToUtc('2025-10-26', '02:30', 'Europe/Berlin').toISOString()).toBe('2025-10-26T00:30:00.000Z');
  });

  it('knows weekends and adds days', () => {
    expect(['2025-03-01', '2025-03-02', '2025-03-03', '2025-03-07'].map(isWeekend)).toEqual([true, true, false, false]);
    expect(addDays('2025-02-27', 2)).toBe('2025-03-01');
    expect(addDays('2025-03-01', -6)).toBe('2025-02-23');
  });

  it('spreads send times inside the window, sorted, at least the minimum gap apart', () => {
    const from = new Date('2025-03-03T08:00:00Z');
    fc.assert(
      fc.property(fc.nat(60), fc.integer({ min: 1, max: 10 * HOUR }), fc.integer(), (count, spanMs, seed) => {
        const to = new Date(from.getTime() + spanMs);
        const times = spreadSendTimes(count, from, to, MIN_SEND_GAP_MS, seededRandom(seed));
        expect(times).toHaveLength(count);
        const wanted = count > 1 ? Math.floor(Math.min(MIN_SEND_GAP_MS, spanMs / (count - 1)) / 1000) * 1000 : 0;
        times.forEach((t, i) => {
          expect(t.getTime()).toBeGreaterThanOrEqual(from.getTime());
          expect(t.getTime()).toBeLessThanOrEqual(to.getTime());
          if (i > 0) expect(t.getTime() - times[i - 1].getTime()).toBeGreaterThanOrEqual(wanted);
        });
      }),
    );
    // a roomy window keeps the full gap and uses the whole window
    const day = spreadSendTimes(40, from, new Date('2025-03-03T18:00:00Z'), MIN_SEND_GAP_MS, seededRandom(3));
    expect(Math.min(...day.slice(1).map((t, i) => t.getTime() - day[i].getTime()))).toBeGreaterThanOrEqual(
      MIN_SEND_GAP_MS,
    );
    expect(day[day.length - 1].getTime() - day[0].getTime()).toBeGreaterThan(6 * HOUR);
  });

  it('moves a send the pair spacing left without a partner to a free time of the window, the gap kept', () => {
    const from = new Date('2025-03-03T08:00:00Z');
    const to = new Date('2025-03-03T17:00:00Z');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer(), fc.nat(1000), (count, seed, refuseBefore) => {
        const random = seededRandom(seed);
        const sends: Array<{ time: Date; partner?: string }> = spreadSendTimes(
          count,
          from,
          to,
          MIN_SEND_GAP_MS,
          random,
        ).map((time) => ({ time }));
        // a partner takes a send only in the second half of the window (as a pair's spacing would refuse the first)
        const noon = from.getTime() + (to.getTime() - from.getTime()) / 2 + refuseBefore;
        const place = (send: { time: Date; partner?: string }) => {
          send.partner = send.time.getTime() >= noon ? 'partner' : undefined;
        };
        sends.forEach(place);
        const before = new Map(sends.map((send) => [send, send.time.getTime()]));
        retimeUnplaced(sends, from, to, MIN_SEND_GAP_MS, random, place);
        for (const send of sends) {
          expect(send.time.getTime()).toBeGreaterThanOrEqual(from.getTime());
          expect(send.time.getTime()).toBeLessThanOrEqual(to.getTime());
          const moved = send.time.getTime() !== before.get(send);
          // a placed send never moves; a moved one is at least the gap from every other send
          if (before.get(send)! >= noon) expect(moved).toBe(false);
          if (moved)
            for (const other of sends)
              if (other !== send)
                expect(Math.abs(other.time.getTime() - send.time.getTime())).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
        }
        // most of the refused ones found a place: 8 tries at even odds each
        const refused = sends.filter((send) => before.get(send)! < noon).length;
        if (refused >= 4 && count <= 20)
          expect(sends.filter((send) => send.partner === undefined).length).toBeLessThan(refused);
      }),
    );
  });
});
