/*
 * Calendar arithmetic, one place for all of it: days are `YYYY-MM-DD` strings, either UTC days
 * (statistics count a day as the UTC day an event happened) or local days in a mailbox's time zone
 * (the planner's day, send windows, waking hours). Intl only: no time zone library needed.
 */

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

// ---------------------------------------------------------------------------------------------
// Days as UTC calendar days

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

/** Calendar day (UTC) of an instant: statistics count a day as the day the event happened. */
export function utcDay(at: Date): string {
  return timeToDay(at.getTime());
}

function requireDay(day: string): number {
  const time = dayToTime(day);
  if (time === undefined) throw new Error(`not a calendar day: ${day}`);
  return time;
}

export function addDays(day: string, days: number): string {
  return timeToDay(requireDay(day) + days * DAY_MS);
}

/** Whole days from `start` to `end` (0 when equal, negative when end is earlier). */
export function daysBetween(start: string, end: string): number {
  return Math.round((requireDay(end) - requireDay(start)) / DAY_MS);
}

/** Every day from `startDate` to `endDate`, oldest first. */
export function eachDay(range: { startDate: string; endDate: string }): string[] {
  const days: string[] = [];
  const last = requireDay(range.endDate);
  for (let time = requireDay(range.startDate); time <= last; time += DAY_MS) days.push(timeToDay(time));
  return days;
}

export function isWeekend(day: string): boolean {
  const weekday = new Date(requireDay(day)).getUTCDay();
  return weekday === 0 || weekday === 6;
}

// ---------------------------------------------------------------------------------------------
// Local days and wall-clock times in a time zone

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's wall-clock formatter (en-US, 24 h, every field), made once per zone: making one costs far more than formatting. */
export function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone itself when the runtime knows it, else UTC: a bad setting must not stop the planner. */
export function validTimeZone(timeZone: string): string {
  try {
    formatterFor(timeZone);
    return timeZone;
  } catch {
    return 'UTC';
  }
}

/** The IANA name as Intl spells it (`europe/berlin` → `Europe/Berlin`), or undefined when unknown. */
export function canonicalTimeZone(name: string): string | undefined {
  // Intl also takes offsets such as "+01:00" on newer engines; those are not IANA names.
  if (!/^[A-Za-z]/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** Wall-clock fields of an instant in a time zone. */
function wallClock(
  at: Date,
  timeZone: string,
): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(at)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour,
    minute: parts.minute,
    second: parts.second,
  };
}

/** How far the zone's wall clock is ahead of UTC at that instant. */
function zoneOffsetMs(at: Date, timeZone: string): number {
  const w = wallClock(at, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at.getTime() / 1000) * 1000;
}

/** The calendar day (`YYYY-MM-DD`) of an instant in a time zone. */
export function localDay(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** The wall-clock time (`HH:MM`) of an instant in a time zone. */
export function localTime(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  return `${String(w.hour).padStart(2, '0')}:${String(w.minute).padStart(2, '0')}`;
}

/**
 * The instant a wall-clock time of a day has in a time zone. Across a DST change a skipped time
 * (spring forward) moves forward by the gap, and a repeated time (fall back) takes its first occurrence.
 */
export function localTimeToUtc(day: string, time: string, timeZone: string): Date {
  const [year, month, date] = day.split('-').map(Number);
  const [hour, minute] = time.split(':').map(Number);
  const wall = Date.UTC(year, month - 1, date, hour, minute);
  // The offsets in force half a day before and after; they differ only around a change.
  const before = wall - zoneOffsetMs(new Date(wall - DAY_MS / 2), timeZone);
  const after = wall - zoneOffsetMs(new Date(wall + DAY_MS / 2), timeZone);
  const shows = (instant: number) => {
    const w = wallClock(new Date(instant), timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) === wall;
  };
  const valid = [before, after].filter(shows);
  return new Date(valid.length > 0 ? Math.min(...valid) : before);
}

/** The instants a local window `start`..`end` (`HH:MM`) has on a day in a time zone. */
export function localWindow(
  day: string,
  window: { start: string; end: string },
  timeZone: string,
): { start: Date; end: Date } {
  return { start: localTimeToUtc(day, window.start, timeZone), end: localTimeToUtc(day, window.end, timeZone) };
}
