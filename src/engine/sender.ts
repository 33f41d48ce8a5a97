/*
 * The sender: claims due planned sends, writes them (template, variables, quote) once, and sends
 * them over each sender mailbox's own SMTP, one connection per sender per call.
 *
 * Claiming is one UPDATE … WHERE id IN (SELECT … LIMIT n [FOR UPDATE SKIP LOCKED]) … RETURNING on
 * the row lease columns, so any number of workers can call this at once without sending a row
 * twice; a worker that dies leaves its rows to be claimed again once the lease expires (a resend
 * carries the same Message-ID, and counting is exactly-once by the interactions' unique key).
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Dialect } from '../db/database.js';
import { inTransaction } from '../db/database.js';
import type { Database, MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { utcDay, validTimeZone } from '../calendar.js';
import type { ImapSession } from '../mail/imap.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { isMailConnectionError, type MailConnectionError, type MailServerConfig } from '../mail/errors.js';
import { createSmtpSender, type OutgoingMail, type SmtpSender } from '../mail/smtp.js';
import type { RenderedMessage } from '../templates/render.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import { recordInteraction } from '../interactions/interactions.repository.js';
import { composeMessage, displayName, seedFrom, type Party } from './message-content.js';

/** What the mail work (sender and reader) needs from the engine; engine.ts's EngineDeps fits it. */
export interface MailWorkDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  random: () => number;
  logger: Logger;
  workerId: string;
  mailboxes: { getCredentials(mailboxId: string): Promise<{ imap: MailServerConfig; smtp: MailServerConfig }> };
  templates: {
    pickTemplate(
      workspaceId: string,
      criteria: { type: TemplateType; language: string },
      seed: number,
    ): Promise<{ id: string; subject: string; body: string } | undefined>;
  };
  settings: { leaseMs: number; imapTimeoutMs: number; smtpTimeoutMs: number };
  /** The mail clients; tests of failure handling give fakes, everything else uses the real ones. */
  smtp?: (config: MailServerConfig, opts: { timeoutMs: number }) => SmtpSender;
  imap?: (config: MailServerConfig, opts: { timeoutMs: number }) => Promise<ImapSession>;
}

export interface SendOptions {
  now: Date;
  /** Every planned row of the day is due now (run-once --ignore-schedule). */
  ignoreSchedule: boolean;
  /** At most this many rows in this call (default: all that are due). */
  limit?: number;
}

export interface SendSummary {
  claimed: number;
  sent: number;
  bounced: number;
  /** Given up: unrenderable, or too many attempts. */
  failed: number;
  /** Failed for now; due again later (exponential backoff). */
  retried: number;
  /** Mailboxes this call put into `error`. */
  mailboxErrors: string[];
}

/** Rows claimed per round trip. */
const CLAIM_BATCH = 100;
/** Senders handled at the same time (each with its own SMTP connection). */
const SENDER_CONCURRENCY = 4;
/** Consecutive login/send failures that put a mailbox into `error`. */
export const MAX_MAILBOX_FAILURES = 3;
/** Attempts after which a send is given up and recorded as `failed`. */
export const MAX_SEND_ATTEMPTS = 5;
const RETRY_BASE_MS = 5 * 60_000;
const RETRY_MAX_MS = 4 * 60 * 60_000;
/** The furthest any time zone is ahead of UTC (Kiribati, +14 h): no planned row is later than this local day. */
const MAX_ZONE_AHEAD_MS = 14 * 60 * 60_000;
/**
 * Planned mail this far overdue (its sender or recipient was paused or broken meanwhile) is dropped
 * rather than sent: a mailbox resumed after a week must not fire a week's volume in one burst.
 */
export const STALE_AFTER_MS = 24 * 60 * 60_000;

/** Backoff before attempt n+1 after n failed attempts: 5 min, 10, 20, … capped at 4 h. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  });
  await Promise.all(lanes);
}

/**
 * Sends what is due. Never throws for one message or one mailbox: a failure is recorded on the row
 * (retry with backoff, bounce, or give up) and on the mailbox (failure_count, `error` after 3).
 */
export async function sendDueMessages(deps: MailWorkDeps, options: SendOptions): Promise<SendSummary> {
  const summary: SendSummary = { claimed: 0, sent: 0, bounced: 0, failed: 0, retried: 0, mailboxErrors: [] };
  const now = options.now;
  // Rows that failed keep their lease until the end of the call so this call does not pick them again.
  const heldIds: string[] = [];
  const senders = new Map<string, SenderState>();
  let budget = options.limit ?? Number.POSITIVE_INFINITY;
  await expireStaleRows(deps, now);
  try {
    while (budget > 0) {
      const rows = await claimDueRows(deps, now, options.ignoreSchedule, Math.min(CLAIM_BATCH, budget));
      if (rows.length === 0) break;
      budget -= rows.length;
      summary.claimed += rows.length;
      const bySender = new Map<string, WarmupMessageRow[]>();
      for (const row of rows.sort((a, b) => a.due_at.localeCompare(b.due_at))) {
        const group = bySender.get(row.sender_mailbox_id) ?? [];
        group.push(row);
        bySender.set(row.sender_mailbox_id, group);
      }
      await forEachLimited([...bySender.entries()], SENDER_CONCURRENCY, async ([senderId, group]) => {
        let state = senders.get(senderId);
        if (!state) {
          state = { smtp: null, stopped: false };
          senders.set(senderId, state);
        }
        await sendGroup(deps, now, senderId, group, state, summary, heldIds);
      });
    }
  } finally {
    for (const state of senders.values()) state.smtp?.close();
    await releaseRowLeases(deps, heldIds);
  }
  return summary;
}

interface SenderState {
  smtp: SmtpSender | null;
  /** Login or connection failed: the rest of this sender's rows wait for a later call. */
  stopped: boolean;
}

async function claimDueRows(
  deps: MailWorkDeps,
  now: Date,
  ignoreSchedule: boolean,
  limit: number,
): Promise<WarmupMessageRow[]> {
  const nowIso = now.toISOString();
  const lastPlanDay = utcDay(new Date(now.getTime() + MAX_ZONE_AHEAD_MS));
  const leaseUntil = new Date(now.getTime() + deps.settings.leaseMs).toISOString();
  return (
    deps.db
      .updateTable('warmup_messages')
      .set({ lease_owner: deps.workerId, lease_expires_at: leaseUntil })
      .where('id', 'in', (eb) => {
        let due = eb
          .selectFrom('warmup_messages as w')
          .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
          .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
          .select('w.id')
          .where('w.status', '=', 'planned')
          .where('s.status', '=', 'active')
          // mail for a paused or broken mailbox would only be lost: it waits until the mailbox is back
          .where('r.status', '=', 'active')
          .where((w) => w.or([w('w.lease_expires_at', 'is', null), w('w.lease_expires_at', '<=', nowIso)]))
          .where((w) =>
            ignoreSchedule
              ? w.or([w('w.due_at', '<=', nowIso), w('w.plan_day', '<=', lastPlanDay)])
              : w('w.due_at', '<=', nowIso),
          )
          .orderBy('w.due_at')
          .limit(limit);
        if (deps.dialect === 'postgres') due = due.forUpdate(['w']).skipLocked();
        return due;
      })
      // checked again on the row itself: on PostgreSQL another worker may have claimed it since the subquery's snapshot
      .where('status', '=', 'planned')
      .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<=', nowIso)]))
      .returningAll()
      .execute()
  );
}

/** Marks long-overdue planned rows `expired`: nothing was sent or counted for them, so nothing is lost. */
async function expireStaleRows(deps: MailWorkDeps, now: Date): Promise<void> {
  const staleBefore = new Date(now.getTime() - STALE_AFTER_MS).toISOString();
  await deps.db
    .updateTable('warmup_messages')
    .set({ status: 'expired', lease_owner: null, lease_expires_at: null })
    .where('status', '=', 'planned')
    .where('due_at', '<', staleBefore)
    .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<=', now.toISOString())]))
    .execute();
}

async function releaseRowLeases(deps: MailWorkDeps, ids: readonly string[]): Promise<void> {
  for (let start = 0; start < ids.length; start += 500) {
    await deps.db
      .updateTable('warmup_messages')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids.slice(start, start + 500))
      .where('lease_owner', '=', deps.workerId)
      .execute();
  }
}

async function sendGroup(
  deps: MailWorkDeps,
  now: Date,
  senderId: string,
  rows: WarmupMessageRow[],
  state: SenderState,
  summary: SendSummary,
  heldIds: string[],
): Promise<void> {
  const log = deps.logger.child({ mailboxId: senderId });
  const sender = await deps.db.selectFrom('mailboxes').selectAll().where('id', '=', senderId).executeTakeFirst();
  // Deleted meanwhile: its rows went with it. Paused or broken meanwhile: they wait.
  if (!sender || sender.status !== 'active' || state.stopped) {
    heldIds.push(...rows.map((r) => r.id));
    return;
  }
  for (const row of rows) {
    if (state.stopped) {
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
        state.smtp = (deps.smtp ?? createSmtpSender)(smtp, { timeoutMs: deps.settings.smtpTimeoutMs });
      }
      await state.smtp.send(mail);
    } catch (err) {
      await handleSendError(deps, now, sender, row, err, state, summary, heldIds, log);
      continue;
    }
    await markSent(deps, now, sender, row, mail);
    summary.sent += 1;
  }
}

/** The envelope and headers of a warmup message around its content; nothing in it says "warmup". */
export function outgoingMail(input: {
  sender: Party;
  recipient: Party;
  messageId: string;
  content: RenderedMessage;
  date: Date;
  inReplyTo?: string;
  references?: string[];
}): OutgoingMail {
  const mail: OutgoingMail = {
    from: { name: displayName(input.sender), address: input.sender.email },
    to: { name: displayName(input.recipient), address: input.recipient.email },
    subject: input.content.subject,
    text: input.content.body,
    html: input.content.html,
    messageId: input.messageId,
    date: input.date,
  };
  if (input.inReplyTo) mail.inReplyTo = input.inReplyTo;
  if (input.references?.length) mail.references = input.references;
  return mail;
}

/**
 * The message as it goes out. Written at the first attempt and stored on the row, so a retry
 * sends exactly the same text. Null when the row or its recipient no longer exists.
 */
async function prepareMail(
  deps: MailWorkDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
): Promise<OutgoingMail | null> {
  const recipient = await deps.db
    .selectFrom('mailboxes')
    .select(['email', 'name'])
    .where('id', '=', row.recipient_mailbox_id)
    .executeTakeFirst();
  if (!recipient) return null;
  const senderParty = { email: sender.email, name: sender.name };
  const isReply = row.kind === 'reply' && row.parent_message_id !== null;
  const parent = isReply
    ? await deps.db
        .selectFrom('warmup_messages')
        .select(['subject', 'body_text', 'sent_at'])
        .where('message_id', '=', row.parent_message_id)
        .executeTakeFirst()
    : undefined;
  const threading =
    isReply && row.parent_message_id
      ? { inReplyTo: row.parent_message_id, references: await threadReferences(deps.db, row) }
      : {};

  let content: RenderedMessage | undefined =
    row.subject !== null && row.body_text !== null && row.body_html !== null
      ? { subject: row.subject, body: row.body_text, html: row.body_html }
      : undefined;
  if (!content) {
    const settings = parseWarmupSettings(sender.warmup);
    const type: TemplateType = isReply ? 'reply' : 'initial';
    const template = await deps.templates.pickTemplate(
      sender.workspace_id,
      { type, language: settings.language },
      seedFrom(row.message_id),
    );
    if (!template) throw new Error(`the workspace has no "${type}" template (language ${settings.language} or en)`);
    const composed = composeMessage({
      template,
      kind: isReply ? 'reply' : 'initial',
      sender: senderParty,
      recipient,
      language: settings.language,
      timeZone: validTimeZone(settings.timezone),
      at: now,
      messageId: row.message_id,
      threadId: row.thread_id,
      ...(parent
        ? {
            parent: {
              subject: parent.subject,
              body: parent.body_text,
              sentAt: parent.sent_at ? new Date(parent.sent_at) : null,
            },
          }
        : {}),
    });
    // Only the first writer's text counts: a worker racing on the same row sends the same words.
    await deps.db
      .updateTable('warmup_messages')
      .set({ subject: composed.subject, body_text: composed.body, body_html: composed.html, template_id: template.id })
      .where('id', '=', row.id)
      .where('subject', 'is', null)
      .execute();
    const stored = await deps.db
      .selectFrom('warmup_messages')
      .select(['subject', 'body_text', 'body_html'])
      .where('id', '=', row.id)
      .executeTakeFirst();
    if (!stored) return null;
    content = {
      subject: stored.subject ?? composed.subject,
      body: stored.body_text ?? composed.body,
      html: stored.body_html ?? composed.html,
    };
  }
  return outgoingMail({ sender: senderParty, recipient, messageId: row.message_id, content, date: now, ...threading });
}

/** The thread's Message-IDs from its first message down to the parent, for `References`. */
async function threadReferences(db: Kysely<Database>, row: WarmupMessageRow): Promise<string[]> {
  const thread = await db
    .selectFrom('warmup_messages')
    .select(['message_id', 'parent_message_id'])
    .where('thread_id', '=', row.thread_id)
    .execute();
  const parentOf = new Map(thread.map((m) => [m.message_id, m.parent_message_id]));
  const chain: string[] = [];
  let current = row.parent_message_id;
  while (current && !chain.includes(current) && chain.length < 20) {
    chain.unshift(current);
    current = parentOf.get(current) ?? null;
  }
  if (chain[0] !== row.thread_id) chain.unshift(row.thread_id);
  return chain;
}

async function markSent(
  deps: MailWorkDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
  mail: OutgoingMail,
): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    await trx
      .updateTable('warmup_messages')
      .set({
        status: 'sent',
        sent_at: now.toISOString(),
        attempts: row.attempts + 1,
        last_error: null,
        lease_owner: null,
        lease_expires_at: null,
      })
      .where('id', '=', row.id)
      .where('status', '=', 'planned')
      .execute();
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
    await trx
      .updateTable('mailboxes')
      .set({ failure_count: 0 })
      .where('id', '=', sender.id)
      .where('failure_count', '<>', 0)
      .execute();
  });
}

async function handleSendError(
  deps: MailWorkDeps,
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
    summary.bounced += 1;
    return;
  }
  log.warn({ err, messageId: row.message_id }, 'warmup send failed');
  const attempts = row.attempts + 1;
  // the server or the login is the problem, not this message: the rest of this sender's rows wait
  if (!isMailConnectionError(err) || err.kind !== 'rejected') state.stopped = true;
  if (attempts >= MAX_SEND_ATTEMPTS) {
    await closeUnsent(deps, now, sender, row, 'failed', errorText(err));
    summary.failed += 1;
  } else {
    await deps.db
      .updateTable('warmup_messages')
      .set({
        attempts,
        due_at: new Date(now.getTime() + retryDelayMs(attempts)).toISOString(),
        last_error: errorText(err),
      })
      .where('id', '=', row.id)
      .where('status', '=', 'planned')
      .execute();
    heldIds.push(row.id);
    summary.retried += 1;
  }
  // A 4xx for one recipient (greylisting, a full mailbox) says nothing about this mailbox's login.
  const mailboxFailure = isMailConnectionError(err) && err.kind !== 'rejected';
  if (mailboxFailure && (await countMailboxFailure(deps.db, now, sender.id, smtpLastError(err)))) {
    summary.mailboxErrors.push(sender.id);
    log.warn({ lastError: smtpLastError(err) }, 'mailbox put into error after repeated SMTP failures');
  }
}

function smtpLastError(err: MailConnectionError): string {
  const answer = err.serverResponse ?? err.message;
  if (err.kind === 'auth') return `SMTP login refused: check the app password (${answer})`;
  return `SMTP sending failed ${MAX_MAILBOX_FAILURES} times in a row: ${err.message}`;
}

/**
 * One more consecutive failure; the third puts an active mailbox into `error` with `lastError`
 * (the engine then leaves it alone until the user fixes and resumes it). True when it did.
 */
export async function countMailboxFailure(
  db: Kysely<Database>,
  now: Date,
  mailboxId: string,
  lastError: string,
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const row = await trx
      .updateTable('mailboxes')
      .set((eb) => ({ failure_count: eb('failure_count', '+', 1) }))
      .where('id', '=', mailboxId)
      .returning(['failure_count', 'status'])
      .executeTakeFirst();
    if (!row || row.failure_count < MAX_MAILBOX_FAILURES || row.status !== 'active') return false;
    await trx
      .updateTable('mailboxes')
      .set({ status: 'error', last_error: lastError, updated_at: now.toISOString() })
      .where('id', '=', mailboxId)
      .where('status', '=', 'active')
      .execute();
    return true;
  });
}

/**
 * The send will not be tried again: the row ends `bounced` (the recipient's server refused it) or
 * `failed` (given up), with the matching entry in the sender's log, in one transaction.
 */
async function closeUnsent(
  deps: MailWorkDeps,
  now: Date,
  sender: MailboxRow,
  row: WarmupMessageRow,
  outcome: 'bounced' | 'failed',
  reason: string,
): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const updated = await trx
      .updateTable('warmup_messages')
      .set({
        status: outcome,
        attempts: row.attempts + 1,
        last_error: reason.slice(0, 1000),
        lease_owner: null,
        lease_expires_at: null,
      })
      .where('id', '=', row.id)
      .where('status', '=', 'planned')
      .returning('subject')
      .executeTakeFirst();
    if (!updated) return;
    const recipient = await trx
      .selectFrom('mailboxes')
      .select('email')
      .where('id', '=', row.recipient_mailbox_id)
      .executeTakeFirst();
    await recordInteraction(trx, {
      mailboxId: sender.id,
      type: outcome,
      senderMailboxId: sender.id,
      counterpartMailboxId: row.recipient_mailbox_id,
      counterpartEmail: recipient?.email ?? '',
      subject: updated.subject,
      messageId: row.message_id,
      threadId: row.thread_id,
      occurredAt: now,
    });
    // a bounce means the login worked: the mailbox itself is fine
    if (outcome === 'bounced') {
      await trx
        .updateTable('mailboxes')
        .set({ failure_count: 0 })
        .where('id', '=', sender.id)
        .where('failure_count', '<>', 0)
        .execute();
    }
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
