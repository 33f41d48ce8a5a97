// Pools of the sizes people connect (3 to 25 mailboxes, each on its own domain), whose ramps
// outgrow what the pool can carry, run for three weeks on the real engine (harness.ts). The volume
// plateaus at the pool's capacity and never collapses; every hard bound and the pair and receiver
// rules hold. (Under a cap of 3 threads per pair in 7 days these pools sent their week's mail in
// the first days and then next to nothing.)
import type * as NodeCrypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { addDays, isWeekend, localDay } from '../../src/calendar.js';
import { INBOUND_SLACK, PAIR_SPACING_MS, PAIR_THREADS_PER_DAY, RECEIVER_SHARE } from '../../src/engine/partners.js';
import { testDialect } from '../helpers/test-database.js';
import { runPool, type PoolRun } from './harness.js';
import { checkInvariants, reportViolations } from './invariants.js';
import type { SimMailbox, SimPool } from './scenario.js';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof NodeCrypto>();
  const { seededRandomBytes, useRealRandomBytes } = await import('./seeded-bytes.js');
  useRealRandomBytes(actual.randomBytes);
  return { ...actual, default: { ...actual, randomBytes: seededRandomBytes }, randomBytes: seededRandomBytes };
});

const DAYS = 21;
/** Monday 2 March 2026. */
const START = new Date('2026-03-02T00:00:00.000Z');
const ZONES = ['Europe/Berlin', 'UTC', 'America/New_York', 'Europe/London'];

/**
 * A ramp from 2 to a limit of 25 in the small pools: more than 3 or 5 mailboxes carry (6 and 12 new
 * threads a day), so it plateaus. The larger pools carry more than any such ramp; they take one whose
 * mail the run can afford (a simulated send costs about 0.1 s): they prove the ramp is reached and
 * never collapses there too.
 */
const RAMPS: Record<number, { startVolume: number; rampUpIncrement: number; dailyLimit: number }> = {
  3: { startVolume: 2, rampUpIncrement: 2, dailyLimit: 25 },
  5: { startVolume: 2, rampUpIncrement: 2, dailyLimit: 16 },
  10: { startVolume: 1, rampUpIncrement: 1, dailyLimit: 5 },
  25: { startVolume: 1, rampUpIncrement: 1, dailyLimit: 2 },
};

/**
 * `size` mailboxes, each on a domain of its own, created together before their windows open, never
 * paused, no outage, clean placement (so no health action), in windows of 8 to 9 hours across a few
 * time zones; every third one weekdays only.
 */
function capacityPool(size: number): SimPool {
  const mailboxes: SimMailbox[] = Array.from({ length: size }, (_, i) => ({
    email: `user${i}@d${i}.sim`,
    warmup: {
      ...RAMPS[size],
      replyRate: 30,
      sendWindow: { start: i % 2 === 0 ? '09:00' : '08:30', end: '17:30' },
      timezone: ZONES[i % ZONES.length],
      weekdaysOnly: i % 3 === 2,
    },
    spamRate: 0,
    createAt: new Date(START.getTime() + i * 60_000),
    pauses: [],
  }));
  return {
    seed: 700 + size,
    size,
    days: DAYS,
    stepMinutes: 15,
    start: START,
    end: new Date(START.getTime() + DAYS * 86_400_000),
    mailboxes,
    downtimes: [],
    workers: 1,
  };
}

/** Each mailbox's sends per its local day: new threads and replies, or new threads only. */
function sendsPerDay(run: PoolRun, newThreadsOnly = false): Map<string, Map<string, number>> {
  const result = new Map<string, Map<string, number>>();
  const zoneOf = new Map(run.pool.mailboxes.map((m) => [m.email, m.warmup.timezone]));
  for (const send of run.sends) {
    if (send.from === send.to || (newThreadsOnly && send.inReplyTo !== undefined)) continue;
    const day = localDay(send.at, zoneOf.get(send.from) ?? 'UTC');
    const days = result.get(send.from) ?? new Map<string, number>();
    days.set(day, (days.get(day) ?? 0) + 1);
    result.set(send.from, days);
  }
  return result;
}

const runDays = (run: PoolRun) =>
  Array.from({ length: DAYS }, (_, i) => addDays(run.pool.start.toISOString().slice(0, 10), i));

/**
 * A weekday whose sends (new threads and replies) fall below half of what the mailbox sent on the
 * weekdays before it (the median of the last three, from the first day it sent on): the pool
 * letting it down. The median, not the day before alone: a weekdays-only mailbox answers its
 * weekend's mail on Monday, and a day after such a backlog of replies is no collapse.
 */
function collapses(run: PoolRun): string[] {
  const found: string[] = [];
  for (const [email, days] of sendsPerDay(run)) {
    const weekdays = runDays(run).filter((day) => !isWeekend(day));
    const first = weekdays.findIndex((day) => (days.get(day) ?? 0) > 0);
    // the run's last day is cut short by its end
    for (let i = first + 1; first >= 0 && i < weekdays.length - 1; i++) {
      const before = weekdays
        .slice(Math.max(first, i - 3), i)
        .map((day) => days.get(day) ?? 0)
        .sort((x, y) => x - y);
      const usual = before[Math.floor((before.length - 1) / 2)];
      const after = days.get(weekdays[i]) ?? 0;
      if (after < usual / 2) found.push(`${email}: ${after} on ${weekdays[i]} after ${before.join(', ')}`);
    }
  }
  return found;
}

/** Mailboxes that never sent min(its ramp, the pool's stated capacity) on a day up to day 14. */
function neverReached(run: PoolRun): string[] {
  const found: string[] = [];
  const sent = sendsPerDay(run);
  const byId = new Map([...run.mailboxes.values()].map((h) => [h.id, h.spec.email]));
  const lastDay = runDays(run)[13];
  for (const [id, plans] of run.plans) {
    const email = byId.get(id)!;
    const days = [...plans.entries()].filter(([day]) => day <= lastDay);
    const reached = days.some(
      ([day, plan]) => (sent.get(email)?.get(day) ?? 0) >= Math.min(plan.target, plan.capacity ?? plan.target),
    );
    // …and the pool's capacity is never stated as nothing once the pool is warm: every pair carries a thread a day
    const settled = days.filter(([day]) => day >= runDays(run)[7]);
    const starved = settled.filter(
      ([, plan]) => (plan.capacity ?? plan.target) < Math.min(plan.target, run.pool.size - 1),
    );
    if (!reached) found.push(`${email} never sent min(ramp, capacity) by ${lastDay}`);
    for (const [day, plan] of starved) found.push(`${email} on ${day}: capacity ${plan.capacity} of ${plan.target}`);
  }
  return found;
}

/**
 * Breaks of the pair and receiver rules by the new threads the world saw: how many a pair opened on
 * the sender's day, a sender's share of a receiver's day, and the spacing, all by the moment each
 * was sent. The spacing holds at the send too: a thread held behind other due mail (one send per
 * mailbox and cycle, 4 minutes apart, replies first) went out up to an hour late in these 15-minute
 * cycles, and without the sender's own check came within 45 minutes of the pair's next.
 */
function brokenPairRules(run: PoolRun): string[] {
  const found: string[] = [];
  const zoneOf = new Map(run.pool.mailboxes.map((m) => [m.email, m.warmup.timezone]));
  const pairDay = new Map<string, number[]>();
  const receivedFrom = new Map<string, Map<string, number>>();
  for (const send of run.sends) {
    if (send.from === send.to || send.inReplyTo !== undefined) continue;
    const senderDay = localDay(send.at, zoneOf.get(send.from) ?? 'UTC');
    const key = `${send.from} → ${send.to} ${senderDay}`;
    const planned = run.plannedAt.get(send.messageId);
    if (planned === undefined) found.push(`${key}: ${send.messageId} sent, never seen planned`);
    pairDay.set(key, [...(pairDay.get(key) ?? []), send.at.getTime()]);
    const receiverDay = `${send.to} ${localDay(send.at, zoneOf.get(send.to) ?? 'UTC')}`;
    const from = receivedFrom.get(receiverDay) ?? new Map<string, number>();
    from.set(send.from, (from.get(send.from) ?? 0) + 1);
    receivedFrom.set(receiverDay, from);
  }
  for (const [key, times] of pairDay) {
    if (times.length > PAIR_THREADS_PER_DAY) found.push(`${key}: ${times.length} new threads`);
    times.sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++)
      if (times[i] - times[i - 1] < PAIR_SPACING_MS)
        found.push(`${key}: two threads sent ${times[i] - times[i - 1]} ms apart`);
  }
  // one sender's share of a receiver's day: at most RECEIVER_SHARE of the most it may receive
  // (its ramp's day, at most its limit, + slack), at least one
  for (const [receiverDay, senders] of receivedFrom) {
    const total = [...senders.values()].reduce((a, b) => a + b, 0);
    const most = Math.max(...senders.values());
    const limit = RAMPS[run.pool.size].dailyLimit;
    const ceiling = Math.max(1, Math.floor(RECEIVER_SHARE * (limit + INBOUND_SLACK)));
    if (most > ceiling) found.push(`${receiverDay}: ${most} of ${total} new threads from one sender`);
  }
  return found;
}

/**
 * Each mailbox's days as the engine planned them and the world saw them, for a failure message:
 * `day target/planned/capacity sent(replies)`: the plan's target, its new threads and the pool's
 * stated capacity, then what left the mailbox on that local day, of which replies.
 */
function dayTable(run: PoolRun): string {
  const sent = sendsPerDay(run);
  const newThreads = sendsPerDay(run, true);
  const lines: string[] = [];
  for (const [id, plans] of run.plans) {
    const email = run.mailboxes.get(id)?.spec.email ?? id;
    const days = runDays(run).map((day) => {
      const plan = plans.get(day);
      const all = sent.get(email)?.get(day) ?? 0;
      const replies = all - (newThreads.get(email)?.get(day) ?? 0);
      const planned = plan ? `${plan.target}/${plan.planned}/${plan.capacity ?? '-'}` : '-';
      return `${day.slice(5)} ${planned} ${all}(${replies})`;
    });
    lines.push(`${email}: ${days.join(' | ')}`);
  }
  return lines.sort().join('\n');
}

describe('pools whose ramps outgrow them plateau at their capacity', () => {
  // PostgreSQL runs the smallest: the larger ones exercise the arithmetic, not the dialect
  const sizes = testDialect === 'sqlite' ? [3, 5, 10, 25] : [3];
  for (const size of sizes) {
    it(`${size} mailboxes on ${size} domains over ${DAYS} days: no collapse, capacity reached, every bound holds`, async () => {
      const started = performance.now();
      const run = await runPool(capacityPool(size));
      const perDay = sendsPerDay(run);
      console.info(
        `capacity pool of ${size}: ${run.sends.length} sends in ${Math.round(performance.now() - started)} ms; ` +
          `user0 per day: ${runDays(run)
            .map((d) => perDay.get('user0@d0.sim')?.get(d) ?? 0)
            .join(' ')}`,
      );
      const violations = checkInvariants(run);
      if (violations.length > 0) expect.fail(reportViolations(run, violations, `capacity pool of ${size}`));
      expect(collapses(run), `weekday sends falling by more than half\n${dayTable(run)}`).toEqual([]);
      expect(neverReached(run), `capacity reached by day 14\n${dayTable(run)}`).toEqual([]);
      expect(brokenPairRules(run), 'pair and receiver rules').toEqual([]);
    }, 600_000);
  }
});
