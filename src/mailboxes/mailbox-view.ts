/*
 * A stored mailbox as the API shows it: its settings, pool membership, outlook and automatic-reply
 * state, and its activity with other workspaces' addresses masked.
 */
import type { Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Database, HumanReplyRow, InteractionRow, MailboxRow } from '../db/schema.js';
import { answersAutomatically, receivesAgainAt } from './auto-reply-rule.js';
import { poolMembership } from './mailbox-proof.js';
import { describeOutlook, moreDomainsText } from './mailbox-outlook.js';
import { createMailboxesRepository } from './mailboxes.repository.js';
import {
  viewedStatus,
  type AutoReplyState,
  type HumanReply,
  type Interaction,
  type Mailbox,
  type PoolLine,
  type ServerSettings,
} from './mailboxes.schemas.js';
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
      status: viewedStatus(row.status),
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
      filtering: fact?.filtering ?? null,
      providerHold: fact?.providerHold ?? null,
      providerWarning: fact?.providerWarning ?? null,
      planCapacity: row.plan_capacity === null ? null : Number(row.plan_capacity),
      planLift: row.plan_lift === null ? null : Number(row.plan_lift),
      stoppedAt: row.stopped_at,
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
    status: viewedStatus(row.status),
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

/** The outlook's attention thresholds judge the last 7 days of its own mail (as the health guard does). */
export const OUTLOOK_DAYS = 7;

/**
 * Mailboxes as the API returns them, each with its outlook (one query for the rows' facts, not one
 * per mailbox): the mailboxes routes and the stats exports read them here, so both show the same state.
 */
export async function presentMailboxes(
  db: Kysely<Database>,
  workspaceId: string,
  rows: MailboxRow[],
  now: Date,
): Promise<Mailbox[]> {
  const facts = await createMailboxesRepository(db).outlookFacts(
    workspaceId,
    rows.map((row) => row.id),
    addDays(utcDay(now), -(OUTLOOK_DAYS - 1)),
  );
  return rows.map((row) => toMailbox(row, facts, now));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/**
 * The workspace's pool in one line, from what the planner's capacity model stored on each active
 * member's last plan (the same figures its state shows): what the pool carries per mailbox (the
 * median), what the ramps want, and what would lift the ones it holds back. Null before any plan.
 */
export function describePool(rows: readonly MailboxRow[]): PoolLine | null {
  const members = rows.filter(
    (row) => row.status === 'active' && poolMembership(row).member && row.ramp_target !== null,
  );
  if (members.length === 0) return null;
  const wants = members.map((row) => Number(row.ramp_target));
  const heldRows = members.filter((row) => row.plan_limited_by === 'pool_too_small');
  const carried = members.map((row) =>
    row.plan_limited_by === 'pool_too_small'
      ? Math.min(Number(row.plan_capacity ?? row.daily_target), Number(row.ramp_target))
      : Number(row.ramp_target),
  );
  const carries = median(carried);
  let moreDomains: number | null = 0;
  for (const row of heldRows)
    moreDomains = row.plan_lift === null || moreDomains === null ? null : Math.max(moreDomains, Number(row.plan_lift));
  const min = Math.min(...wants);
  const max = Math.max(...wants);
  const range = min === max ? `${min}` : `${min}–${max}`;
  const perMailbox = members.length === 1 ? 'for your mailbox' : 'per mailbox';
  const text =
    heldRows.length === 0
      ? `Your pool carries what your ramps want today: ${range} emails a day ${perMailbox}.`
      : `Your pool carries about ${carries} emails a day ${perMailbox}; your ramps want ${range}: ` +
        `${moreDomainsText(moreDomains)}${carries > 0 ? `, or lower the daily limit to ${carries}` : ''}.`;
  return { members: members.length, carries, wants: { min, max }, held: heldRows.length, moreDomains, text };
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

export function toHumanReply(row: HumanReplyRow): HumanReply {
  return {
    id: row.id,
    mailboxId: row.mailbox_id,
    from: { name: row.from_name, email: row.from_email },
    subject: row.subject,
    date: row.written_at,
    excerpt: row.excerpt,
    folder: row.folder,
    answersMessageId: row.answers_message_id,
    foundAt: row.found_at,
  };
}
