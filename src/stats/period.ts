import { ValidationError } from '../http/errors.js';

/** The period rules every stats route shares; days are UTC calendar days `YYYY-MM-DD`. */

export const PERIODS = ['7d', '30d', '90d'] as const;
export type Period = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: Period = '30d';
export const PERIOD_DAYS: Record<Period, number> = { '7d': 7, '30d': 30, '90d': 90 };

/** endDate may be at most this many days after startDate (a leap year and then some). */
export const MAX_RANGE_DAYS = 366;

export interface DayRange {
  startDate: string;
  endDate: string;
}

export interface PeriodInput {
  period?: Period;
  startDate?: string;
  endDate?: string;
}

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds of a day's UTC midnight, or undefined for a malformed or impossible day (2026-02-30). */
export function dayToTime(day: string): number | undefined {
  const match = DAY_PATTERN.exec(day);
  if (!match) return undefined;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const time = Date.UTC(year, month - 1, date);
  const back = new Date(time);
  // Date.UTC maps years 0..99 to 1900..1999, and rolls 02-30 over into March: both fail the round trip.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== date)
    return undefined;
  return time;
}

export function timeToDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

export function utcToday(now: Date): string {
  return timeToDay(now.getTime());
}

export function addDays(day: string, days: number): string {
  return timeToDay(requireDay(day) + days * DAY_MS);
}

/** Whole days from `start` to `end` (0 when equal, negative when end is earlier). */
export function daysBetween(start: string, end: string): number {
  return Math.round((requireDay(end) - requireDay(start)) / DAY_MS);
}

/** Every day of the range, oldest first. */
export function eachDay(range: DayRange): string[] {
  const days: string[] = [];
  const last = requireDay(range.endDate);
  for (let time = requireDay(range.startDate); time <= last; time += DAY_MS) days.push(timeToDay(time));
  return days;
}

function requireDay(day: string): number {
  const time = dayToTime(day);
  if (time === undefined) throw new Error(`not a calendar day: ${day}`);
  return time;
}

/** A day given by a client, checked here as well as by the schema so that callers other than HTTP get the same rule. */
export function parseDay(day: string, path: string): string {
  if (dayToTime(day) === undefined) throw ValidationError.field(path, 'must be a calendar day YYYY-MM-DD');
  return day;
}

/**
 * The range a stats request asks for. `startDate` and `endDate` come together and win over `period`;
 * without them the period (default 30d) is the last N days ending today.
 */
export function resolvePeriod(input: PeriodInput, today: string): DayRange {
  const { startDate, endDate } = input;
  if (startDate === undefined && endDate === undefined) {
    const days = PERIOD_DAYS[input.period ?? DEFAULT_PERIOD];
    return { startDate: addDays(today, -(days - 1)), endDate: today };
  }
  if (startDate === undefined) throw ValidationError.field('/query/startDate', 'is required when endDate is given');
  if (endDate === undefined) throw ValidationError.field('/query/endDate', 'is required when startDate is given');
  parseDay(startDate, '/query/startDate');
  parseDay(endDate, '/query/endDate');
  const span = daysBetween(startDate, endDate);
  if (span < 0) throw ValidationError.field('/query/startDate', 'must be on or before endDate');
  if (span > MAX_RANGE_DAYS)
    throw ValidationError.field('/query/endDate', `must be at most ${MAX_RANGE_DAYS} days after startDate`);
  return { startDate, endDate };
}
