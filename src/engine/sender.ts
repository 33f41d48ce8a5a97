/*
 * The sender: claims due planned sends sender by sender, writes them (template, variables, quote)
 * once, and sends them over each sender mailbox's own SMTP, one connection per sender while its
 * lane works on it.
 *
 * A sender is claimed under its lease `send:<id>`, then its due rows with one UPDATE … WHERE id IN
 * (SELECT … LIMIT n [FOR UPDATE SKIP LOCKED]) … RETURNING on the row lease columns, so any number
 * of workers can call this at once without sending a row twice; a worker that dies leaves its rows
 * to be claimed again once the leases expire (a resend carries the same Message-ID, and counting
 * is exactly-once by the interactions' unique key).
 */
import type { Logger } from 'pino';
import { utcDay } from '../calendar.js';
import { nowSince } from '../clock.js';
import { inTransaction } from '../db/database.js';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { recordInteraction } from '../interactions/interactions.repository.js';
import { classifyMailFailure, isMailConnectionError } from '../mail/errors.js';
import { answersAutomatically } from '../mailboxes/auto-reply-rule.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { createSmtpSender, type OutgoingMail, type SmtpSender } from '../mail/smtp.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { retryDelayMs } from './backoff.js';
import { forEachClaimed } from '../jobs/concurrency.js';
import type { EngineDeps } from './engine-deps.js';
import {
  findDayPlan,
  findMailbox,
  findMailboxEmail,
  markJudgementsDue,
  pullSyncDue,
} from './mailbox-engine-state.repository.js';
import { SYNC_AFTER_SEND_MS } from './reader.js';
import { prepareMail } from './outgoing-mail.js';
import { pairSpacingAt, REASON_PAIR_SPACING } from './pair-spacing.js';
import {
  closeUnsentMessage,
  markMessageSent,
  countPlannedBetween,
  expireLastPlannedThread,
  expirePlannedMessage,
  loadSendsOfDay,
  movePlannedMessage,
  rescheduleMessage,
} from './warmup-messages.repository.js';
import {
  claimDueMessages,
  findDueSenders,
  senderLeaseKey,
  expirePlannedMessages,
  releaseMessageLeases,
} from './warmup-message-claims.repository.js';
import { acquireLease, releaseLease } from '../jobs/leases.js';
import {
  judgeDueSends,
  localDaySpan,
  MIN_SEND_GAP_MS,
  REASON_LATE_SHARE,
  REASON_OTHER_RECIPIENT_DAY,
  REASON_RECIPIENT_AWAY,
  REASON_REPLY_FIRST,
  restOfDayBudget,
  sendDayOf,
  type Restart,
  sendWindow,
  threadsToDisplace,
} from './send-budget.js';

/** What sending needs of the engine. */
export type SendDeps = Pick<
  EngineDeps,
  | 'db'
  | 'dialect'
  | 'clock'
  | 'random'
  | 'logger'
  | 'workerId'
  | 'mailboxes'
  | 'templates'
  | 'settings'
  | 'smtp'
  | 'installationSeed'
>;

export interface SendOptions {
  now: Date;
  /** Every planned row of the day is due now (run-once --ignore-schedule). */
  ignoreSchedule: boolean;
  /** At most this many rows in this call (default: all that are due). */
  limit?: number;
  /** The engine is stopping: start nothing new, drop the SMTP sessions in flight. */
  signal?: AbortSignal;
}

export interface SendSummary {
  claimed: number;
  sent: number;
  bounced: number;
  /** Given up: unrenderable, or too many attempts. */
  failed: number;
  /** Failed for now; due again later (backoff of the row or of its sender). */
  retried: number;
  /** Held back by the send bounds (window, gap, budget): due again later. */
  deferred: number;
  /** Closed unsent by the send bounds (a new thread whose day is over or had no room left). */
  dropped: number;
  /** Mailboxes this call put into `error`. */
  mailboxErrors: string[];
}

/** Rows of one sender claimed at most at once. */
const CLAIM_BATCH = 100;
/** Senders handled at the same time (each with its own SMTP connection): the lanes. */
const SENDER_CONCURRENCY = 4;
/** Claimable rows read per look for the next senders (their distinct senders are the candidates). */
const SENDER_SCAN = 64;
/** Attempts after which a send is given up and recorded as `failed`. */
export const MAX_SEND_ATTEMPTS = 5;
/** The furthest any time zone is ahead of UTC (Kiribati, +14 h): no planned row is later than this local day. */
const MAX_ZONE_AHEAD_MS = 14 * 60 * 60_000;
/**
 * Planned mail this far overdue (its sender or recipient was paused or broken meanwhile) is dropped
 * rather than sent: a mailbox resumed after a week must not fire a week's volume in one burst.
 */
export const STALE_AFTER_MS = 24 * 60 * 60_000;

/**
 * Sends what is due. Never throws for one message or one mailbox. A failure of the recipient's
 * answer is the row's (retry with backoff, bounce, or give up); a failure of the sender's server or
 * login is the mailbox's (mailbox-state.ts: transient ones back the sender off, three permanent
 * ones stop it), and its rows wait, their attempts untouched.
 *
 * Senders are claimed lane by lane: a lane done with one sender claims the next at once, so a slow
 * server holds up its own lane only, and a worker holds the rows of the senders its lanes work on
 * and no more; other workers claim the rest meanwhile.
 */
export async function sendDueMessages(deps: SendDeps, options: SendOptions): Promise<SendSummary> {
  const summary: SendSummary = {
    claimed: 0,
    sent: 0,
    bounced: 0,
    failed: 0,
    retried: 0,
    deferred: 0,
    dropped: 0,
    mailboxErrors: [],
  };
  const now = options.now;
  // Rows that failed keep their lease until the end of the call so this call does not pick them again.
  const heldIds: string[] = [];
  const senders = new Map<string, SenderState>();
  const claims = senderClaims(deps, options);
  // Long-overdue planned rows expire: nothing was sent or counted for them, so nothing is lost.
  await expirePlannedMessages(deps.db, new Date(now.getTime() - STALE_AFTER_MS), now);
  try {
    await forEachClaimed(
      SENDER_CONCURRENCY,
      claims.next,
      async ({ senderId, rows }) => {
        let state = senders.get(senderId);
        if (!state) {
          state = { smtp: null, stopped: false, recovered: false };
          senders.set(senderId, state);
        }
        try {
          // a sender with more due rows than one claim takes keeps its lane until they are done
          for (let batch = rows; batch.length > 0; batch = await claims.more(senderId, batch)) {
            summary.claimed += batch.length;
            // judged when the lane takes it up: the day, the window and the gap since the last send
            // are the truth then, not at the call's start
            await sendGroup(deps, nowSince(deps.clock, now), senderId, batch, state, summary, heldIds, options);
          }
        } finally {
          // closed once the lane is done with the sender, not at the end of the call: a call with
          // thousands of due senders would hold thousands of SMTP sessions open, and a server stops
          // taking new ones past its limit (Postfix: 100 smtpd processes) until idle ones time out
          state.smtp?.close();
          state.smtp = null;
          await claims.done(senderId);
        }
      },
      claims.over,
    );
  } finally {
    await releaseMessageLeases(deps.db, heldIds, deps.workerId);
  }
  return summary;
}

interface SenderState {
  smtp: SmtpSender | null;
  /** Login or connection failed (or the engine is stopping): the rest of this sender's rows wait for a later call. */
  stopped: boolean;
  /** The failures its state remembered are over (written once per call). */
  recovered: boolean;
}

/** A sender whose lease this worker holds, with the due rows it claimed for it. */
interface SenderClaim {
  senderId: string;
  rows: WarmupMessageRow[];
}

/**
 * The sender claims of one call. A sender is taken under its lease `send:<id>` before its rows are
 * claimed, so one worker at a time decides and sends for a mailbox, and the day's count and the
 * last send it reads are the truth when it sends. The lease takes its own owner again, so the
 * senders in flight in this worker are kept here as well: two lanes never work on one sender.
 * `next` is called one at a time (forEachClaimed), so the candidates need no lock.
 */
function senderClaims(deps: SendDeps, options: SendOptions) {
  const { now, ignoreSchedule } = options;
  const due = {
    dialect: deps.dialect,
    now,
    // a sender backing off after a failure waits (with ignoreSchedule everything is due now)
    senderReadyBy: ignoreSchedule ? undefined : now,
    dueByPlanDay: ignoreSchedule ? utcDay(new Date(now.getTime() + MAX_ZONE_AHEAD_MS)) : undefined,
  };
  const inFlight = new Set<string>();
  // lost to another worker, or nothing left to claim: not tried again in this call
  const passed = new Set<string>();
  let candidates: string[] = [];
  let budget = options.limit ?? Number.POSITIVE_INFINITY;
  // A lease runs from the moment it is taken, not from the call's start: a call with thousands of
  // due senders runs for minutes, and a lease dated from its start would have run out when its last
  // senders were claimed, free for a second worker to send the same rows again.
  const leaseStart = () => nowSince(deps.clock, now);

  const claimOne = async (): Promise<SenderClaim | null> => {
    for (;;) {
      if (candidates.length === 0) {
        candidates = await findDueSenders(deps.db, { ...due, exclude: [...inFlight, ...passed], scan: SENDER_SCAN });
        if (candidates.length === 0) return null;
      }
      const senderId = candidates.shift()!;
      if (inFlight.has(senderId) || passed.has(senderId)) continue;
      const key = senderLeaseKey(senderId);
      if (!(await acquireLease(deps.db, key, deps.workerId, deps.settings.leaseMs, leaseStart()))) {
        passed.add(senderId);
        continue;
      }
      let rows: WarmupMessageRow[] = [];
      try {
        rows = await claimRows(senderId);
      } finally {
        if (rows.length === 0) await releaseLease(deps.db, key, deps.workerId);
      }
      if (rows.length === 0) {
        passed.add(senderId);
        continue;
      }
      inFlight.add(senderId);
      return { senderId, rows };
    }
  };

  /** The sender's next due rows, earliest first (its lease is ours). */
  const claimRows = async (senderId: string): Promise<WarmupMessageRow[]> => {
    const rows = await claimDueMessages(deps.db, {
      ...due,
      workerId: deps.workerId,
      leaseUntil: new Date(leaseStart().getTime() + deps.settings.leaseMs),
      senderId,
      limit: Math.min(CLAIM_BATCH, budget),
    });
    budget -= rows.length;
    return rows.sort((a, b) => a.due_at.localeCompare(b.due_at));
  };

  return {
    /** Up to `lanes` senders with their rows; fewer only when nothing more is due or the budget is spent. */
    next: async (lanes: number): Promise<SenderClaim[]> => {
      const claimed: SenderClaim[] = [];
      try {
        while (claimed.length < lanes && budget > 0) {
          const claim = await claimOne();
          if (!claim) break;
          claimed.push(claim);
        }
      } catch (error) {
        // No lane gets what was claimed before the failure: it goes back now rather than when its leases
        // run out (a database failing now may fail these too; then the leases do run out).
        for (const { senderId, rows } of claimed) {
          inFlight.delete(senderId);
          await releaseMessageLeases(
            deps.db,
            rows.map((row) => row.id),
            deps.workerId,
          ).catch(() => undefined);
          await releaseLease(deps.db, senderLeaseKey(senderId), deps.workerId).catch(() => undefined);
        }
        throw error;
      }
      return claimed;
    },
    /** The sender's rows after `last` when the claim of `last` was full; none once the budget is spent or the engine stops. */
    more: async (senderId: string, last: readonly WarmupMessageRow[]): Promise<WarmupMessageRow[]> =>
      last.length < CLAIM_BATCH || budget <= 0 || options.signal?.aborted ? [] : claimRows(senderId),
    /** The lane is done with the sender: its lease goes back (rows held stay held until the end of the call). */
    done: async (senderId: string): Promise<void> => {
      inFlight.delete(senderId);
      await releaseLease(deps.db, senderLeaseKey(senderId), deps.workerId);
    },
    over: (): boolean => budget <= 0 || options.signal?.aborted === true,
  };
}

/**
 * One sender's claimed rows, under its lease. The budget gate (send-budget.ts) has the last word
 * on every row; only rows it lets go are sent.
 */
async function sendGroup(
  deps: SendDeps,
  now: Date,
  senderId: string,
  rows: WarmupMessageRow[],
  state: SenderState,
  summary: SendSummary,
  heldIds: string[],
  options: SendOptions,
): Promise<void> {
  const { signal } = options;
  const log = deps.logger.child({ mailboxId: senderId });
  const sender = await findMailbox(deps.db, senderId);
  // Deleted meanwhile: its rows went with it. Paused or broken meanwhile: they wait.
  if (!sender || sender.status !== 'active' || state.stopped || signal?.aborted) {
    heldIds.push(...rows.map((r) => r.id));
    return;
  }
  const allowed = await applySendBounds(deps, now, sender, rows, options.ignoreSchedule, summary, heldIds);
  for (const row of allowed) {
    if (state.stopped || signal?.aborted) {
      heldIds.push(row.id);
      continue;
    }
    let mail: OutgoingMail | null;
    try {
      mail = await prepareMail(deps, now, sender, row);
    } catch (err) {
      log.warn({ err, messageId: row.message_id }, 'warmup message cannot be written; giving it up');
      await closeUnsent(deps, now, sender, row, 'failed', `cannot write the message: ${errorText(err)}`);
      summary.failed += 1;
      continue;
    }
    if (!mail) continue; // the recipient or the row is gone

    try {
      if (!state.smtp) {
        const { smtp } = await deps.mailboxes.getCredentials(senderId);
        state.smtp = (deps.smtp ?? createSmtpSender)(smtp, { timeoutMs: deps.settings.smtpTimeoutMs, signal });
      }
      await state.smtp.send(mail);
    } catch (err) {
      if (signal?.aborted) {
        // stopping is nobody's failure: the row waits, as it was, for the next worker
        heldIds.push(row.id);
        state.stopped = true;
        continue;
      }
      await handleSendError(deps, now, sender, row, err, state, summary, heldIds, log);
      continue;
    }
    // dated when it left: the next send's gap is measured from here
    await markSent(deps, nowSince(deps.clock, now), sender, row, mail);
    await noteSenderWorks(deps, now, sender, state);
    summary.sent += 1;
  }
}

/**
 * The budget gate on a sender's due rows: what the day, the window and the gap allow goes on (at
 * most one row outside test mode), the rest is moved to a time that keeps every bound (held until
 * the end of the call) or closed with its reason.
 */
async function applySendBounds(
  deps: SendDeps,
  now: Date,
  sender: MailboxRow,
  rows: WarmupMessageRow[],
  ignoreSchedule: boolean,
  summary: SendSummary,
  heldIds: string[],
): Promise<WarmupMessageRow[]> {
  const settings = parseWarmupSettings(sender.warmup);
  const day = sendDayOf(settings, now);
  const span = localDaySpan(settings, day);
  const done = await loadSendsOfDay(deps.db, sender.id, span, new Date(now.getTime() - MIN_SEND_GAP_MS));
  const plan = await findDayPlan(deps.db, sender.id, day);
  const budget = plan?.target ?? 0;
  const due = rows.map((row) => ({ id: row.id, kind: row.kind, dueAt: new Date(row.due_at), planDay: row.plan_day }));
  // The round trip's check message (to itself) keeps the gap too: a mailbox proven this cycle waits before its first send.
  const provenAt = sender.proven_at === null ? null : new Date(sender.proven_at);
  const lastSentAt =
    provenAt && provenAt <= now && (!done.lastSentAt || provenAt > done.lastSentAt) ? provenAt : done.lastSentAt;
  const planned = { settings, day, budget, sent: done.sent, lastSentAt };
  const windowEnd = sendWindow(settings, day).end;
  let later = ignoreSchedule
    ? { replies: 0, threads: 0 }
    : await countPlannedBetween(deps.db, sender.id, now, windowEnd);
  // back late (resumed or reconnected after the day was planned, or the engine was down): the rest of the day is a late start
  const restart = plan ? await restartOf(deps, sender, plan.plannedAt, span) : null;
  const restAllowed = ignoreSchedule ? Math.max(0, budget - done.sent) : restOfDayBudget(planned, due, now, restart);
  const reason = restAllowed < budget - done.sent ? REASON_LATE_SHARE : REASON_REPLY_FIRST;
  // replies first: new threads planned for later today give way to the replies due now (and to the late share)
  const displace = ignoreSchedule ? 0 : threadsToDisplace(restAllowed, planned, due, later);
  if (displace > 0) {
    for (let i = 0; i < displace; i += 1) {
      if (await expireLastPlannedThread(deps.db, sender.id, day, reason)) summary.dropped += 1;
    }
    later = await countPlannedBetween(deps.db, sender.id, now, windowEnd);
  }
  const verdicts = judgeDueSends({
    today: { ...planned, budget: done.sent + restAllowed },
    now,
    rows: due,
    reservedLater: later,
    ignoreSchedule,
    random: deps.random,
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  const allowed: WarmupMessageRow[] = [];
  for (const verdict of verdicts) {
    if (verdict.action === 'close') {
      await expirePlannedMessage(deps.db, verdict.id, verdict.reason);
      summary.dropped += 1;
      continue;
    }
    const row = byId.get(verdict.id)!;
    const recipient = await findMailbox(deps.db, row.recipient_mailbox_id);
    const leavesAt = verdict.action === 'send' ? now : verdict.dueAt;
    if (recipient && answersAutomatically(recipient.auto_reply_at, now)) {
      // planned before its recipient's automatic reply was noticed: it receives no warmup mail now
      await expirePlannedMessage(deps.db, verdict.id, REASON_RECIPIENT_AWAY);
      summary.dropped += 1;
    } else if (recipient && !staysOnRecipientDay(recipient, row, leavesAt)) {
      // due before its recipient's midnight, leaving after it: it would count on a day already full
      await expirePlannedMessage(deps.db, verdict.id, REASON_OTHER_RECIPIENT_DAY);
      summary.dropped += 1;
    } else if (verdict.action === 'send') {
      const fits = (at: Date) =>
        at < windowEnd && sendDayOf(settings, at) === day && (!recipient || staysOnRecipientDay(recipient, row, at));
      const spacing = ignoreSchedule ? { action: 'send' as const } : await pairSpacingAt(deps.db, row, now, fits);
      if (spacing.action === 'send') {
        allowed.push(row);
      } else if (spacing.action === 'wait') {
        await movePlannedMessage(deps.db, row.id, { dueAt: spacing.until, planDay: row.plan_day });
        heldIds.push(row.id);
        summary.deferred += 1;
      } else {
        await expirePlannedMessage(deps.db, row.id, REASON_PAIR_SPACING);
        summary.dropped += 1;
      }
    } else {
      await movePlannedMessage(deps.db, verdict.id, verdict);
      heldIds.push(verdict.id);
      summary.deferred += 1;
    }
  }
  return allowed;
}

/** When the sender became active again today after its day was planned, and what it sent since; null if it did not. */
async function restartOf(
  deps: SendDeps,
  sender: MailboxRow,
  plannedAt: Date,
  day: { start: Date; end: Date },
): Promise<Restart | null> {
  if (sender.active_since === null) return null;
  const at = new Date(sender.active_since);
  if (at <= plannedAt || at < day.start || at >= day.end) return null;
  const since = await loadSendsOfDay(deps.db, sender.id, { start: at, end: day.end }, at);
  return { at, sentSince: since.sent };
}

/**
 * A new thread counts on its recipient's inbound bound for the recipient's local day it was planned
 * to land on: sent late or moved, it must stay on that day (a reply follows its thread and may move freely).
 */
function staysOnRecipientDay(recipient: MailboxRow, row: WarmupMessageRow, leavesAt: Date): boolean {
  if (row.kind === 'reply') return true;
  const settings = parseWarmupSettings(recipient.warmup);
  return sendDayOf(settings, leavesAt) === sendDayOf(settings, new Date(row.due_at));
}

/** The SMTP login worked: the mailbox's send failures are over (one state write per call, only if there were any). */
async function noteSenderWorks(deps: SendDeps, now: Date, sender: MailboxRow, state: SenderState): Promise<void> {
  if (state.recovered) return;
  state.recovered = true;
  const clean =
    Number(sender.failure_count) === 0 &&
    Number(sender.send_retries) === 0 &&
    sender.next_send_at === null &&
    sender.last_error === null;
  if (!clean) await applyMailboxEvent(deps.db, sender.id, { type: 'send-succeeded' }, { at: now });
}

async function markSent(
  deps: SendDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
  mail: OutgoingMail,
): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    await markMessageSent(trx, row.id, now, row.attempts + 1);
    await recordInteraction(trx, {
      mailboxId: sender.id,
      type: 'sent',
      senderMailboxId: sender.id,
      counterpartMailboxId: row.recipient_mailbox_id,
      counterpartEmail: mail.to.address,
      subject: mail.subject,
      messageId: row.message_id,
      threadId: row.thread_id,
      occurredAt: now,
    });
    // the recipient is due a sync once the mail has had a moment to arrive (work is claimed, not scanned)
    await pullSyncDue(trx, [row.recipient_mailbox_id], new Date(now.getTime() + SYNC_AFTER_SEND_MS));
  });
}

async function handleSendError(
  deps: SendDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
  err: unknown,
  state: SenderState,
  summary: SendSummary,
  heldIds: string[],
  log: Logger,
): Promise<void> {
  if (isMailConnectionError(err) && err.kind === 'rejected' && err.permanent) {
    log.info({ messageId: row.message_id, response: err.serverResponse }, 'recipient refused the warmup message');
    await closeUnsent(deps, now, sender, row, 'bounced', err.message);
    // a bounce means the login worked: the mailbox itself is fine
    await noteSenderWorks(deps, now, sender, state);
    summary.bounced += 1;
    return;
  }
  if (isMailConnectionError(err) && err.kind !== 'rejected') {
    // The sender's server or login is the problem, not this message: the mailbox's state decides
    // (back off, or count towards `error`), and the row and the rest of the sender's rows wait as they are.
    log.warn({ err, messageId: row.message_id, class: classifyMailFailure(err) }, 'warmup send failed');
    state.stopped = true;
    heldIds.push(row.id);
    summary.retried += 1;
    const applied = await applyMailboxEvent(
      deps.db,
      sender.id,
      { type: 'send-failed', error: err, at: now, random: deps.random },
      { at: now },
    );
    if (applied?.stopped) {
      summary.mailboxErrors.push(sender.id);
      log.warn({ lastError: applied.row.last_error }, 'mailbox put into error after repeated SMTP failures');
    }
    return;
  }
  // A 4xx for one recipient (greylisting, a full mailbox) or a failure of our own: this row retries later.
  log.warn({ err, messageId: row.message_id }, 'warmup send failed');
  const attempts = row.attempts + 1;
  if (attempts >= MAX_SEND_ATTEMPTS) {
    await closeUnsent(deps, now, sender, row, 'failed', errorText(err));
    summary.failed += 1;
  } else {
    await rescheduleMessage(deps.db, row.id, {
      attempts,
      dueAt: new Date(now.getTime() + retryDelayMs(attempts)),
      lastError: errorText(err),
    });
    heldIds.push(row.id);
    summary.retried += 1;
  }
}

/**
 * The send will not be tried again: the row ends `bounced` (the recipient's server refused it) or
 * `failed` (given up), with the matching entry in the sender's log, in one transaction.
 */
async function closeUnsent(
  deps: SendDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
  outcome: 'bounced' | 'failed',
  reason: string,
): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const updated = await closeUnsentMessage(trx, row.id, {
      status: outcome,
      attempts: row.attempts + 1,
      lastError: reason.slice(0, 1000),
    });
    if (!updated) return;
    const recipientEmail = await findMailboxEmail(trx, row.recipient_mailbox_id);
    await recordInteraction(trx, {
      mailboxId: sender.id,
      type: outcome,
      senderMailboxId: sender.id,
      counterpartMailboxId: row.recipient_mailbox_id,
      counterpartEmail: recipientEmail ?? '',
      subject: updated.subject,
      messageId: row.message_id,
      threadId: row.thread_id,
      occurredAt: now,
    });
    // a refusal is evidence about the sender's mail: reputation and the health guard judge it again
    if (outcome === 'bounced') await markJudgementsDue(trx, [sender.id], now);
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
