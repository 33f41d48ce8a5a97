/*
 * People differ: each mailbox reads its warmup mail in its own way — how much of it it opens,
 * how often it flags, how eager it is to answer, how long it lets mail sit — and keeps that way.
 * The traits are drawn once from a seed of the mailbox id, so every worker and every restart
 * gives a mailbox the same habits, and two mailboxes almost never share them.
 *
 * What a mailbox does with one message is planned when it finds the message: each action at its
 * own heavy-tailed (log-normal) delay, moved into the mailbox's waking hours. The plan is stored
 * with the message, so it is carried out across several syncs and survives a crash.
 */
import { addDays, localDay, localTime, localTimeToUtc } from '../calendar.js';
import { seedFrom } from './message-content.js';
import { seededRandom, type Random } from './random.js';
import type { EngagementPlan } from './warmup-messages.repository.js';

/** Per-mailbox trait ranges: the guarantees the README states. Rates are fractions. */
export const HABIT_RANGES = {
  /** Share of received warmup mail the mailbox opens. */
  openRate: { min: 0.8, max: 0.98 },
  /** Share of opened mail it flags: far below a third. */
  flagRate: { min: 0.02, max: 0.12 },
  /** The user's `replyRate` times this (at most 100 %) is the chance of answering a first message. */
  replyFactor: { min: 0.8, max: 1.2 },
} as const;

export type DelayKind = 'rescue' | 'open' | 'flag' | 'reply' | 'file';

/**
 * Each delay is log-normal: its median differs per mailbox (drawn log-uniformly in `median`),
 * its spread too (`sigma`), and one message's delay is clamped to `min`..`max` minutes.
 * rescue: after finding it in spam; open: after finding it (or rescuing it); flag and reply:
 * after opening it; file: after the last of those.
 */
export const DELAY_RANGES: Record<DelayKind, { median: { min: number; max: number }; min: number; max: number }> = {
  rescue: { median: { min: 10, max: 180 }, min: 2, max: 24 * 60 },
  open: { median: { min: 15, max: 240 }, min: 2, max: 36 * 60 },
  flag: { median: { min: 1, max: 20 }, min: 0.5, max: 12 * 60 },
  reply: { median: { min: 20, max: 240 }, min: 3, max: 24 * 60 },
  file: { median: { min: 5, max: 120 }, min: 1, max: 24 * 60 },
};
export const SIGMA_RANGE = { min: 0.7, max: 1.2 } as const;

/** The local hours in which a person acts on mail (07:00–22:00 in the mailbox's time zone). */
export const WAKING_START = '07:00';
export const WAKING_END = '22:00';

/** A thread ends after this many messages; a reply to a reply is rarer than a first reply. */
export const MAX_TURNS = 4;
export const REPLY_DECAY = 0.35;

/** One mailbox's way of reading mail. */
export interface Traits {
  openRate: number;
  flagRate: number;
  replyFactor: number;
  /** Median delay in minutes, per kind. */
  medianMinutes: Record<DelayKind, number>;
  /** Log-normal shape: how far one message's delay strays from the median. */
  sigma: number;
}

const DELAY_KINDS: readonly DelayKind[] = ['rescue', 'open', 'flag', 'reply', 'file'];

/** The traits of a mailbox: the same for the same id, in any process, at any time. */
export function traitsOf(mailboxId: string): Traits {
  const random = seededRandom(seedFrom(`habits:${mailboxId}`));
  const between = (range: { min: number; max: number }) => range.min + random() * (range.max - range.min);
  const logBetween = (range: { min: number; max: number }) =>
    range.min * Math.exp(random() * Math.log(range.max / range.min));
  const openRate = between(HABIT_RANGES.openRate);
  const flagRate = between(HABIT_RANGES.flagRate);
  const replyFactor = between(HABIT_RANGES.replyFactor);
  const sigma = between(SIGMA_RANGE);
  const medianMinutes = {} as Record<DelayKind, number>;
  for (const kind of DELAY_KINDS) medianMinutes[kind] = logBetween(DELAY_RANGES[kind].median);
  return { openRate, flagRate, replyFactor, sigma, medianMinutes };
}

/** replyRate (percent) times the mailbox's factor for a first reply, 35 % of that for each further turn. */
export function replyProbability(replyRatePercent: number, turn: number, replyFactor = 1): number {
  if (turn >= MAX_TURNS) return 0;
  return Math.min(1, (replyRatePercent / 100) * replyFactor) * REPLY_DECAY ** (turn - 1);
}

/**
 * The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9):
 * a log-normal draw from one uniform number, monotone in it, so random() = 0 is the shortest delay.
 */
export function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    );
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/** One message's delay of a kind, in milliseconds: log-normal around the mailbox's median, clamped. */
export function delayMs(traits: Traits, kind: DelayKind, random: Random): number {
  const range = DELAY_RANGES[kind];
  const p = Math.min(1 - 1e-9, Math.max(1e-9, random()));
  const minutes = traits.medianMinutes[kind] * Math.exp(traits.sigma * normalQuantile(p));
  return Math.round(Math.min(range.max, Math.max(range.min, minutes)) * 60_000);
}

export function isWakingHours(at: Date, timeZone: string): boolean {
  const time = localTime(at, timeZone);
  return time >= WAKING_START && time < WAKING_END;
}

/** `when` if it falls in waking hours, else within the first hour of the next local morning. */
export function intoWakingHours(when: Date, timeZone: string, random: Random): Date {
  if (isWakingHours(when, timeZone)) return when;
  const day = localDay(when, timeZone);
  const wakes = localTimeToUtc(day, WAKING_START, timeZone);
  const morning = when < wakes ? wakes : localTimeToUtc(addDays(day, 1), WAKING_START, timeZone);
  return new Date(morning.getTime() + Math.round(random() * 60) * 60_000);
}

export interface EngagementInput {
  /** When the message was found (or, for mail found before plans existed, when it is planned). */
  foundAt: Date;
  inSpam: boolean;
  /** The turn of the message in its thread (1 opens it). */
  turn: number;
  /** The user's replyRate, percent. */
  replyRatePercent: number;
  timeZone: string;
  traits: Traits;
  random: Random;
  /** Everything due at `foundAt` (run-once --ignore-schedule); the choices are still drawn. */
  atOnce: boolean;
}

/**
 * What the mailbox will do with a message it found, and when: rescue (mail in spam always), open
 * (at its open rate), flag and reply (only what it opened), file. Each step waits its own delay
 * after the step it follows and lands in waking hours, so the steps fall in separate syncs.
 */
export function planEngagement(input: EngagementInput): EngagementPlan {
  const { traits, random, timeZone } = input;
  const after = (from: Date, kind: DelayKind): Date =>
    input.atOnce ? from : intoWakingHours(new Date(from.getTime() + delayMs(traits, kind, random)), timeZone, random);

  const rescueAt = input.inSpam ? after(input.foundAt, 'rescue') : null;
  const seenAt = after(rescueAt ?? input.foundAt, 'open');
  const opens = random() < traits.openRate;
  const flags = opens && random() < traits.flagRate;
  const replies = opens && random() < replyProbability(input.replyRatePercent, input.turn, traits.replyFactor);
  const flagAt = flags ? after(seenAt, 'flag') : null;
  const replyAt = replies ? after(seenAt, 'reply') : null;
  const last = Math.max(seenAt.getTime(), flagAt?.getTime() ?? 0, replyAt?.getTime() ?? 0);
  return { rescueAt, openAt: opens ? seenAt : null, flagAt, replyAt, fileAt: after(new Date(last), 'file') };
}
