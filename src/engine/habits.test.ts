import { describe, expect, it } from 'vitest';
import {
  DELAY_RANGES,
  delayMs,
  HABIT_RANGES,
  intoWakingHours,
  isWakingHours,
  MAX_TURNS,
  normalQuantile,
  planEngagement,
  replyProbability,
  SIGMA_RANGE,
  traitsOf,
  type DelayKind,
  type EngagementInput,
  type Traits,
} from './habits.js';
import { seededRandom } from './random.js';

const FOUND = new Date('2026-03-12T09:00:00Z'); // 10:00 in Berlin
const minute = 60_000;
const ids = Array.from({ length: 2000 }, (_, i) => `mbx_${i.toString(36)}_${(i * 7919).toString(16)}`);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

describe('traits of a mailbox', () => {
  it('are the same for the same mailbox, every time', () => {
    expect(traitsOf('mbx_frank')).toEqual(traitsOf('mbx_frank'));
    expect(traitsOf('mbx_frank')).not.toEqual(traitsOf('mbx_erin'));
  });

  it('stay within the documented human ranges and spread over them', () => {
    const all = ids.map(traitsOf);
    const check = (values: number[], range: { min: number; max: number }) => {
      expect(Math.min(...values)).toBeGreaterThanOrEqual(range.min);
      expect(Math.max(...values)).toBeLessThanOrEqual(range.max);
      // mailboxes differ: the lowest and highest tenth of the range are both used
      const width = range.max - range.min;
      expect(Math.min(...values)).toBeLessThan(range.min + width / 10);
      expect(Math.max(...values)).toBeGreaterThan(range.max - width / 10);
    };
    check(
      all.map((t) => t.openRate),
      HABIT_RANGES.openRate,
    );
    check(
      all.map((t) => t.flagRate),
      HABIT_RANGES.flagRate,
    );
    check(
      all.map((t) => t.replyFactor),
      HABIT_RANGES.replyFactor,
    );
    check(
      all.map((t) => t.sigma),
      SIGMA_RANGE,
    );
    for (const kind of Object.keys(DELAY_RANGES) as DelayKind[]) {
      check(
        all.map((t) => t.medianMinutes[kind]),
        DELAY_RANGES[kind].median,
      );
    }
    // flagging far below a third for everyone
    expect(Math.max(...all.map((t) => t.flagRate))).toBeLessThanOrEqual(0.12);
    // no two mailboxes in a couple of thousand share an open rate
    expect(new Set(all.map((t) => t.openRate)).size).toBe(all.length);
  });
});

describe('reply probability', () => {
  it('is replyRate for a first message, scaled by the mailbox, rarer each turn, never past the last', () => {
    expect(replyProbability(30, 1)).toBeCloseTo(0.3);
    expect(replyProbability(30, 2)).toBeCloseTo(0.105);
    expect(replyProbability(30, 3)).toBeCloseTo(0.03675);
    expect(replyProbability(30, 1, 1.2)).toBeCloseTo(0.36);
    expect(replyProbability(30, 1, 0.8)).toBeCloseTo(0.24);
    expect(replyProbability(100, 1, 1.2)).toBe(1);
    expect(replyProbability(0, 1, 1.2)).toBe(0);
    expect(replyProbability(100, MAX_TURNS)).toBe(0);
  });
});

describe('delays', () => {
  it('the normal quantile matches known values', () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.326348, 5);
    expect(normalQuantile(0.999)).toBeCloseTo(3.090232, 5);
  });

  it('are log-normal around the mailbox median: heavy-tailed, clamped to their bounds', () => {
    const traits: Traits = {
      ...traitsOf('mbx_any'),
      sigma: 1,
      medianMinutes: { rescue: 30, open: 60, flag: 5, reply: 90, file: 20 },
    };
    const random = seededRandom(42);
    const draws = Array.from({ length: 20_000 }, () => delayMs(traits, 'open', random) / minute);
    expect(quantile(draws, 0.5)).toBeGreaterThan(60 * 0.95);
    expect(quantile(draws, 0.5)).toBeLessThan(60 * 1.05);
    // heavy right tail: the mean is above the median (e^(σ²/2) ≈ 1.65 for σ = 1), the 95th
    // percentile e^1.645 ≈ 5.2 times it, the 5th a fifth of it
    const mean = draws.reduce((sum, d) => sum + d, 0) / draws.length;
    expect(mean / 60).toBeGreaterThan(1.5);
    expect(mean / 60).toBeLessThan(1.8);
    expect(quantile(draws, 0.95) / 60).toBeGreaterThan(4.6);
    expect(quantile(draws, 0.95) / 60).toBeLessThan(5.8);
    expect(quantile(draws, 0.05) / 60).toBeGreaterThan(0.17);
    expect(quantile(draws, 0.05) / 60).toBeLessThan(0.22);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(DELAY_RANGES.open.min);
    expect(Math.max(...draws)).toBeLessThanOrEqual(DELAY_RANGES.open.max);
    // the extremes of random() are the bounds
    expect(delayMs(traits, 'open', () => 0)).toBe(DELAY_RANGES.open.min * minute);
    expect(delayMs(traits, 'open', () => 0.999999999999)).toBe(DELAY_RANGES.open.max * minute);
  });
});

describe('waking hours', () => {
  it('leave daytime alone and move night-time to the next morning in the mailbox’s zone', () => {
    // 23:30 in Berlin (22:30 UTC): the next day after 07:00 Berlin time, within the first hour
    const night = intoWakingHours(new Date('2026-03-12T22:30:00Z'), 'Europe/Berlin', () => 0.5);
    expect(night.toISOString()).toBe('2026-03-13T06:30:00.000Z');
    // 05:00 in New York: the same day's morning
    const early = intoWakingHours(new Date('2026-03-12T09:00:00Z'), 'America/New_York', () => 0);
    expect(early.toISOString()).toBe('2026-03-12T11:00:00.000Z');
    const day = new Date('2026-03-12T03:00:00Z'); // noon in Tokyo
    expect(intoWakingHours(day, 'Asia/Tokyo', () => 0).getTime()).toBe(day.getTime());
    expect(isWakingHours(day, 'Asia/Tokyo')).toBe(true);
    expect(isWakingHours(day, 'Europe/Berlin')).toBe(false);
  });
});

describe('the plan for one message', () => {
  const input = (overrides: Partial<EngagementInput>): EngagementInput => ({
    foundAt: FOUND,
    inSpam: false,
    turn: 1,
    replyRatePercent: 50,
    timeZone: 'Europe/Berlin',
    traits: traitsOf('mbx_frank'),
    random: seededRandom(1),
    atOnce: false,
    ...overrides,
  });

  it('spreads rescue, open, flag, reply and filing over separate times, in order, in waking hours', () => {
    const random = seededRandom(7);
    const traits = traitsOf('mbx_frank');
    const plans = Array.from({ length: 3000 }, () => planEngagement(input({ inSpam: true, random, traits })));
    let opened = 0;
    let flagged = 0;
    let replied = 0;
    const gaps: number[] = [];
    for (const plan of plans) {
      expect(plan.rescueAt).not.toBeNull();
      const rescueAt = plan.rescueAt!.getTime();
      expect(rescueAt).toBeGreaterThan(FOUND.getTime());
      const steps = [plan.rescueAt, plan.openAt, plan.flagAt, plan.replyAt, plan.fileAt].filter((s) => s !== null);
      for (const step of steps) expect(isWakingHours(step, 'Europe/Berlin'), step.toISOString()).toBe(true);
      if (plan.openAt) {
        opened += 1;
        expect(plan.openAt.getTime()).toBeGreaterThan(rescueAt);
        gaps.push(plan.openAt.getTime() - rescueAt);
      } else {
        expect(plan.flagAt).toBeNull();
        expect(plan.replyAt).toBeNull();
      }
      for (const step of [plan.flagAt, plan.replyAt]) {
        if (!step) continue;
        expect(step.getTime()).toBeGreaterThan(plan.openAt!.getTime());
        expect(plan.fileAt.getTime()).toBeGreaterThan(step.getTime());
      }
      if (plan.flagAt) flagged += 1;
      if (plan.replyAt) replied += 1;
      expect(plan.fileAt.getTime()).toBeGreaterThan((plan.openAt ?? plan.rescueAt)!.getTime());
      // everything is over well before the reader gives up on a message (7 days)
      expect(plan.fileAt.getTime() - FOUND.getTime()).toBeLessThan(6 * 24 * 60 * minute);
    }
    // the rates are the mailbox's own (binomial, 3000 draws: well within 4 standard deviations)
    const near = (count: number, n: number, p: number) =>
      expect(Math.abs(count - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)) + 1);
    near(opened, plans.length, traits.openRate);
    near(flagged, opened, traits.flagRate);
    near(replied, opened, replyProbability(50, 1, traits.replyFactor));
    // no two steps of a message in the same minute as a rule
    expect(gaps.filter((gap) => gap < 2 * minute).length).toBe(0);
  });

  it('differs between mailboxes: one files its mail fast, another lets it sit', () => {
    const random = seededRandom(3);
    const medianTimeToFile = (id: string) =>
      quantile(
        Array.from(
          { length: 300 },
          () =>
            planEngagement(input({ traits: traitsOf(id), random, timeZone: 'UTC' })).fileAt.getTime() - FOUND.getTime(),
        ),
        0.5,
      );
    const medians = ids.slice(0, 20).map(medianTimeToFile);
    expect(Math.max(...medians) / Math.min(...medians)).toBeGreaterThan(3);
  });

  it('does everything at once when told to, with the choices still drawn', () => {
    const plan = planEngagement(input({ inSpam: true, atOnce: true, random: () => 0 }));
    expect(plan).toEqual({ rescueAt: FOUND, openAt: FOUND, flagAt: FOUND, replyAt: FOUND, fileAt: FOUND });
    const none = planEngagement(input({ atOnce: true, random: () => 0.999 }));
    expect(none).toEqual({ rescueAt: null, openAt: null, flagAt: null, replyAt: null, fileAt: FOUND });
  });

  it('never answers the last turn of a thread, nor with replyRate 0', () => {
    const random = seededRandom(5);
    for (let i = 0; i < 500; i += 1) {
      expect(planEngagement(input({ turn: MAX_TURNS, replyRatePercent: 100, random })).replyAt).toBeNull();
      expect(planEngagement(input({ replyRatePercent: 0, random })).replyAt).toBeNull();
    }
  });
});
