/**
 * A mailbox's status in plain words, from one definition that the API, the dashboard's lists and
 * its "Needs attention" card all read: what it does next and when, why it sends less than its
 * ramp, what needs attention (each a documented threshold), and whether it is ready for campaigns.
 */
import { localDay, localWindow, validTimeZone, addDays } from '../calendar.js';
import type { Attention, MailboxOutlook, MailboxStatus, WarmupSettings, WarmupState } from './mailboxes.schemas.js';

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
  /** Set while its own filter is found filing most senders' mail into spam (engine/receiver-filtering.ts). */
  filtering?: { junkedSenders: number; senders: number } | null;
  /** Set while the providers' feeds hold its domain (engine/provider-signals.ts): why, in their words. */
  providerHold?: string | null;
  /** Set while a provider's feed finds fault with its domain without holding it (Gmail's compliance status). */
  providerWarning?: string | null;
  /** What the pool carried for it on its last planned day, and what would lift it (the planner's capacity model). */
  planCapacity?: number | null;
  planLift?: number | null;
  /** When it stopped (mailbox-state.ts); null while it works. */
  stoppedAt?: string | null;
}

/** What a receiver found filtering is told (the attention item and the `mailbox.receiver_filtering` event). */
export function receiverFilteringMessage(junkedSenders: number, senders: number): string {
  return (
    `Its filter files warmup mail from ${junkedSenders} of ${senders} senders into spam while other receivers find it in the inbox, ` +
    `so its placements no longer count against them. Add an allow rule for the pool's addresses, or check its filter and spam rules.`
  );
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
  const { week } = input;
  if (input.status === 'active' && input.slowedByGuard) {
    const counted = week.found > 0 ? ` (${week.spam} of ${week.found} found in spam)` : '';
    items.push({
      kind: 'slowed_by_guard',
      message: `The health guard halved its volume: over 20 % of its emails land in spam this week${counted}. Check SPF, DKIM and DMARC of its domain.`,
    });
  }
  if (input.providerHold) items.push({ kind: 'provider_hold', message: input.providerHold });
  if (input.providerWarning) items.push({ kind: 'provider_warning', message: input.providerWarning });
  if (input.filtering) {
    items.push({
      kind: 'receiver_filtering',
      message: receiverFilteringMessage(input.filtering.junkedSenders, input.filtering.senders),
    });
  }
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

/** What the pool carried of its ramp on its last planned day, and what would lift it; null when it carried all. */
function poolHold(input: OutlookInput): NonNullable<WarmupState['pool']> | null {
  if (input.limitedBy !== 'pool_too_small' || input.rampTarget === null) return null;
  const carries = Math.min(input.planCapacity ?? input.dailyTarget, input.rampTarget);
  return { carries, wants: input.rampTarget, moreDomains: input.planLift ?? null };
}

/** "connect mailboxes on 4 more domains": the capacity model's count, or "many" beyond its reach. */
export function moreDomainsText(moreDomains: number | null): string {
  return moreDomains === null
    ? 'connect mailboxes on many more domains'
    : `connect mailboxes on ${plural(moreDomains, 'more domain')}`;
}

function limitReason(input: OutlookInput): string | null {
  const hold = poolHold(input);
  if (!hold) return null;
  const lower = hold.carries > 0 ? `, or lower its daily limit to ${hold.carries}` : '';
  return (
    `The pool carries ${hold.carries} of the ${plural(hold.wants, 'email')} a day its ramp wants: ` +
    // a plan made before the model stored its lift (planCapacity null) knows no count
    `${input.planCapacity == null ? 'connect mailboxes on more domains' : moreDomainsText(hold.moreDomains)}${lower}.`
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
  // Named as what to do: "needs … nothing needing attention" read as if nothing were wrong.
  if (attention.length > 0)
    missing.push(
      attention.length === 1
        ? 'the point under Needs attention fixed'
        : `the ${attention.length} points under Needs attention fixed`,
    );
  if (missing.length === 0) {
    return {
      ready: true,
      text: `Ready for campaigns: ${input.warmupDay} warmup days, reputation ${input.reputation}, inbox placement holding. Keep warmup running alongside.`,
    };
  }
  return { ready: false, text: `Not ready for campaigns yet: needs ${missing.join(', ')}.` };
}

const STATE_LABEL: Record<WarmupState['kind'], string> = {
  on_track: 'Warming up',
  // on track too: its reason says when its window opens
  waiting: 'Warming up',
  held_by_pool: 'Held back by the pool',
  held_by_spam: 'Held back by spam',
  joining: 'Joining the pool',
  paused: 'Paused',
  stopped: 'Stopped',
};

const STATE_TONE: Record<WarmupState['kind'], WarmupState['tone']> = {
  on_track: 'good',
  waiting: 'good',
  held_by_pool: 'warn',
  held_by_spam: 'bad',
  joining: 'neutral',
  paused: 'neutral',
  stopped: 'bad',
};

/** The states in which a mailbox warms up as its ramp wants: the overview's "warming up now". */
export const WARMING_STATES: ReadonlySet<WarmupState['kind']> = new Set(['on_track', 'waiting']);

/**
 * The one definition of where a mailbox stands: the first state that applies, from the attention
 * items and the summary already decided, so the words agree with them.
 */
function describeState(input: OutlookInput, attention: Attention[], summary: string, waiting: boolean): WarmupState {
  const state = (kind: WarmupState['kind'], reason: string, extra: Partial<WarmupState> = {}): WarmupState => ({
    kind,
    label: STATE_LABEL[kind],
    tone: STATE_TONE[kind],
    reason,
    since: null,
    pool: null,
    ...extra,
  });
  const find = (...kinds: Array<Attention['kind']>) => attention.find((item) => kinds.includes(item.kind));
  if (input.status === 'error') {
    return state('stopped', find('stopped', 'stopped_by_guard')?.message ?? summary, {
      since: input.stoppedAt ?? null,
    });
  }
  if (input.status === 'paused') {
    const reason = find('paused_for_dns')?.message ?? summary;
    return state('paused', reason, { since: input.stoppedAt ?? null });
  }
  if (!input.inPool) return state('joining', summary);
  const spam = find('slowed_by_guard', 'spam_rate');
  if (spam) return state('held_by_spam', spam.message);
  const hold = poolHold(input);
  if (hold) return state('held_by_pool', limitReason(input)!, { pool: hold });
  return state(waiting ? 'waiting' : 'on_track', summary);
}

export function describeOutlook(input: OutlookInput, now: Date): MailboxOutlook {
  const attention = describeAttention(input);
  const ready = readiness(input, attention);
  const timeZone = validTimeZone(input.warmup.timezone);
  let summary: string;
  let waiting = false;
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
    waiting = opens > now;
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
    state: describeState(input, attention, summary, waiting),
  };
}
