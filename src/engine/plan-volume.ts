/*
 * The planner's volume arithmetic: a day's target from the ramp, its stable variance and the
 * health factor, and the send times spread over the window.
 */
import { createHash } from 'node:crypto';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import type { Random } from './random.js';

/** About one day in seven is a light day. */
export const LIGHT_DAY_CHANCE = 1 / 7;
export const LIGHT_DAY_FACTOR = 0.6;
export const VARIANCE_MIN = 0.75;
export const VARIANCE_MAX = 1.1;

// ---------------------------------------------------------------------------------------------
// Volume arithmetic: pure, so tests can predict every day of a ramp.

/** The ramp before variance: min(dailyLimit, startVolume + rampUpIncrement × (n − 1)). */
export function rampVolume(
  settings: Pick<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit'>,
  warmupDay: number,
): number {
  return Math.min(settings.dailyLimit, settings.startVolume + settings.rampUpIncrement * (Math.max(1, warmupDay) - 1));
}

/**
 * The day's variance factor: 0.6 on a light day (about one in seven), else 0.75–1.10. Derived from
 * a hash of mailbox and day, so it is stable: replanning, another worker or a test computing the
 * expected volume get the same factor, and mailboxes do not all have their light day together.
 */
export function dayVariance(mailboxId: string, day: string): number {
  const digest = createHash('sha256').update(`${mailboxId}:${day}`).digest();
  const light = digest.readUInt32BE(0) / 2 ** 32;
  if (light < LIGHT_DAY_CHANCE) return LIGHT_DAY_FACTOR;
  const spread = digest.readUInt32BE(4) / 2 ** 32;
  return VARIANCE_MIN + (VARIANCE_MAX - VARIANCE_MIN) * spread;
}

export interface TargetInput {
  settings: Pick<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit'>;
  warmupDay: number;
  mailboxId: string;
  day: string;
  /** The health guard's factor: 1, or 0.5 while spam placement is high. */
  volumeFactor: number;
}

/** Sends wanted on a day: the ramp × variance × health factor, rounded, at least 1, never over dailyLimit. */
export function dailyTarget({ settings, warmupDay, mailboxId, day, volumeFactor }: TargetInput): number {
  const raw = rampVolume(settings, warmupDay) * dayVariance(mailboxId, day) * volumeFactor;
  return Math.min(settings.dailyLimit, Math.max(1, Math.round(raw)));
}

/**
 * `count` instants spread at random over [from, to], sorted, at least `minGapMs` apart (or as far
 * apart as the span allows): random offsets in the span left after the gaps, then the gaps added.
 * Whole seconds, so the gaps stay exact.
 */
export function spreadSendTimes(count: number, from: Date, to: Date, minGapMs: number, random: Random): Date[] {
  if (count <= 0) return [];
  const span = Math.max(0, to.getTime() - from.getTime());
  const gap = count > 1 ? Math.floor(Math.min(minGapMs, span / (count - 1)) / 1000) * 1000 : 0;
  const slack = span - gap * (count - 1);
  const offsets = Array.from({ length: count }, () => Math.floor((random() * slack) / 1000) * 1000).sort(
    (a, b) => a - b,
  );
  return offsets.map((offset, i) => new Date(from.getTime() + offset + gap * i));
}

/** Other times a send left without a partner tries, in its window. */
export const RETIME_TRIES = 8;

/**
 * A send the pair spacing left without a partner (its time fell within PAIR_SPACING_MS of the
 * pair's other threads, and no other partner was free) tries a few other times in [from, to], each
 * at least `minGapMs` from the sender's other sends: the pool's capacity counts a pair's threads
 * spread over the window, and random times would otherwise lose some of it. `place` chooses again.
 */
export function retimeUnplaced<Send extends { time: Date; partner?: string }>(
  sends: Send[],
  from: Date,
  to: Date,
  minGapMs: number,
  random: Random,
  place: (send: Send) => void,
): void {
  const span = to.getTime() - from.getTime();
  if (span <= 0) return;
  for (const send of sends) {
    for (let attempt = 0; send.partner === undefined && attempt < RETIME_TRIES; attempt++) {
      const time = from.getTime() + Math.floor((random() * span) / 1000) * 1000;
      if (sends.some((other) => other !== send && Math.abs(other.time.getTime() - time) < minGapMs)) continue;
      send.time = new Date(time);
      place(send);
    }
  }
}
