/*
 * A simulated pool drawn from one seed: its mailboxes (settings, time zone, weekdaysOnly, spam
 * rate), when each is created (most on day one, some late, some in the middle of their send
 * window), when each is paused and resumed, and when the engine is down. The same seed and sizes
 * always draw the same pool.
 */
import { addDays, localTimeToUtc } from '../../src/calendar.js';
import { randomInt, seededRandom, type Random } from '../../src/engine/random.js';
import type { WarmupSettings } from '../../src/mailboxes/mailboxes.schemas.js';

export interface PoolShape {
  seed: number;
  /** Mailboxes in the pool. */
  size: number;
  days: number;
  /** Base interval between engine cycles; each is drawn at ±25 % of it. */
  stepMinutes: number;
  /** Run every cycle and every mailbox's sync, idle or not (slow; proves the shortcuts change nothing). */
  everyCycle?: boolean;
}

export interface SimMailbox {
  email: string;
  warmup: Omit<WarmupSettings, 'language'>;
  /** Share of its inbound mail its provider files as spam. */
  spamRate: number;
  createAt: Date;
  /** Paused at `from`, resumed at `to` (or never within the run). */
  pauses: Array<{ from: Date; to: Date | null }>;
}

export interface SimPool extends PoolShape {
  start: Date;
  end: Date;
  mailboxes: SimMailbox[];
  /** The engine runs no cycle in [from, to). */
  downtimes: Array<{ from: Date; to: Date }>;
  /** Engine workers running each cycle at once (1 or 2), on the one database. */
  workers: number;
}

/** Time zones with whole, half and odd offsets, both hemispheres' DST, and the date line. */
export const TIME_ZONES = [
  'UTC',
  'Europe/Berlin',
  'Europe/London',
  'America/New_York',
  'America/Los_Angeles',
  'America/Sao_Paulo',
  'Asia/Kolkata',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Pacific/Auckland',
  'Asia/Kathmandu',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
] as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Monday 2 March 2026: the US (8 March) and EU (29 March) clock changes fall inside long runs. */
const FIRST_MONDAY = '2026-03-02';

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

function hhmm(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function between(random: Random, from: number, to: number): Date {
  return new Date(from + Math.floor(random() * Math.max(0, to - from)));
}

function drawWarmup(random: Random): SimMailbox['warmup'] {
  const dailyLimit = pick(random, [2, 3, 5, 8, 10, 15, 20, 30, 40]);
  const startVolume = randomInt(random, 1, Math.min(dailyLimit, 5));
  // windows from 1 h to 12 h, starting between 05:00 and 12:30
  const start = randomInt(random, 10, 25) * 30;
  const length = randomInt(random, 2, 24) * 30;
  return {
    startVolume,
    rampUpIncrement: randomInt(random, 0, 4),
    dailyLimit,
    replyRate: pick(random, [0, 10, 30, 50, 80, 100]),
    sendWindow: { start: hhmm(start), end: hhmm(Math.min(start + length, 23 * 60 + 59)) },
    timezone: pick(random, TIME_ZONES),
    weekdaysOnly: random() < 0.4,
  };
}

/** A moment inside the mailbox's send window on a day of the run, or anywhere in the day. */
function momentOnDay(random: Random, day: string, warmup: SimMailbox['warmup']): Date {
  if (random() < 0.6) {
    const open = localTimeToUtc(day, warmup.sendWindow.start, warmup.timezone).getTime();
    const close = localTimeToUtc(day, warmup.sendWindow.end, warmup.timezone).getTime();
    return between(random, open, close);
  }
  const midnight = localTimeToUtc(day, '00:00', warmup.timezone).getTime();
  return between(random, midnight, midnight + DAY);
}

export function drawPool(shape: PoolShape): SimPool {
  const random = seededRandom(shape.seed);
  const firstDay = addDays(FIRST_MONDAY, randomInt(random, 0, 6));
  const start = new Date(`${firstDay}T00:00:00.000Z`);
  const end = new Date(start.getTime() + shape.days * DAY);
  const domains = Math.max(1, Math.ceil(shape.size / 3));
  const dayOf = (index: number) => addDays(firstDay, index);

  const mailboxes: SimMailbox[] = [];
  for (let i = 0; i < shape.size; i++) {
    const warmup = drawWarmup(random);
    const late = i > 0 && random() < 0.25;
    const createAt = late
      ? momentOnDay(random, dayOf(randomInt(random, 1, Math.max(1, Math.floor((shape.days * 2) / 3)))), warmup)
      : between(random, start.getTime(), start.getTime() + 12 * HOUR);
    const pauses: SimMailbox['pauses'] = [];
    let from = createAt.getTime();
    for (let p = 0; p < 2 && random() < 0.3; p++) {
      const pauseAt = momentOnDay(
        random,
        dayOf(Math.floor((from - start.getTime()) / DAY) + randomInt(random, 0, 5)),
        warmup,
      );
      if (pauseAt.getTime() <= from) break;
      // paused for two hours up to four days; sometimes for good
      const resume = random() < 0.1 ? null : new Date(pauseAt.getTime() + randomInt(random, 2, 96) * HOUR);
      pauses.push({ from: pauseAt, to: resume });
      if (!resume) break;
      from = resume.getTime() + HOUR;
    }
    mailboxes.push({
      email: `user${i}@d${randomInt(random, 0, domains - 1)}.sim`,
      warmup,
      spamRate: random() < 0.15 ? 0.3 + random() * 0.3 : random() * 0.1,
      createAt,
      pauses,
    });
  }

  const downtimes: SimPool['downtimes'] = [];
  const outages = randomInt(random, 0, 3);
  for (let d = 0; d < outages; d++) {
    const from = between(random, start.getTime() + DAY, end.getTime() - DAY);
    // an hour up to three days
    const to = new Date(Math.min(end.getTime(), from.getTime() + randomInt(random, 1, 72) * HOUR));
    if (!downtimes.some((o) => o.from < to && from < o.to)) downtimes.push({ from, to });
  }
  downtimes.sort((a, b) => a.from.getTime() - b.from.getTime());
  // about one pool in four has two workers running each cycle at the same time
  const workers = random() < 0.25 ? 2 : 1;
  return { ...shape, start, end, mailboxes, downtimes, workers };
}
