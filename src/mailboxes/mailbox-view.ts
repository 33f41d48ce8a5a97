/*
 * A stored mailbox as the API shows it: its settings, pool membership, outlook and automatic-reply
 * state, and its activity with other workspaces' addresses masked.
 */
import type { InteractionRow, MailboxRow } from '../db/schema.js';
import { answersAutomatically, receivesAgainAt } from './auto-reply-rule.js';
import { poolMembership } from './mailbox-proof.js';
import { describeOutlook } from './mailbox-outlook.js';
import type { createMailboxesRepository } from './mailboxes.repository.js';
import type { AutoReplyState, Interaction, Mailbox, ServerSettings } from './mailboxes.schemas.js';
import { parseWarmupSettings } from './warmup-settings.js';

function autoReplyState(row: MailboxRow, now: Date): AutoReplyState | null {
  if (!answersAutomatically(row.auto_reply_at, now) || row.auto_reply_at === null) return null;
  const until = receivesAgainAt(row.auto_reply_at).toISOString();
  return {
    lastSeenAt: row.auto_reply_at,
    receivesAgainAt: until,
    reason: `This mailbox answers warmup mail automatically (out of office or vacation), so it receives no warmup mail until ${until}, 3 days after its last automatic reply. Turn the automatic reply off, then resume the mailbox to receive warmup mail again at once.`,
  };
}

export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export type OutlookFacts = Awaited<ReturnType<ReturnType<typeof createMailboxesRepository>['outlookFacts']>>;

export function toMailbox(row: MailboxRow, facts: OutlookFacts, now: Date): Mailbox {
  const pool = poolMembership(row);
  const warmup = parseWarmupSettings(row.warmup);
  const fact = facts.get(row.id);
  const autoReply = autoReplyState(row, now);
  const outlook = describeOutlook(
    {
      status: row.status,
      warmup,
      reputation: Number(row.reputation),
      warmupDay: Number(row.warmup_day),
      dailyTarget: Number(row.daily_target),
      rampTarget: row.ramp_target === null ? null : Number(row.ramp_target),
      limitedBy: row.plan_limited_by,
      lastError: row.last_error,
      inPool: pool.member,
      poolReason: pool.reason,
      slowedByGuard: Number(row.volume_factor) < 1,
      nextSendAt: fact?.nextSendAt ?? null,
      lastPlanDay: row.last_plan_day,
      week: { sent: fact?.sent ?? 0, found: fact?.found ?? 0, spam: fact?.spam ?? 0, bounced: fact?.bounced ?? 0 },
      autoReplyReason: autoReply?.reason ?? null,
      pausedFor: row.paused_for,
    },
    now,
  );
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    provider: row.provider,
    connectionType: row.connection_type,
    oauthProvider: row.oauth_provider,
    status: row.status,
    imap: parseJson<ServerSettings>(row.imap),
    smtp: parseJson<ServerSettings>(row.smtp),
    warmup,
    reputation: Number(row.reputation),
    warmupDay: Number(row.warmup_day),
    dailyTarget: Number(row.daily_target),
    lastSyncAt: row.last_sync_at,
    lastError: row.last_error,
    pool,
    outlook,
    autoReply,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** `j***@example.com`: enough to recognise a domain, nothing that identifies another workspace's user. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return '***';
  return `${address.slice(0, Math.min(1, at))}***@${address.slice(at + 1)}`;
}

export function toInteraction(row: InteractionRow, workspaceId: string): Interaction {
  // A counterpart of unknown workspace (null) is masked too: only our own mailboxes are shown in full.
  const ownCounterpart = row.counterpart_workspace_id === workspaceId;
  return {
    id: row.id,
    mailboxId: row.mailbox_id,
    type: row.type,
    counterpart: ownCounterpart ? row.counterpart_email : maskAddress(row.counterpart_email),
    subject: row.subject,
    messageId: row.message_id,
    threadId: row.thread_id,
    placement: row.placement,
    occurredAt: row.occurred_at,
  };
}
