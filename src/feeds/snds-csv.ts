// Microsoft SNDS "automated data access" data: CSV, one line per sending address and day, no header.
// The column order is Microsoft's published one (SNDS FAQ, "Automated data access"; the same order
// the sndslib client reads: github.com/undersfx/sndslib): IP address, activity start, activity
// end, RCPT commands, DATA commands, message recipients, filter result (GREEN/YELLOW/RED),
// complaint rate, trap message period start, trap message period end, spam trap hits, sample HELO,
// sample MAIL FROM, comments. Only the first eleven are read. Remote input: one pass over the text,
// each line cut at MAX_LINE_CHARS, at most MAX_ROWS lines looked at.
import { isIP } from 'node:net';

export const MAX_ROWS = 20_000;
export const MAX_LINE_CHARS = 2_000;
const FIELDS_READ = 11;

export interface SndsRow {
  ip: string;
  /** `YYYY-MM-DD`: the day the activity starts. */
  day: string;
  filterResult: 'green' | 'yellow' | 'red';
  complaintRate: string;
  /** The upper bound of the complaint rate as a fraction (`< 0.1%` → 0.001), or null when unreadable. */
  complaintRateMax: number | null;
  trapHits: number;
  rcptCommands: number;
  dataCommands: number;
  messageRecipients: number;
}

export interface SetAsideRow {
  line: string;
  reason: string;
}

export interface SndsParse {
  rows: SndsRow[];
  setAside: SetAsideRow[];
}

const COUNT = /^\d{1,10}$/;
// `12/31/2019 7:00 PM` (the time is not needed: a row is one day's)
const ACTIVITY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: .{0,20})?$/;
const RATE = /^(<\s?)?(\d{1,3}(?:\.\d{1,4})?)\s?%$/;

function dayOf(text: string): string | null {
  const match = ACTIVITY.exec(text);
  if (!match) return null;
  const [, month, day, year] = match;
  const iso = `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
  const parsed = new Date(`${iso}T00:00:00Z`);
  return Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== iso ? null : iso;
}

function rateOf(text: string): number | null {
  const match = RATE.exec(text);
  return match ? Number(match[2]) / 100 : null;
}

function parseLine(line: string): SndsRow | string {
  const fields = line.split(',', FIELDS_READ + 1).map((field) => field.trim());
  if (fields.length < FIELDS_READ) return `${fields.length} fields, SNDS rows have at least ${FIELDS_READ}`;
  const [ip, start, , rcpt, data, recipients, filter, complaint, , , traps] = fields;
  if (isIP(ip) === 0) return 'the first field is not an IP address';
  const day = dayOf(start);
  if (day === null) return 'the activity start is not a date (MM/DD/YYYY)';
  const colour = filter.toLowerCase();
  if (colour !== 'green' && colour !== 'yellow' && colour !== 'red')
    return 'the filter result is not GREEN, YELLOW or RED';
  for (const count of [rcpt, data, recipients]) if (!COUNT.test(count)) return 'a message count is not a number';
  const trapHits = traps === '' ? 0 : COUNT.test(traps) ? Number(traps) : null;
  if (trapHits === null) return 'the trap hits are not a number';
  if (complaint.length > 20) return 'the complaint rate is too long';
  return {
    ip,
    day,
    filterResult: colour,
    complaintRate: complaint,
    complaintRateMax: rateOf(complaint),
    trapHits,
    rcptCommands: Number(rcpt),
    dataCommands: Number(data),
    messageRecipients: Number(recipients),
  };
}

/** The rows of an SNDS data answer; a line that is not a row is set aside with the reason, never fatal. */
export function parseSndsCsv(text: string): SndsParse {
  const rows: SndsRow[] = [];
  const setAside: SetAsideRow[] = [];
  let start = 0;
  let lines = 0;
  while (start < text.length && lines < MAX_ROWS) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, Math.min(end, start + MAX_LINE_CHARS)).replace(/\r$/, '');
    const tooLong = end - start > MAX_LINE_CHARS;
    start = end + 1;
    if (line.trim() === '') continue;
    lines += 1;
    const cut = line.slice(0, 200);
    if (tooLong) {
      setAside.push({ line: cut, reason: `a line of more than ${MAX_LINE_CHARS} characters` });
      continue;
    }
    const parsed = parseLine(line);
    if (typeof parsed === 'string') setAside.push({ line: cut, reason: parsed });
    else rows.push(parsed);
  }
  if (start < text.length) setAside.push({ line: '', reason: `more than ${MAX_ROWS} lines: the rest was not read` });
  return { rows, setAside };
}
