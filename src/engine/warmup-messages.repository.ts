/*
 * The engine's SQL on `warmup_messages`: planned rows in, and every status a message passes through (planned → sent → found → engaged, or bounced, failed, lost, expired).
 * Each write is guarded by the status it expects, so two workers racing on a row change it once.
 * Functions take `db` or a transaction's `trx`; the caller decides what goes in one transaction.
 * Claims and row leases of due rows are in warmup-message-claims.repository.ts.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import { insertMany } from '../db/insert-many.js';
import type { Database, WarmupMessageRow, WarmupMessagesTable } from '../db/schema.js';
import type { Placement } from '../interactions/interactions.schemas.js';
import { placementSendsOfDay } from '../placement-tests/placement-tests.repository.js';

export type NewWarmupMessageRow = Insertable<WarmupMessagesTable>;

// ---------------------------------------------------------------------------------------------
// Planning

/** Planned rows in, 1,000 per INSERT through a statement SQLite keeps prepared (db/insert-many.ts). */
export async function insertPlannedMessages(
  trx: Kysely<Database>,
  rows: readonly NewWarmupMessageRow[],
): Promise<void> {
  await insertMany(trx, 'warmup_messages', rows);
}

/**
 * A reply planned by its recipient; its Message-ID derives from the parent's, so a second insert is
 * a no-op. True when this call inserted it.
 */
export async function insertPlannedReply(trx: Kysely<Database>, row: NewWarmupMessageRow): Promise<boolean> {
  const inserted = await trx
    .insertInto('warmup_messages')
    .values(row)
    .onConflict((oc) => oc.column('message_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Whether the mailbox already has a reply (planned or sent) to this parent. */
export async function hasReplyFrom(trx: Kysely<Database>, senderId: string, parentMessageId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('warmup_messages')
    .select('id')
    .where('sender_mailbox_id', '=', senderId)
    .where('parent_message_id', '=', parentMessageId)
    .executeTakeFirst();
  return row !== undefined;
}

/** A mailbox's planned rows of one of its days, every kind. */
export async function countPlannedOfDay(trx: Kysely<Database>, senderId: string, day: string): Promise<number> {
  const row = await trx
    .selectFrom('warmup_messages')
    .select(sql<number>`cast(count(*) as integer)`.as('n'))
    .where('sender_mailbox_id', '=', senderId)
    .where('plan_day', '=', day)
    .where('status', '=', 'planned')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Closes the latest planned new thread of a mailbox's day that no worker holds, with the reason. */
export async function expireLastPlannedThread(
  trx: Kysely<Database>,
  senderId: string,
  day: string,
  reason: string,
): Promise<boolean> {
  const last = await trx
    .selectFrom('warmup_messages')
    .select('id')
    .where('sender_mailbox_id', '=', senderId)
    .where('plan_day', '=', day)
    .where('kind', '=', 'initial')
    .where('status', '=', 'planned')
    .where('lease_owner', 'is', null)
    .orderBy('due_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (last) await expirePlannedMessage(trx, last.id, reason);
  return last !== undefined;
}

/** Traffic of every mailbox since `since` (ISO instant), by due time: inbound and outbound counts (closed mail left out). */
export async function loadPoolTraffic(
  db: Kysely<Database>,
  since: string,
): Promise<Map<string, { inbound: number; outbound: number }>> {
  const traffic = new Map<string, { inbound: number; outbound: number }>();
  const entry = (id: string) => {
    let found = traffic.get(id);
    if (!found) {
      found = { inbound: 0, outbound: 0 };
      traffic.set(id, found);
    }
    return found;
  };
  const inbound = await db
    .selectFrom('warmup_messages')
    .select(['recipient_mailbox_id as id', sql<number>`cast(count(*) as integer)`.as('n')])
    .where('due_at', '>=', since)
    // mail closed unsent by the send bounds was never traffic
    .where('status', '!=', 'expired')
    .groupBy('recipient_mailbox_id')
    .execute();
  for (const row of inbound) entry(row.id).inbound = Number(row.n);
  const outbound = await db
    .selectFrom('warmup_messages')
    .select(['sender_mailbox_id as id', sql<number>`cast(count(*) as integer)`.as('n')])
    .where('due_at', '>=', since)
    .where('status', '!=', 'expired')
    .groupBy('sender_mailbox_id')
    .execute();
  for (const row of outbound) entry(row.id).outbound = Number(row.n);
  return traffic;
}

/** New threads due in [from, to): their recipient and due time (for the inbound bound). */
export async function loadInitialsDueBetween(
  db: Kysely<Database>,
  from: Date,
  to: Date,
): Promise<Array<{ recipient_mailbox_id: string; due_at: string }>> {
  return db
    .selectFrom('warmup_messages')
    .select(['recipient_mailbox_id', 'due_at'])
    .where('kind', '=', 'initial')
    .where('status', '!=', 'expired')
    .where('due_at', '>=', from.toISOString())
    .where('due_at', '<', to.toISOString())
    .execute();
}

/**
 * What planning these senders needs of their recent mail, from one read of the (sender, plan_day)
 * index: per recipient, local day and kind, the messages over the days [fromDay, toDay] and how many
 * of them are still `planned`. New threads give the pair counts; planned replies come before new
 * threads on their day.
 */
export async function loadSenderDays(
  db: Kysely<Database>,
  senderIds: readonly string[],
  fromDay: string,
  toDay: string,
): Promise<Array<{ sender: string; recipient: string; day: string; kind: string; n: number; planned: number }>> {
  if (senderIds.length === 0) return [];
  const rows = await db
    .selectFrom('warmup_messages')
    .select([
      'sender_mailbox_id as sender',
      'recipient_mailbox_id as recipient',
      'plan_day as day',
      'kind',
      sql<number>`cast(count(*) as integer)`.as('n'),
      sql<number>`cast(sum(case when status = 'planned' then 1 else 0 end) as integer)`.as('planned'),
    ])
    .where('sender_mailbox_id', 'in', senderIds)
    .where('plan_day', '>=', fromDay)
    .where('plan_day', '<=', toDay)
    .groupBy(['sender_mailbox_id', 'recipient_mailbox_id', 'plan_day', 'kind'])
    .execute();
  return rows.map((row) => ({ ...row, n: Number(row.n), planned: Number(row.planned) }));
}

// ---------------------------------------------------------------------------------------------
// Sending: content and outcome

export async function findMessageContent(
  db: Kysely<Database>,
  messageId: string,
): Promise<Pick<WarmupMessageRow, 'subject' | 'body_text' | 'body_html' | 'sent_at'> | undefined> {
  return db
    .selectFrom('warmup_messages')
    .select(['subject', 'body_text', 'body_html', 'sent_at'])
    .where('message_id', '=', messageId)
    .executeTakeFirst();
}

/**
 * Who opened a thread and from what: the first message's template (null when the conversation
 * generator wrote it) and its sender's workspace and settings, which fix the thread's plan and language.
 */
export async function findThreadOpener(
  db: Kysely<Database>,
  threadId: string,
): Promise<
  { template_id: string | null; sender_mailbox_id: string; workspace_id: string; warmup: string } | undefined
> {
  return db
    .selectFrom('warmup_messages')
    .innerJoin('mailboxes', 'mailboxes.id', 'warmup_messages.sender_mailbox_id')
    .select([
      'warmup_messages.template_id',
      'warmup_messages.sender_mailbox_id',
      'mailboxes.workspace_id',
      'mailboxes.warmup',
    ])
    .where('warmup_messages.message_id', '=', threadId)
    .executeTakeFirst();
}

/** Every message of a thread as (Message-ID, parent's Message-ID). */
export async function listThread(
  db: Kysely<Database>,
  threadId: string,
): Promise<Array<Pick<WarmupMessageRow, 'message_id' | 'parent_message_id' | 'sent_at' | 'due_at'>>> {
  return db
    .selectFrom('warmup_messages')
    .select(['message_id', 'parent_message_id', 'sent_at', 'due_at'])
    .where('thread_id', '=', threadId)
    .execute();
}

/**
 * Stores the written text on a row that has none yet, and returns the row's text as stored: the
 * first writer's, when a worker racing on the same row wrote first. Undefined when the row is gone.
 */
export async function storeContentOnce(
  db: Kysely<Database>,
  id: string,
  content: { subject: string; body_text: string; body_html: string; template_id: string | null },
): Promise<Pick<WarmupMessageRow, 'subject' | 'body_text' | 'body_html'> | undefined> {
  // the first writer has its text back at once; a later one (or a row gone) reads what is stored
  const written = await db
    .updateTable('warmup_messages')
    .set(content)
    .where('id', '=', id)
    .where('subject', 'is', null)
    .returning(['subject', 'body_text', 'body_html'])
    .executeTakeFirst();
  if (written) return written;
  return db
    .selectFrom('warmup_messages')
    .select(['subject', 'body_text', 'body_html'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function markMessageSent(trx: Kysely<Database>, id: string, at: Date, attempts: number): Promise<void> {
  await trx
    .updateTable('warmup_messages')
    .set({
      status: 'sent',
      sent_at: at.toISOString(),
      attempts,
      last_error: null,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .execute();
}

/** A planned row due again later; it keeps its lease until the caller gives it back. */
export async function rescheduleMessage(
  db: Kysely<Database>,
  id: string,
  retry: { attempts: number; dueAt: Date; lastError: string },
): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ attempts: retry.attempts, due_at: retry.dueAt.toISOString(), last_error: retry.lastError })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .execute();
}

/**
 * What a sender sent in [span.start, span.end), every kind, and its last send since `since`
 * (earlier sends are too far back to matter for the gap).
 */
export async function loadSendsOfDay(
  db: Kysely<Database>,
  senderId: string,
  span: { start: Date; end: Date },
  since: Date,
): Promise<{ sent: number; lastSentAt: Date | null }> {
  const row = await db
    .selectFrom('warmup_messages')
    .select([
      sql<number>`cast(sum(case when sent_at >= ${span.start.toISOString()} and sent_at < ${span.end.toISOString()} then 1 else 0 end) as integer)`.as(
        'sent',
      ),
      sql<string | null>`max(sent_at)`.as('last'),
    ])
    .where('sender_mailbox_id', '=', senderId)
    .where('sent_at', '>=', (since < span.start ? since : span.start).toISOString())
    .executeTakeFirst();
  // the copies of the sender's placement tests are sends of its day too
  const placement = await placementSendsOfDay(db, senderId, span, since);
  const last = row?.last ? new Date(row.last) : null;
  return {
    sent: Number(row?.sent ?? 0) + placement.sent,
    lastSentAt: placement.lastSentAt && (!last || placement.lastSentAt > last) ? placement.lastSentAt : last,
  };
}

/** A sender's planned rows due in (after, before), replies and new threads: what later today already holds of its budget. */
export async function countPlannedBetween(
  db: Kysely<Database>,
  senderId: string,
  after: Date,
  before: Date,
): Promise<{ replies: number; threads: number }> {
  const row = await db
    .selectFrom('warmup_messages')
    .select([
      sql<number>`cast(sum(case when kind = 'reply' then 1 else 0 end) as integer)`.as('replies'),
      sql<number>`cast(sum(case when kind = 'reply' then 0 else 1 end) as integer)`.as('threads'),
    ])
    .where('sender_mailbox_id', '=', senderId)
    .where('status', '=', 'planned')
    .where('due_at', '>', after.toISOString())
    .where('due_at', '<', before.toISOString())
    .executeTakeFirst();
  return { replies: Number(row?.replies ?? 0), threads: Number(row?.threads ?? 0) };
}

/** A planned row due at another time (and maybe on another day); it keeps its lease until the caller gives it back. */
export async function movePlannedMessage(
  db: Kysely<Database>,
  id: string,
  move: { dueAt: Date; planDay: string },
): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ due_at: move.dueAt.toISOString(), plan_day: move.planDay })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .execute();
}

/** A planned row that will not be sent because no bound allows it: `expired`, with the reason. */
export async function expirePlannedMessage(db: Kysely<Database>, id: string, reason: string): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ status: 'expired', last_error: reason, lease_owner: null, lease_expires_at: null })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .execute();
}

/** A planned row that will not be sent: `bounced` or `failed`. Undefined when it was no longer planned. */
export async function closeUnsentMessage(
  trx: Kysely<Database>,
  id: string,
  outcome: { status: 'bounced' | 'failed'; attempts: number; lastError: string },
): Promise<{ subject: string | null } | undefined> {
  return trx
    .updateTable('warmup_messages')
    .set({
      status: outcome.status,
      attempts: outcome.attempts,
      last_error: outcome.lastError,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .returning('subject')
    .executeTakeFirst();
}

// ---------------------------------------------------------------------------------------------
// Reading

export type PendingMessageRow = WarmupMessageRow & { sender_email: string };

/** Message-IDs of mail to a mailbox that it finished with (read and filed) since `since`. */
export async function listRecentlyEngagedForRecipient(
  db: Kysely<Database>,
  mailboxId: string,
  since: Date,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('warmup_messages')
    .select('message_id')
    .where('recipient_mailbox_id', '=', mailboxId)
    .where('engaged_at', '>=', since.toISOString())
    .orderBy('engaged_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => row.message_id);
}

/**
 * Sent mail addressed to a mailbox that it has not finished with: not found yet, or found since
 * `engagedGiveUpSince` and not acted on (with `dueBy`, only when its next step is due by then).
 * Oldest first, at most `limit`.
 */
export async function listPendingForRecipient(
  db: Kysely<Database>,
  recipientId: string,
  engageGiveUpSince: Date,
  limit: number,
  dueBy?: Date,
): Promise<PendingMessageRow[]> {
  return db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .selectAll('w')
    .select('s.email as sender_email')
    .where('w.recipient_mailbox_id', '=', recipientId)
    .where('w.status', '=', 'sent')
    .where((eb) =>
      eb.or([
        eb('w.found_at', 'is', null),
        // a found message that vanished (deleted by the owner) is not looked for forever
        eb.and([
          eb('w.engaged_at', 'is', null),
          eb('w.found_at', '>=', engageGiveUpSince.toISOString()),
          // mail waiting for its next step is not worth a login
          ...(dueBy
            ? [eb.or([eb('w.engage_after', 'is', null), eb('w.engage_after', '<=', dueBy.toISOString())])]
            : []),
        ]),
      ]),
    )
    .orderBy('w.sent_at')
    .limit(limit)
    .execute();
}

/**
 * When the earliest found message waiting to be read (or answered) by this recipient is due for its
 * next step; undefined when none waits. The reader's next sync is due then at the latest.
 */
export async function findNextEngageAfter(
  db: Kysely<Database>,
  recipientId: string,
  engageGiveUpSince: Date,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('warmup_messages')
    .select((eb) => eb.fn.min('engage_after').as('next'))
    .where('recipient_mailbox_id', '=', recipientId)
    .where('status', '=', 'sent')
    .where('engaged_at', 'is', null)
    .where('found_at', '>=', engageGiveUpSince.toISOString())
    .executeTakeFirst();
  return row?.next ?? undefined;
}

/** A mailbox's own mail sent since `since` that nobody found yet (where a bounce may still turn up). */
export async function listUnfoundSentBy(
  db: Kysely<Database>,
  senderId: string,
  since: Date,
  limit: number,
): Promise<WarmupMessageRow[]> {
  return db
    .selectFrom('warmup_messages')
    .selectAll()
    .where('sender_mailbox_id', '=', senderId)
    .where('status', '=', 'sent')
    .where('found_at', 'is', null)
    .where('sent_at', '>=', since.toISOString())
    .orderBy('sent_at')
    .limit(limit)
    .execute();
}

/** When the recipient takes each step on a message it found; null: a step it does not take. */
export interface EngagementPlan {
  rescueAt: Date | null;
  openAt: Date | null;
  flagAt: Date | null;
  replyAt: Date | null;
  fileAt: Date;
}

/** The plan as the row's columns. */
export function engagementPlanColumns(plan: EngagementPlan) {
  const iso = (at: Date | null) => (at ? at.toISOString() : null);
  return {
    rescue_due_at: iso(plan.rescueAt),
    open_due_at: iso(plan.openAt),
    flag_due_at: iso(plan.flagAt),
    reply_due_at: iso(plan.replyAt),
    file_due_at: plan.fileAt.toISOString(),
  };
}

/** The recipient found the message and planned what it does with it; true when this call was the first to say so. */
export async function markMessageFound(
  trx: Kysely<Database>,
  id: string,
  found: {
    at: Date;
    placement: Placement;
    engageAfter: Date;
    plan: EngagementPlan;
    category?: string | null;
    /** The subject it arrived with, for mail whose text we did not write (a peer's): a reply takes it up. */
    subject?: string;
  },
): Promise<boolean> {
  const updated = await trx
    .updateTable('warmup_messages')
    .set({
      ...(found.subject !== undefined ? { subject: found.subject } : {}),
      found_at: found.at.toISOString(),
      placement: found.placement,
      gmail_category: found.category ?? null,
      engage_after: found.engageAfter.toISOString(),
      ...engagementPlanColumns(found.plan),
    })
    .where('id', '=', id)
    .where('found_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** The plan a found row holds; undefined for mail found before plans were kept. */
export function engagementPlanOf(row: WarmupMessageRow): EngagementPlan | undefined {
  if (row.file_due_at === null) return undefined;
  const at = (iso: string | null) => (iso === null ? null : new Date(iso));
  return {
    rescueAt: at(row.rescue_due_at),
    openAt: at(row.open_due_at),
    flagAt: at(row.flag_due_at),
    replyAt: at(row.reply_due_at),
    fileAt: new Date(row.file_due_at),
  };
}

/** A plan for mail found before plans were kept; a plan already stored stays. */
export async function storeEngagementPlan(db: Kysely<Database>, id: string, plan: EngagementPlan): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set(engagementPlanColumns(plan))
    .where('id', '=', id)
    .where('file_due_at', 'is', null)
    .execute();
}

/** The next step on a found message is due at `at`: the reader passes it over until then. */
export async function setEngageAfter(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ engage_after: at.toISOString() })
    .where('id', '=', id)
    .where('engaged_at', 'is', null)
    .execute();
}

export async function markMessageRescued(trx: Kysely<Database>, id: string, at: Date): Promise<void> {
  await trx
    .updateTable('warmup_messages')
    .set({ rescued_at: at.toISOString() })
    .where('id', '=', id)
    .where('rescued_at', 'is', null)
    .execute();
}

/**
 * The recipient tried to take the message from its Gmail tab to Primary: the step is done (its due
 * time cleared), and `promoted_at` is set when it took effect. True when this call noted an
 * effective one first.
 */
export async function markMessagePromotion(
  db: Kysely<Database>,
  id: string,
  at: Date,
  effective: boolean,
): Promise<boolean> {
  const updated = await db
    .updateTable('warmup_messages')
    .set({ rescue_due_at: null, ...(effective ? { promoted_at: at.toISOString() } : {}) })
    .where('id', '=', id)
    .where('promoted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return effective && updated !== undefined;
}

export async function markMessageEngaged(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db.updateTable('warmup_messages').set({ engaged_at: at.toISOString() }).where('id', '=', id).execute();
}

/** A delivery report names a sent message; true when this call was the first to mark it. */
export async function markSentMessageBounced(trx: Kysely<Database>, id: string, lastError: string): Promise<boolean> {
  const updated = await trx
    .updateTable('warmup_messages')
    .set({ status: 'bounced', last_error: lastError })
    .where('id', '=', id)
    .where('status', '=', 'sent')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/**
 * Mail sent before `sentBefore` and never found although its (active) recipient synced after it
 * was sent: marked `lost` in one UPDATE … RETURNING, so two workers never take one row twice.
 */
export async function markUnfoundMessagesLost(
  trx: Kysely<Database>,
  sentBefore: Date,
): Promise<Array<{ sender_mailbox_id: string; sent_at: string | null }>> {
  return (
    trx
      .updateTable('warmup_messages')
      .set({ status: 'lost' })
      .where('status', '=', 'sent')
      .where('found_at', 'is', null)
      .where('sent_at', '<', sentBefore.toISOString())
      // its recipient, by its key (not a list of every active mailbox per row), has been read since
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('mailboxes as r')
            .select('r.id')
            .whereRef('r.id', '=', 'warmup_messages.recipient_mailbox_id')
            .where('r.status', '=', 'active')
            .whereRef('r.last_sync_at', '>', 'warmup_messages.sent_at'),
        ),
      )
      .returning(['sender_mailbox_id', 'sent_at'])
      .execute()
  );
}

// ---------------------------------------------------------------------------------------------
// Evidence for reputation and the health guard

/** One sender's mail sent since a moment, as one receiving mailbox saw it. */
export interface ReceiverTally {
  senderMailboxId: string;
  senderWorkspaceId: string;
  receiverWorkspaceId: string;
  receiverMailboxId: string;
  receiverEmail: string;
  sent: number;
  found: number;
  spam: number;
  lost: number;
  bounced: number;
}

/**
 * What each receiver made of each sender's mail sent since `since`, from the messages themselves
 * (not the rollups), so that the receiver's workspace is known and a deleted receiver takes its
 * reports with it.
 */
export async function tallyByReceiver(
  db: Kysely<Database>,
  since: Date,
  senderIds: readonly string[],
): Promise<ReceiverTally[]> {
  if (senderIds.length === 0) return [];
  const rows = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
    .select([
      'w.sender_mailbox_id',
      's.workspace_id as sender_workspace_id',
      'r.workspace_id as receiver_workspace_id',
      'r.id as receiver_mailbox_id',
      'r.email_normalized as receiver_email',
      sql<number>`cast(count(*) as integer)`.as('sent'),
      sql<number>`cast(count(w.found_at) as integer)`.as('found'),
      sql<number>`cast(sum(case when w.found_at is not null and w.placement = 'spam' then 1 else 0 end) as integer)`.as(
        'spam',
      ),
      sql<number>`cast(sum(case when w.status = 'lost' then 1 else 0 end) as integer)`.as('lost'),
      sql<number>`cast(sum(case when w.status = 'bounced' then 1 else 0 end) as integer)`.as('bounced'),
    ])
    .where('w.sender_mailbox_id', 'in', senderIds)
    .where('w.sent_at', '>=', since.toISOString())
    .groupBy(['w.sender_mailbox_id', 's.workspace_id', 'r.workspace_id', 'r.id', 'r.email_normalized'])
    .execute();
  return rows.map((row) => ({
    senderMailboxId: row.sender_mailbox_id,
    senderWorkspaceId: row.sender_workspace_id,
    receiverWorkspaceId: row.receiver_workspace_id,
    receiverMailboxId: row.receiver_mailbox_id,
    receiverEmail: row.receiver_email,
    sent: Number(row.sent),
    found: Number(row.found),
    spam: Number(row.spam),
    lost: Number(row.lost),
    bounced: Number(row.bounced),
  }));
}
