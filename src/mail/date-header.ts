// The Date header as a person's mail client writes it: the local time of the sender's zone with
// its own offset (`Thu, 12 Mar 2026 15:20:00 +0100`), not UTC with `+0000` whatever the zone.
import { formatterFor } from '../calendar.js';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Minutes the zone is ahead of UTC at `at` (negative west of Greenwich). */
export function zoneOffsetMinutes(at: Date, timeZone: string): number {
  const parts = formatterFor(timeZone).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const local = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  const whole = Math.floor(at.getTime() / 1000) * 1000;
  return Math.round((local - whole) / 60_000);
}

/** RFC 5322 date-time of `at` in `timeZone` (an IANA name; an unknown one falls back to UTC). */
export function formatDateHeader(at: Date, timeZone: string): string {
  let offset: number;
  try {
    offset = zoneOffsetMinutes(at, timeZone);
  } catch {
    offset = 0;
  }
  const local = new Date(at.getTime() + offset * 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${WEEKDAYS[local.getUTCDay()]}, ${local.getUTCDate()} ${MONTHS[local.getUTCMonth()]} ${local.getUTCFullYear()} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())} ` +
    `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`
  );
}
