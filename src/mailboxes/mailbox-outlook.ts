/**
 * A mailbox's status in plain words, from one definition that the API, the dashboard's lists and
 * its "Needs attention" card all read: what it does next and when, why it sends less than its
 * ramp, what needs attention (each a documented threshold), and whether it is ready for campaigns.
 */
import { localDay, localWindow, validTimeZone, addDays } from '../calendar.js';
import type { Attention, MailboxOutlook, MailboxStatus, WarmupSettings } from './mailboxes.schemas.js';

/** Spam placement over this share of the mail found in 7 days needs attention (the overview's red line too). */
export const ATTENTION_SPAM_RATE = 10;
/** …once at least this many of its emails were found. */
export const ATTENTION_MIN_FOUND = 5;
/** Ready for campaigns: warmed this many days… */
export const READY_MIN_DAYS = 14;
/** …with at least this reputation… */
export const READY_MIN_REPUTATION = 80;
/** …and at least this many of its emails found in 7 days. */
export const READY_MIN_FOUND = 10;

/** The last 7 days of a mailbox's own mail, from the daily rollups. */
export interface WeekCounts {
  sent: number;
  found: number;
  spam: number;
  bounced: number;
}

export interface OutlookInput {
  status: MailboxStatus;
  warmup: WarmupSettings;
  reputation: number;
  warmupDay: number;
  dailyTarget: number;
  rampTarget: number | null;
  limitedBy: string | null;
  lastError: string | null;
  inPool: boolean;
  poolReason: string | null;
  /** The health guard halved its volume (volume_factor < 1). */
  slowedByGuard: boolean;
  nextSendAt: string | null;
  lastPlanDay: string | null;
  week: WeekCounts;
  /** Set while its owner answers warmup mail automatically: why it receives none (see auto-reply-rule.ts). */
  autoReplyReason?: string | null;
  /** `dns` while the DNS rule keeps it paused (checks/daily-checks.ts); its lastError says why. */
  pausedFor?: 'dns' | null;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "08:00 Europe/Berlin", or "Mon 08:00 Europe/Berlin" when it is not today there. */
function localTime(at: Date, timeZone: string, now: Date): string {
  const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone }).format(at);
  if (localDay(at, timeZone) === localDay(now, timeZone)) return `${time} ${timeZone}`;
  const weekday = new Intl.DateTimeFormat('en-GB', { weekday: 'short', timeZone }).format(at);
  return `${weekday} ${time} ${timeZone}`;
}

/** When the send window next opens after `now` (skipping weekends with weekdaysOnly). */
function nextWindowStart(settings: WarmupSettings, now: Date, plannedToday: boolean): Date {
  const timeZone = validTimeZone(settings.timezone);
  let day = localDay(now, timeZone);
  for (let i = 0; i < 8; i++, day = addDays(day, 1)) {
    const weekday = new Date(`${day}T12:00:00Z`).getUTCDay();
    if (settings.weekdaysOnly && (weekday === 0 || weekday === 6)) continue;
    const window = localWindow(day, settings.sendWindow, timeZone);
    if (i === 0 && (plannedToday || now >= window.end)) continue;
    return window.start > now ? window.start : now;
  }
  return localWindow(day, settings.sendWindow, timeZone).start;
}

export function describeAttention(input: OutlookInput): Attention[] {
  const items: Attention[] = [];
  if (input.status === 'error') {
    const byGuard = (input.lastError ?? '').startsWith('Warmup stopped:');
    items.push({
      kind: byGuard ? 'stopped_by_guard' : 'stopped',
      message: input.lastError ?? 'The warmup engine stopped this mailbox: fix the cause, then resume it.',
    });
  }
  if (input.status === 'paused' && input.pausedFor === 'dns') {
    items.push({
      kind: 'paused_for_dns',
      message: input.lastError ?? 'Warmup paused: SPF or DMARC of its domain has failed for too long.',
    });
  }
  if (input.status === 'active' && input.slowedByGuard) {
    items.push({
      kind: 'slowed_by_guard',
      message:
        'The health guard halved its volume: more than 20 % of its emails landed in spam this week. Check SPF, DKIM and DMARC of its domain.',
    });
  }
  const { week } = input;
  const spamRate = week.found > 0 ? (week.spam / week.found) * 100 : 0;
  if (week.found >= ATTENTION_MIN_FOUND && spamRate > ATTENTION_SPAM_RATE) {
    items.push({
      kind: 'spam_rate',
      message: `${Math.round(spamRate)} % of its emails landed in spam in the last 7 days (${week.spam} of ${week.found} found). Check SPF, DKIM and DMARC of its domain.`,
    });
  }
  if (week.bounced > 0) {
    items.push({
      kind: 'bounces',
      message: `${plural(week.bounced, 'email')} bounced in the last 7 days. Check that the account may send and that the addresses it writes to exist.`,
    });
  }
  if (input.autoReplyReason) items.push({ kind: 'auto_reply', message: input.autoReplyReason });
  const limit = limitReason(input);
  if (input.status === 'active' && limit) items.push({ kind: 'pool_too_small', message: limit });
  if (input.status === 'active' && !input.inPool) {
    items.push({
      kind: 'not_in_pool',
      message: `It does not take part in warmup yet: ${input.poolReason ?? 'not proven yet'}.`,
    });
  }
  return items;
}

function limitReason(input: OutlookInput): string | null {
  if (input.limitedBy !== 'pool_too_small' || input.rampTarget === null) return null;
  const missing = Math.max(1, input.rampTarget - input.dailyTarget);
  return (
    `The pool is too small for its ramp: ${input.dailyTarget} of ${plural(input.rampTarget, 'email')} planned on its last day. ` +
    `Add ${plural(missing, 'mailbox', 'mailboxes')} on other domains.`
  );
}

function readiness(input: OutlookInput, attention: Attention[]): { ready: boolean; text: string } {
  const missing: string[] = [];
  if (input.status !== 'active' || !input.inPool) missing.push('warming up in the pool');
  if (input.warmupDay < READY_MIN_DAYS) missing.push(`${READY_MIN_DAYS} warmup days (now ${input.warmupDay})`);
  if (input.reputation < READY_MIN_REPUTATION)
    missing.push(`a reputation of ${READY_MIN_REPUTATION} (now ${input.reputation})`);
  if (input.week.found < READY_MIN_FOUND)
    missing.push(`${READY_MIN_FOUND} of its emails found this week (now ${input.week.found})`);
  if (attention.length > 0) missing.push('nothing needing attention');
  if (missing.length === 0) {
    return {
      ready: true,
      text: `Ready for campaigns: ${input.warmupDay} warmup days, reputation ${input.reputation}, inbox placement holding. Keep warmup running alongside.`,
    };
  }
  return { ready: false, text: `Not ready for campaigns yet: needs ${missing.join(', ')}.` };
}

export function describeOutlook(input: OutlookInput, now: Date): MailboxOutlook {
  const attention = describeAttention(input);
  const ready = readiness(input, attention);
  const timeZone = validTimeZone(input.warmup.timezone);
  let summary: string;
  if (input.status === 'paused' && input.pausedFor === 'dns') {
    summary = 'Paused because SPF or DMARC of its domain has failed for too long: it resumes by itself once both pass.';
  } else if (input.status === 'paused') summary = 'Paused: it sends and reads nothing until you resume it.';
  else if (input.status === 'error') summary = 'Stopped: fix what the error says, then resume it.';
  else if (!input.inPool) summary = `Waiting to join the warmup pool: ${input.poolReason ?? 'not proven yet'}.`;
  else if (input.nextSendAt !== null) {
    summary = `Next send at ${localTime(new Date(input.nextSendAt), timeZone, now)} (${plural(input.dailyTarget, 'send')} planned for the day).`;
  } else {
    const plannedToday = input.lastPlanDay === localDay(now, timeZone);
    const opens = nextWindowStart(input.warmup, now, plannedToday);
    summary =
      opens <= now
        ? `Its send window is open: the next sends are planned within minutes.`
        : `Next sends from ${localTime(opens, timeZone, now)}, when its send window opens.`;
  }
  return {
    summary,
    nextSendAt: input.nextSendAt,
    rampTarget: input.rampTarget,
    limitedBy: input.limitedBy === 'pool_too_small' ? 'pool_too_small' : null,
    limitReason: limitReason(input),
    readyForCampaigns: ready.ready,
    readiness: ready.text,
    attention,
  };
}
