/*
 * The hard bounds of issue 11, checked over every mailbox and every local day of a simulated run,
 * on what the mail world saw leave (not on what the database claims). Each bound is computed here
 * from the mailbox's own settings; the engine's records are used only for the ramp position of a
 * day (`mailbox_plans.warmup_day`), and that is checked to grow by at most one a day.
 *
 * Bounds, per mailbox (a mailbox's own round-trip check message to itself is not warmup mail and
 * is left out of all of them):
 * - window: every send lies inside the send window of its local day, never on a weekend with
 *   `weekdaysOnly` (replies and follow-ups too);
 * - min-gap: two sends are at least MIN_GAP_MS (4 min) apart, across days and downtime;
 * - daily-limit / ramp-target: everything sent on a local day ≤ dailyLimit and ≤ that day's ramp
 *   target min(dailyLimit, round(ramp(warmupDay) × dayVariance)), at full health; a day with sends
 *   must have a plan;
 * - late-start: a mailbox not active when its window opened (created or resumed later in the
 *   window) sends at most ceil(target × window left / window length) that day;
 * - while-paused: nothing leaves a mailbox before it is created or while it is paused;
 * - inbound: the new threads a mailbox receives on its local day ≤ its own ramp target of that day
 *   (or of its last planned day) + INBOUND_SLACK, and every reply it receives answers mail it sent;
 * - reciprocity: a mailbox active for a whole week of the run that sent in it received in it, in
 *   pools of at least three mailboxes;
 * - exactly-once: every Message-ID leaves once, and only Message-IDs the engine planned leave;
 * - engine-error: no step of a cycle threw.
 */
import { addDays, isWeekend, localDay, localWindow, validTimeZone } from '../../src/calendar.js';
import { dailyTarget } from '../../src/engine/plan-volume.js';
import type { WorldSend } from './mail-world.js';
import type { DayPlan, MailboxHistory, PoolRun } from './harness.js';

/** Two sends of one mailbox are never closer than this (issue 11: 4 minutes). */
export const MIN_GAP_MS = 4 * 60_000;
/** New threads a mailbox receives in a day may exceed its own ramp target of the day by this much (README). */
export const INBOUND_SLACK = 2;
const WEEK_MS = 7 * 24 * 3_600_000;

export type InvariantName =
  | 'window'
  | 'weekend'
  | 'min-gap'
  | 'daily-limit'
  | 'ramp-target'
  | 'ramp-jump'
  | 'no-plan'
  | 'late-start'
  | 'while-paused'
  | 'inbound'
  | 'reciprocity'
  | 'exactly-once'
  | 'engine-error';

export interface Violation {
  invariant: InvariantName;
  mailbox: string;
  day: string;
  detail: string;
  sends: string[];
}

function timeIn(at: Date, timeZone: string): string {
  return at.toLocaleTimeString('en-GB', { timeZone, hour12: false });
}

function describeSend(send: WorldSend, timeZone: string): string {
  const kind = send.inReplyTo ? 'reply' : 'new';
  return `${send.at.toISOString()} (${timeIn(send.at, timeZone)} local) → ${send.to} [${kind}] ${send.messageId}`;
}

/** Whether the mailbox exists and is not paused at `at`. */
function activeAt(history: MailboxHistory, at: Date): boolean {
  const lastStart = history.activeFrom.filter((t) => t <= at).at(-1);
  if (!lastStart) return false;
  return !history.pausedAt.some((p) => p > lastStart && p <= at);
}

function settingsOf(history: MailboxHistory) {
  return { ...history.spec.warmup, timezone: validTimeZone(history.spec.warmup.timezone), language: 'en' };
}

/** The ramp target of a day at full health, from the mailbox's settings and the day's ramp position. */
function rampTarget(history: MailboxHistory, day: string, warmupDay: number): number {
  return dailyTarget({
    settings: history.spec.warmup,
    warmupDay: Math.max(1, warmupDay),
    mailboxId: history.id,
    day,
    volumeFactor: 1,
  });
}

/** The latest plan on or before `day`. */
function planOnOrBefore(plans: Map<string, DayPlan> | undefined, day: string): [string, DayPlan] | undefined {
  let best: [string, DayPlan] | undefined;
  for (const entry of plans ?? []) if (entry[0] <= day && (!best || entry[0] > best[0])) best = entry;
  return best;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k) ?? [];
    group.push(item);
    groups.set(k, group);
  }
  return groups;
}

export function checkInvariants(run: PoolRun): Violation[] {
  const violations: Violation[] = [];
  const byEmail = new Map([...run.mailboxes.values()].map((h) => [h.spec.email.toLowerCase(), h]));
  const warmupSends = run.sends.filter((s) => s.from !== s.to);
  const sentBy = groupBy(warmupSends, (s) => s.from);
  const receivedBy = groupBy(warmupSends, (s) => s.to);

  for (const error of run.cycleErrors) {
    violations.push({
      invariant: 'engine-error',
      mailbox: '-',
      day: error.at,
      detail: `step ${error.step} threw: ${error.message}`,
      sends: [],
    });
  }

  const seen = new Map<string, WorldSend>();
  for (const send of warmupSends) {
    const first = seen.get(send.messageId);
    const tz = byEmail.get(send.from)?.spec.warmup.timezone ?? 'UTC';
    if (first) {
      violations.push({
        invariant: 'exactly-once',
        mailbox: send.from,
        day: send.at.toISOString(),
        detail: `Message-ID sent twice`,
        sends: [describeSend(first, tz), describeSend(send, tz)],
      });
    } else if (!run.plannedMessageIds.has(send.messageId)) {
      violations.push({
        invariant: 'exactly-once',
        mailbox: send.from,
        day: send.at.toISOString(),
        detail: 'a message left that the engine never planned',
        sends: [describeSend(send, tz)],
      });
    }
    seen.set(send.messageId, send);
  }

  for (const history of run.mailboxes.values()) {
    const email = history.spec.email.toLowerCase();
    const settings = settingsOf(history);
    const tz = settings.timezone;
    const plans = run.plans.get(history.id);
    const sends = [...(sentBy.get(email) ?? [])].sort((a, b) => a.at.getTime() - b.at.getTime());
    const v = (invariant: InvariantName, day: string, detail: string, offending: WorldSend[]) =>
      violations.push({
        invariant,
        mailbox: `${email} (${history.id})`,
        day,
        detail,
        sends: offending.map((s) => describeSend(s, tz)),
      });

    // ramp position grows by at most one per planned day
    let previous: DayPlan | undefined;
    for (const [day, plan] of [...(plans ?? [])].sort((a, b) => a[0].localeCompare(b[0]))) {
      if (plan.warmupDay > (previous?.warmupDay ?? 0) + 1) {
        v('ramp-jump', day, `warmup day ${plan.warmupDay} after ${previous?.warmupDay ?? 0}`, []);
      }
      previous = plan;
    }

    for (let i = 0; i < sends.length; i++) {
      const send = sends[i];
      const day = localDay(send.at, tz);
      const window = localWindow(day, settings.sendWindow, tz);
      if (send.at < window.start || send.at > window.end) {
        v('window', day, `outside ${settings.sendWindow.start}–${settings.sendWindow.end} ${tz}`, [send]);
      }
      if (settings.weekdaysOnly && isWeekend(day)) v('weekend', day, 'sent on a weekend with weekdaysOnly', [send]);
      if (!activeAt(history, send.at)) v('while-paused', day, 'sent while paused or before it was created', [send]);
      const before = sends[i - 1];
      if (before && send.at.getTime() - before.at.getTime() < MIN_GAP_MS) {
        const gap = Math.round((send.at.getTime() - before.at.getTime()) / 1000);
        const afterDowntime = run.pool.downtimes.some(
          (d) => send.at >= d.to && send.at.getTime() - d.to.getTime() < 3_600_000,
        );
        v('min-gap', day, `${gap} s apart${afterDowntime ? ' (within an hour after downtime)' : ''}`, [before, send]);
      }
    }

    for (const [day, daySends] of groupBy(sends, (s) => localDay(s.at, tz))) {
      const plan = plans?.get(day);
      if (daySends.length > settings.dailyLimit) {
        v('daily-limit', day, `${daySends.length} sent, dailyLimit ${settings.dailyLimit}`, daySends);
      }
      if (!plan) {
        v('no-plan', day, `${daySends.length} sent on a day without a plan (target 0)`, daySends);
        continue;
      }
      const target = rampTarget(history, day, plan.warmupDay);
      if (daySends.length > target) {
        v(
          'ramp-target',
          day,
          `${daySends.length} sent, ramp target ${target} (warmup day ${plan.warmupDay})`,
          daySends,
        );
      }
      const window = localWindow(day, settings.sendWindow, tz);
      if (!activeAt(history, window.start)) {
        const start = history.activeFrom.find((t) => t > window.start && t < window.end);
        if (start) {
          const share = Math.ceil(
            (target * (window.end.getTime() - start.getTime())) / (window.end.getTime() - window.start.getTime()),
          );
          if (daySends.length > share) {
            v(
              'late-start',
              day,
              `${daySends.length} sent after a start at ${timeIn(start, tz)}; share ${share} of target ${target}`,
              daySends,
            );
          }
        }
      }
    }

    const ownMessageIds = new Set(sends.map((s) => s.messageId));
    for (const [day, inbound] of groupBy(receivedBy.get(email) ?? [], (s) => localDay(s.at, tz))) {
      const plan = planOnOrBefore(plans, day);
      const own = plan
        ? rampTarget(history, day, plan[1].warmupDay)
        : Math.min(settings.startVolume, settings.dailyLimit);
      const threads = inbound.filter((s) => !s.inReplyTo);
      if (threads.length > own + INBOUND_SLACK) {
        v('inbound', day, `${threads.length} new threads received, own ramp target ${own} + ${INBOUND_SLACK}`, threads);
      }
      const strays = inbound.filter((s) => s.inReplyTo !== undefined && !ownMessageIds.has(s.inReplyTo));
      if (strays.length > 0) v('inbound', day, `${strays.length} replies to mail it never sent`, strays);
    }

    if (run.mailboxes.size >= 3) {
      for (
        let weekStart = run.pool.start.getTime();
        weekStart + WEEK_MS <= run.pool.end.getTime();
        weekStart += WEEK_MS
      ) {
        const from = new Date(weekStart);
        const to = new Date(weekStart + WEEK_MS);
        const wholeWeek = activeAt(history, from) && !history.pausedAt.some((p) => p > from && p < to);
        if (!wholeWeek) continue;
        const sent = sends.filter((s) => s.at >= from && s.at < to);
        const received = (receivedBy.get(email) ?? []).filter((s) => s.at >= from && s.at < to);
        if (sent.length > 0 && received.length === 0) {
          v(
            'reciprocity',
            `${localDay(from, 'UTC')}..${addDays(localDay(to, 'UTC'), -1)}`,
            `sent ${sent.length}, received none`,
            sent.slice(0, 5),
          );
        }
      }
    }
  }
  return violations;
}

/** How much of the run the checks covered. */
export interface Coverage {
  /** Local days each mailbox existed in the run, summed over the mailboxes. */
  mailboxDays: number;
  /** Of those, the days on which the mailbox sent warmup mail. */
  sendingDays: number;
  /** Mailboxes that sent warmup mail at all. */
  sendingMailboxes: number;
}

export function coverage(run: PoolRun): Coverage {
  let mailboxDays = 0;
  const lastInstant = new Date(run.pool.end.getTime() - 1);
  for (const history of run.mailboxes.values()) {
    const tz = validTimeZone(history.spec.warmup.timezone);
    const last = localDay(lastInstant, tz);
    for (let day = localDay(history.activeFrom[0], tz); day <= last; day = addDays(day, 1)) mailboxDays += 1;
  }
  const sending = new Set<string>();
  const sendingDays = new Set<string>();
  const zoneOf = new Map([...run.mailboxes.values()].map((h) => [h.spec.email.toLowerCase(), h.spec.warmup.timezone]));
  for (const send of run.sends) {
    if (send.from === send.to) continue;
    sending.add(send.from);
    sendingDays.add(`${send.from} ${localDay(send.at, validTimeZone(zoneOf.get(send.from) ?? 'UTC'))}`);
  }
  return { mailboxDays, sendingDays: sendingDays.size, sendingMailboxes: sending.size };
}

/** A few lines per invariant broken: the seed to rerun, the mailbox, the day and the sends. */
export function reportViolations(run: PoolRun, violations: Violation[], rerun: string, perInvariant = 3): string {
  const counts = new Map<string, number>();
  for (const violation of violations) counts.set(violation.invariant, (counts.get(violation.invariant) ?? 0) + 1);
  const lines = [
    `seed ${run.pool.seed}: ${run.pool.size} mailboxes, ${run.pool.days} days, ${run.pool.workers} worker(s), ` +
      `${run.pool.downtimes.length} outage(s), ${run.sends.length} sends, ${violations.length} violations`,
    `  by invariant: ${[...counts].map(([name, n]) => `${name} ${n}`).join(', ')}`,
    `  rerun: ${rerun}`,
  ];
  const shown = new Map<string, number>();
  for (const violation of violations) {
    const n = shown.get(violation.invariant) ?? 0;
    if (n >= perInvariant) continue;
    shown.set(violation.invariant, n + 1);
    lines.push(`  [${violation.invariant}] ${violation.mailbox} day ${violation.day}: ${violation.detail}`);
    for (const send of violation.sends.slice(0, 8)) lines.push(`      ${send}`);
    if (violation.sends.length > 8) lines.push(`      … ${violation.sends.length - 8} more`);
  }
  return lines.join('\n');
}
