import { sql, type Kysely } from 'kysely';
import { utcDay } from '../calendar.js';
import type { Database, WarmupMessageRow } from '../db/schema.js';
import { newId } from '../db/ids.js';
import { incrementDaily, recordInteraction } from '../interactions/interactions.repository.js';
import type { Placement } from '../interactions/interactions.schemas.js';
import type { PeerOutcome } from './peer-mail.schemas.js';

// The stand-ins of a peer's addresses and the mail between them and ours. A stand-in is a row of
// `mailboxes` with status `peer` in its peer's own workspace: no credentials, never synced, never
// sent from; the planner sees it as a partner and nothing else reads it.

/** The workspace holding a peer's stand-ins: one per peer, so each peer is one party of its own. */
export function peerWorkspaceId(peerId: string): string {
  return `wsp_${peerId}`;
}

export async function ensurePeerWorkspace(db: Kysely<Database>, peerId: string, url: string, now: string) {
  await db
    .insertInto('workspaces')
    .values({ id: peerWorkspaceId(peerId), name: `peer ${url}`.slice(0, 200), created_at: now, peer_id: peerId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export interface StandInTerms {
  email: string;
  /** Its warmup settings JSON, from the peer's offer: its volume, window and time zone. */
  warmup: string;
}

/**
 * Brings a peer's stand-ins in line with its offer: new addresses added, known ones updated and
 * made partners again, the ones it no longer offers paused (their mail stops).
 */
export async function syncStandIns(
  db: Kysely<Database>,
  peerId: string,
  offered: readonly StandInTerms[],
  now: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const known = await trx
      .selectFrom('mailboxes')
      .select(['id', 'email_normalized'])
      .where('peer_id', '=', peerId)
      .execute();
    const byAddress = new Map(known.map((row) => [row.email_normalized, row.id]));
    const keep = new Set<string>();
    for (const terms of offered) {
      const normalized = terms.email.toLowerCase();
      keep.add(normalized);
      const id = byAddress.get(normalized);
      if (id !== undefined) {
        await trx
          .updateTable('mailboxes')
          .set({ status: 'peer', warmup: terms.warmup, updated_at: now })
          .where('id', '=', id)
          .execute();
        continue;
      }
      await trx
        .insertInto('mailboxes')
        .values({
          id: newId('mbx', Date.parse(now)),
          workspace_id: peerWorkspaceId(peerId),
          peer_id: peerId,
          email: terms.email,
          email_normalized: normalized,
          name: null,
          provider: 'custom',
          connection_type: 'imap',
          status: 'peer',
          imap: '{}',
          smtp: '{}',
          password_encrypted: '',
          warmup: terms.warmup,
          created_at: now,
          updated_at: now,
          proven_at: now,
          proof_note: null,
        })
        .execute();
    }
    const gone = known.filter((row) => !keep.has(row.email_normalized)).map((row) => row.id);
    if (gone.length > 0) await trx.updateTable('mailboxes').set({ status: 'paused' }).where('id', 'in', gone).execute();
  });
}

/** Stops every message to and from a peer's stand-ins at once: paused stand-ins are nobody's partners. */
export async function pauseStandIns(db: Kysely<Database>, peerId: string, now: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ status: 'paused', updated_at: now })
    .where('peer_id', '=', peerId)
    .where('status', '=', 'peer')
    .execute();
}

/** A stand-in of this peer by address, partner or not. */
export async function findStandIn(
  db: Kysely<Database>,
  peerId: string,
  email: string,
): Promise<{ id: string; status: string } | undefined> {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'status'])
    .where('peer_id', '=', peerId)
    .where('email_normalized', '=', email.toLowerCase())
    .executeTakeFirst();
}

/** A mailbox of ours (not a stand-in) by address, with what an announcement is checked against. */
export async function findLocalMailbox(db: Kysely<Database>, email: string) {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'email_normalized'])
    .where('email_normalized', '=', email.toLowerCase())
    .where('peer_id', 'is', null)
    .where('status', '=', 'active')
    .where('proven_at', 'is not', null)
    .executeTakeFirst();
}

export interface OutgoingPeerMessage {
  id: string;
  message_id: string;
  from: string;
  to: string;
  due_at: string;
  turn: number;
  parent_message_id: string | null;
}

/** Planned mail to a peer's partner stand-ins, due by `dueBy`, not announced yet; earliest first. */
export async function listUnannounced(
  db: Kysely<Database>,
  peerId: string,
  dueBy: string,
  limit: number,
): Promise<OutgoingPeerMessage[]> {
  return db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .select(['w.id', 'w.message_id', 's.email as from', 'r.email as to', 'w.due_at', 'w.turn', 'w.parent_message_id'])
    .where('r.peer_id', '=', peerId)
    .where('r.status', '=', 'peer')
    .where('w.status', '=', 'planned')
    .where('w.peer_announced_at', 'is', null)
    .where('w.due_at', '<=', dueBy)
    .orderBy('w.due_at')
    .limit(limit)
    .execute();
}

/**
 * Mail to a peer's stand-ins it accepted for one UTC day: what counts against its ceiling for us.
 * A message counts on the day it was announced for, as the peer counts it, even if it moves later.
 */
export async function countAnnouncedOfDay(db: Kysely<Database>, peerId: string, day: string): Promise<number> {
  const row = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
    .select(sql<number>`cast(count(*) as integer)`.as('n'))
    .where('r.peer_id', '=', peerId)
    .where('w.peer_day', '=', day)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function markAnnounced(db: Kysely<Database>, ids: readonly string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('warmup_messages')
    .set({ peer_announced_at: now, peer_day: sql<string>`substr(due_at, 1, 10)` })
    .where('id', 'in', [...ids])
    .where('peer_announced_at', 'is', null)
    .execute();
}

/** Mail from a peer's stand-ins announced for one UTC day (its `plan_day` here): what counts against the ceiling we gave it. */
export async function countExpectedOfDay(db: Kysely<Database>, peerId: string, day: string): Promise<number> {
  const row = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .select(sql<number>`cast(count(*) as integer)`.as('n'))
    .where('s.peer_id', '=', peerId)
    .where('w.plan_day', '=', day)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A message by its Message-ID, with the peer (if any) of its sender and of its recipient. */
export async function findByMessageId(db: Kysely<Database>, messageId: string) {
  return db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
    .select([
      'w.id',
      'w.thread_id',
      'w.sender_mailbox_id',
      'w.recipient_mailbox_id',
      'w.status',
      'w.found_at',
      'w.sent_at',
      'w.subject',
      'w.message_id',
      's.peer_id as sender_peer_id',
      'r.peer_id as recipient_peer_id',
      's.email as sender_email',
    ])
    .where('w.message_id', '=', messageId)
    .executeTakeFirst();
}

/** An announced message from a stand-in to one of ours: `sent` already, so the reader looks for it. */
export async function insertExpected(
  db: Kysely<Database>,
  row: Pick<
    WarmupMessageRow,
    'message_id' | 'thread_id' | 'sender_mailbox_id' | 'recipient_mailbox_id' | 'turn' | 'parent_message_id' | 'due_at'
  >,
  now: string,
): Promise<boolean> {
  const inserted = await db
    .insertInto('warmup_messages')
    .values({
      id: newId('wm', Date.parse(now)),
      ...row,
      kind: row.turn === 1 ? 'initial' : 'reply',
      plan_day: row.due_at.slice(0, 10),
      status: 'sent',
      sent_at: row.due_at,
      created_at: now,
    })
    .onConflict((oc) => oc.column('message_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * What a peer found of one of our messages to it: recorded once, as our own reader records a find
 * (the receipt's interaction on the stand-in, the placement counted for our sender) or a loss.
 * False when the message already had its outcome.
 */
export async function applyPeerOutcome(
  db: Kysely<Database>,
  message: Pick<
    WarmupMessageRow,
    'id' | 'message_id' | 'thread_id' | 'sender_mailbox_id' | 'recipient_mailbox_id' | 'subject' | 'sent_at'
  > & { sender_email: string },
  outcome: PeerOutcome,
  at: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (outcome === 'lost') {
      const lost = await trx
        .updateTable('warmup_messages')
        .set({ status: 'lost' })
        .where('id', '=', message.id)
        .where('status', '=', 'sent')
        .where('found_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!lost) return false;
      await incrementDaily(trx, message.sender_mailbox_id, utcDay(new Date(message.sent_at ?? at)), 'lost');
      return true;
    }
    const found = await trx
      .updateTable('warmup_messages')
      .set({ found_at: at.toISOString(), placement: outcome satisfies Placement })
      .where('id', '=', message.id)
      .where('status', '=', 'sent')
      .where('found_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!found) return false;
    return recordInteraction(trx, {
      mailboxId: message.recipient_mailbox_id,
      type: 'received',
      senderMailboxId: message.sender_mailbox_id,
      counterpartMailboxId: message.sender_mailbox_id,
      counterpartEmail: message.sender_email,
      subject: message.subject,
      messageId: message.message_id,
      threadId: message.thread_id,
      placement: outcome,
      occurredAt: at,
    });
  });
}

export interface InboundOutcome {
  id: string;
  message_id: string;
  outcome: PeerOutcome;
  at: string;
}

/** Mail from a peer's stand-ins whose outcome we have not reported to it yet (found or lost). */
export async function listUnreported(db: Kysely<Database>, peerId: string, limit: number): Promise<InboundOutcome[]> {
  const rows = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .select(['w.id', 'w.message_id', 'w.status', 'w.placement', 'w.found_at', 'w.sent_at'])
    .where('s.peer_id', '=', peerId)
    .where('w.peer_reported', 'is', null)
    .where((eb) => eb.or([eb('w.found_at', 'is not', null), eb('w.status', '=', 'lost')]))
    .orderBy('w.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    message_id: row.message_id,
    outcome: row.found_at !== null ? (row.placement ?? 'other') : 'lost',
    at: row.found_at ?? row.sent_at ?? new Date(0).toISOString(),
  }));
}

export async function markReported(db: Kysely<Database>, reported: readonly InboundOutcome[]): Promise<void> {
  for (const row of reported)
    await db
      .updateTable('warmup_messages')
      .set({ peer_reported: row.outcome })
      .where('id', '=', row.id)
      .where('peer_reported', 'is', null)
      .execute();
}

export interface FlowCounts {
  announced: number;
  found: number;
  inbox: number;
  spam: number;
  lost: number;
}

/** What flowed each way between our mailboxes and one peer's since `since` (by due time). */
export async function peerFlows(
  db: Kysely<Database>,
  peerId: string,
  since: string,
): Promise<{ toPeer: FlowCounts; fromPeer: FlowCounts }> {
  const tally = async (side: 'sender' | 'recipient'): Promise<FlowCounts> => {
    const column = side === 'recipient' ? 'w.recipient_mailbox_id' : 'w.sender_mailbox_id';
    const count = (condition: ReturnType<typeof sql>) =>
      sql<number>`cast(coalesce(sum(case when ${condition} then 1 else 0 end), 0) as integer)`;
    const row = await db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as p', 'p.id', column)
      .select([
        // to the peer: what it accepted the announcement of; from it: what it announced
        count(side === 'recipient' ? sql`w.peer_announced_at is not null` : sql`1 = 1`).as('announced'),
        count(sql`w.found_at is not null`).as('found'),
        count(sql`w.placement = 'inbox'`).as('inbox'),
        count(sql`w.placement = 'spam'`).as('spam'),
        count(sql`w.status = 'lost'`).as('lost'),
      ])
      .where('p.peer_id', '=', peerId)
      .where('w.due_at', '>=', since)
      .executeTakeFirst();
    return {
      announced: Number(row?.announced ?? 0),
      found: Number(row?.found ?? 0),
      inbox: Number(row?.inbox ?? 0),
      spam: Number(row?.spam ?? 0),
      lost: Number(row?.lost ?? 0),
    };
  };
  return { toPeer: await tally('recipient'), fromPeer: await tally('sender') };
}
