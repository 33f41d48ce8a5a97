/*
 * The hard bounds on what one mailbox sends, as pure arithmetic over its settings, its day's budget
 * and what it already sent: no database, no clock, so the planner, the sender and the reader ask
 * the same questions and tests can check every answer.
 *
 * The bounds, per mailbox and local day (its time zone):
 * - everything it sends (new threads, replies) counts against one budget, the day's plan target
 *   (itself never over `dailyLimit`); a day without a plan has no budget;
 * - nothing goes out outside the send window, nor on a weekend with `weekdaysOnly`;
 * - two sends are at least MIN_SEND_GAP_MS apart, across days and downtime too;
 * - a late start gets the share of the target that the rest of the window is of the whole window;
 * - mail more than OVERDUE_GRACE_MS late is spread again over what is left of the window, within
 *   the budget; what no longer fits is closed (a new thread: its day is over) or, for a reply,
 *   moved to the next window.
 */
import { addDays, isWeekend, localDay, localTimeToUtc, localWindow, validTimeZone } from '../calendar.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import type { Random } from './random.js';

/** Two sends of one mailbox are never closer than this. */
export const MIN_SEND_GAP_MS = 4 * 60_000;
/** Mail due longer ago than this is rescheduled, not sent at once. */
export const OVERDUE_GRACE_MS = 30 * 60_000;

export type ScheduleSettings = Pick<WarmupSettings, 'sendWindow' | 'timezone' | 'weekdaysOnly'>;

export interface Span {
  start: Date;
  end: Date;
}

/** The mailbox's local day of an instant: the day its sends count on. */
export function sendDayOf(settings: Pick<WarmupSettings, 'timezone'>, at: Date): string {
  return localDay(at, validTimeZone(settings.timezone));
}

export function isSendDay(settings: Pick<WarmupSettings, 'weekdaysOnly'>, day: string): boolean {
  return !(settings.weekdaysOnly && isWeekend(day));
}

/** A day's send window of a mailbox as instants. */
export function sendWindow(settings: Pick<WarmupSettings, 'sendWindow' | 'timezone'>, day: string): Span {
  return localWindow(day, settings.sendWindow, validTimeZone(settings.timezone));
}

/** A local day as instants [00:00, next 00:00). */
export function localDaySpan(settings: Pick<WarmupSettings, 'timezone'>, day: string): Span {
  const zone = validTimeZone(settings.timezone);
  return { start: localTimeToUtc(day, '00:00', zone), end: localTimeToUtc(addDays(day, 1), '00:00', zone) };
}

/** How many sends at least `gapMs` apart fit in [from, to). */
export function sendsThatFit(from: Date, to: Date, gapMs: number = MIN_SEND_GAP_MS): number {
  const span = to.getTime() - from.getTime();
  return span <= 0 ? 0 : Math.floor((span - 1) / gapMs) + 1;
}

/**
 * The day's budget when the day is planned at `at`: the whole target before the window opens, else
 * the share of it that the rest of the window is of the whole (rounded), and never more than fits
 * in the rest of the window at the minimum gap.
 */
export function lateShare(target: number, window: Span, at: Date): number {
  const length = window.end.getTime() - window.start.getTime();
  if (length <= 0 || at >= window.end) return 0;
  const from = at > window.start ? at : window.start;
  const share = Math.round((target * (window.end.getTime() - from.getTime())) / length);
  return Math.max(0, Math.min(target, share, sendsThatFit(from, window.end)));
}

/** What a mailbox has done on its current local day. */
export interface SenderDay {
  settings: ScheduleSettings;
  /** The local day these counts are of. */
  day: string;
  /** All the day allows: its plan's target (late share included); 0 when the day has no plan. */
  budget: number;
  /** Sends of the day so far, every kind. */
  sent: number;
  /** The mailbox's last send, whatever the day. */
  lastSentAt: Date | null;
}

/** The earliest instant from `now` on at which the mailbox may send once more on `today.day`; null when none is left. */
export function nextSendSlot(today: SenderDay, now: Date): Date | null {
  if (!isSendDay(today.settings, today.day) || today.sent >= today.budget) return null;
  const window = sendWindow(today.settings, today.day);
  let slot = Math.max(now.getTime(), window.start.getTime());
  if (today.lastSentAt) slot = Math.max(slot, today.lastSentAt.getTime() + MIN_SEND_GAP_MS);
  return slot < window.end.getTime() ? new Date(slot) : null;
}

/**
 * The earliest instant from `from` on that is inside a send window on a send day (the first
 * window of the next 8 days; every week has one).
 */
export function nextWindowOpening(settings: ScheduleSettings, from: Date): { at: Date; day: string } {
  const first = sendDayOf(settings, from);
  for (let i = 0; i < 8; i++) {
    const day = addDays(first, i);
    if (!isSendDay(settings, day)) continue;
    const window = sendWindow(settings, day);
    if (from < window.end) return { at: from > window.start ? from : window.start, day };
  }
  // unreachable with a valid window; the start of next week's window is a safe answer anyway
  const day = addDays(first, 7);
  return { at: sendWindow(settings, day).start, day };
}

/** The next window on a later day than `today`: where a reply goes when today has no room. */
export function nextDayOpening(settings: ScheduleSettings, today: string): { at: Date; day: string } {
  return nextWindowOpening(settings, localDaySpan(settings, addDays(today, 1)).start);
}

/** A planned send of one mailbox as the gate sees it. */
export interface WaitingSend {
  id: string;
  kind: string;
  dueAt: Date;
  planDay: string;
}

export type SendVerdict =
  | { id: string; action: 'send' }
  | { id: string; action: 'move'; dueAt: Date; planDay: string }
  | { id: string; action: 'close'; reason: string };

export const REASON_DAY_OVER = 'not sent: its day is over';
export const REASON_NO_ROOM = "not sent: no room left in the day's budget and send window";
export const REASON_REPLY_FIRST = 'not sent: a reply took its place in the day';
export const REASON_LATE_SHARE = 'not sent: the mailbox started the rest of its day late';
export const REASON_OTHER_RECIPIENT_DAY = 'not sent: it would have landed on another day of its recipient';
export const REASON_RECIPIENT_AWAY = 'not sent: its recipient answers automatically (out of office) for now';

export interface GateInput {
  today: SenderDay;
  now: Date;
  /** The due rows of the mailbox, in any order. */
  rows: readonly WaitingSend[];
  /** Planned sends of the mailbox due later today that these rows must leave room for (new threads only for new threads: replies come first). */
  reservedLater: { replies: number; threads: number };
  /** Test mode (`--ignore-schedule`): no window, gap or grace; the budget still holds. */
  ignoreSchedule: boolean;
  random: Random;
}

/**
 * The last word on a mailbox's due sends: at most one goes now (the gap allows no second one
 * within a cycle); the rest are moved to a later time that keeps every bound, or closed. Replies
 * first: they answer someone, a new thread can be left out.
 */
export function judgeDueSends(input: GateInput): SendVerdict[] {
  const { today, now, reservedLater, ignoreSchedule, random } = input;
  const ordered = [...input.rows].sort(
    (a, b) => Number(isReply(b)) - Number(isReply(a)) || a.dueAt.getTime() - b.dueAt.getTime(),
  );
  const verdicts: SendVerdict[] = [];
  const open: WaitingSend[] = [];
  for (const row of ordered) {
    // a new thread belongs to its day: a day that is over takes its unsent threads with it
    if (!isReply(row) && row.planDay < today.day)
      verdicts.push({ id: row.id, action: 'close', reason: REASON_DAY_OVER });
    // a later day's row (test mode claims ahead) waits for its day, untouched
    else if (row.planDay > today.day)
      verdicts.push({ id: row.id, action: 'move', dueAt: row.dueAt, planDay: row.planDay });
    else open.push(row);
  }

  if (ignoreSchedule) {
    let left = Math.max(0, today.budget - today.sent);
    for (const row of open) {
      if (left > 0) {
        left -= 1;
        verdicts.push({ id: row.id, action: 'send' });
      } else verdicts.push(overflow(row, today));
    }
    return verdicts;
  }

  let state = today;
  const slot = nextSendSlot(today, now);
  let rest = open;
  const first = open.find((row) => !isOverdue(row, now));
  if (slot && slot.getTime() <= now.getTime() && first && first.dueAt <= now) {
    verdicts.push({ id: first.id, action: 'send' });
    state = { ...today, sent: today.sent + 1, lastSentAt: now };
    rest = open.filter((row) => row !== first);
  }

  const next = nextSendSlot(state, now);
  const window = sendWindow(state.settings, state.day);
  // Mail that waited through downtime or a pause is mostly left out: only the share of it that the
  // rest of the window is of the whole window is sent, as for a mailbox that starts late.
  const late = rest.filter((row) => isOverdue(row, now) || row.planDay < state.day);
  const lateKept = new Set(late.slice(0, next ? lateShare(late.length, window, now) : 0));
  const fit = next ? sendsThatFit(next, window.end) : 0;
  const left = state.budget - state.sent - reservedLater.replies;
  const keep: WaitingSend[] = [];
  for (const row of rest) {
    const room = Math.min(fit, isReply(row) ? left : left - reservedLater.threads);
    if (keep.length < room && (!late.includes(row) || lateKept.has(row))) keep.push(row);
    else verdicts.push(overflow(row, state));
  }
  if (keep.length > 0 && next) {
    // Rows only held back by the gap keep their turn; late ones are spread over what is left.
    const times = spreadInside(keep.length, next, window.end, random);
    keep.forEach((row, i) => {
      const dueAt = late.includes(row) ? times[i] : next;
      verdicts.push({ id: row.id, action: 'move', dueAt, planDay: state.day });
    });
  }
  return verdicts;
}

/** The mailbox became active again (resumed, reconnected) after its day was planned, and sent this many since. */
export interface Restart {
  at: Date;
  sentSince: number;
}

/**
 * What the rest of the day may still send. Normally the day's budget less its sends; but a mailbox
 * that starts the rest of its day late gets at most the share of the budget that the rest of the
 * window is of the whole window, whatever was planned for later:
 * - back (resumed, reconnected) inside the window of a day planned before: the share from then on,
 *   less what it sent since, whether or not planned mail fell due while it was away;
 * - due mail late past the grace (it was paused, or the engine down): the share from now on.
 */
export function restOfDayBudget(
  today: SenderDay,
  due: readonly WaitingSend[],
  now: Date,
  restart: Restart | null = null,
): number {
  const window = sendWindow(today.settings, today.day);
  let allowed = Math.max(0, today.budget - today.sent);
  if (restart && restart.at > window.start) {
    allowed = Math.min(allowed, Math.max(0, lateShare(today.budget, window, restart.at) - restart.sentSince));
  }
  if (due.some((row) => isLate(row, now, today.day))) allowed = Math.min(allowed, lateShare(today.budget, window, now));
  return allowed;
}

/**
 * How many of the new threads planned later today must give way so that the day stays within
 * `allowed` more sends, the due replies first (replies come before new threads, also before threads
 * planned for later).
 */
export function threadsToDisplace(
  allowed: number,
  today: SenderDay,
  due: readonly WaitingSend[],
  later: { replies: number; threads: number },
): number {
  const replies = due.filter((row) => isReply(row) && row.planDay <= today.day).length;
  const need = Math.min(replies, Math.max(0, allowed - later.replies));
  const overflow = later.threads + later.replies + need - allowed;
  return Math.min(later.threads, Math.max(0, overflow));
}

function isLate(row: WaitingSend, now: Date, day: string): boolean {
  return isOverdue(row, now) || row.planDay < day;
}

function isReply(row: WaitingSend): boolean {
  return row.kind === 'reply';
}

function isOverdue(row: WaitingSend, now: Date): boolean {
  return now.getTime() - row.dueAt.getTime() > OVERDUE_GRACE_MS;
}

/** No room today: a reply waits for the next day's window, a new thread is closed. */
function overflow(row: WaitingSend, today: SenderDay): SendVerdict {
  if (!isReply(row)) return { id: row.id, action: 'close', reason: REASON_NO_ROOM };
  const opening = nextDayOpening(today.settings, today.day);
  return { id: row.id, action: 'move', dueAt: opening.at, planDay: opening.day };
}

/**
 * `count` instants in [from, to), sorted, at least MIN_SEND_GAP_MS apart (the caller made sure they
 * fit): random offsets in the span left after the gaps, then the gaps added. Whole seconds.
 */
export function spreadInside(count: number, from: Date, to: Date, random: Random): Date[] {
  if (count <= 0) return [];
  const span = Math.max(0, to.getTime() - from.getTime() - 1000);
  const gap = count > 1 ? Math.min(MIN_SEND_GAP_MS, Math.floor(span / (count - 1) / 1000) * 1000) : 0;
  const slack = Math.max(0, span - gap * (count - 1));
  const offsets = Array.from({ length: count }, () => Math.floor((random() * slack) / 1000) * 1000).sort(
    (a, b) => a - b,
  );
  return offsets.map((offset, i) => new Date(from.getTime() + offset + gap * i));
}
