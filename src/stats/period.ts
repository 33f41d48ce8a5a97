import { addDays, dayToTime, daysBetween } from '../calendar.js';
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
