/*
 * What a sync of one mailbox works with: the engine's parts it needs, the call's options and
 * summary, and the mailbox's habits and IMAP session, shared by the reader's steps.
 */
import type { Logger } from 'pino';
import { validTimeZone } from '../calendar.js';
import type { MailboxRow } from '../db/schema.js';
import type { InteractionType, Placement } from '../interactions/interactions.schemas.js';
import type { GmailCategory, ImapSession } from '../mail/imap.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { EngineDeps } from './engine-deps.js';
import { traitsOf, type Traits } from './habits.js';
import type { PendingMessageRow } from './warmup-messages.repository.js';

/** What reading needs of the engine. */
export type SyncDeps = Pick<
  EngineDeps,
  'db' | 'dialect' | 'clock' | 'random' | 'logger' | 'workerId' | 'mailboxes' | 'settings' | 'imap' | 'rescueOnly'
>;

export interface SyncOptions {
  now: Date;
  /** Act at once: no reading delay, no waiting for waking hours, replies due now, no backoff. */
  ignoreSchedule: boolean;
  /** The engine is stopping: start no mailbox or message, drop the IMAP sessions in flight. */
  signal?: AbortSignal;
}

export interface SyncSummary {
  /** Mailboxes synced (IMAP or nothing to do). */
  synced: number;
  /** Claimed, but gone, paused or stopped by the time its turn came. */
  skipped: number;
  /** The sync of a mailbox failed (it is retried later). */
  failed: number;
  received: number;
  rescued: number;
  /** Gmail: mail taken from its tab (Promotions, Updates…) to Primary, counted when Gmail showed the change. */
  promoted: number;
  /** Gmail: mail marked Important (rescued from spam or a tab, or answered). */
  important: number;
  opened: number;
  flagged: number;
  replied: number;
  filed: number;
  bounced: number;
  lost: number;
  /** Replies a person wrote to warmup threads, filed into Warmup (never counted as warmup replies). */
  humanReplies: number;
  /** Automatic replies to warmup mail, filed into Warmup; their senders receive no warmup mail for a while. */
  autoReplies: number;
  /** Old warmup mail removed from Warmup folders. */
  pruned: number;
  /** Mailboxes this call put into `error`. */
  mailboxErrors: string[];
}

export interface Habits {
  timezone: string;
  /** 0..100, the user's setting */
  replyRate: number;
  /** The mailbox's own ways, the same in every worker (see habits.ts). */
  traits: Traits;
}

export function habitsOf(mailbox: MailboxRow): Habits {
  const settings = parseWarmupSettings(mailbox.warmup);
  return { timezone: validTimeZone(settings.timezone), replyRate: settings.replyRate, traits: traitsOf(mailbox.id) };
}

export interface SessionContext {
  deps: SyncDeps;
  mailbox: MailboxRow;
  habits: Habits;
  session: ImapSession;
  options: SyncOptions;
  summary: SyncSummary;
  log: Logger;
  /** The Warmup folder's path once made sure of in this session. */
  warmupPath: string | null;
}

/** A Gmail tab other than Primary. */
export function inGmailTab(category: string | null | undefined): category is Exclude<GmailCategory, 'primary'> {
  return category === 'promotions' || category === 'updates' || category === 'social' || category === 'forums';
}

/** An interaction of the mailbox about a message it received. */
export function interactionOf(
  mailbox: MailboxRow,
  row: PendingMessageRow,
  type: InteractionType,
  at: Date,
  placement?: Placement,
) {
  return {
    mailboxId: mailbox.id,
    type,
    senderMailboxId: row.sender_mailbox_id,
    counterpartMailboxId: row.sender_mailbox_id,
    counterpartEmail: row.sender_email,
    subject: row.subject,
    messageId: row.message_id,
    threadId: row.thread_id,
    placement: placement ?? null,
    occurredAt: at,
  };
}
