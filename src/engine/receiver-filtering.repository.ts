// The culprit rule's SQL (receiver-filtering.ts): where each sender's found mail was filed, per
// receiver, and the receivers found filtering, one row each while they are.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** One sender's mail at one receiver, over the window: found, and of that in spam. */
export interface FilingTally {
  senderId: string;
  receiverId: string;
  found: number;
  spam: number;
}

/** What makes a receiver the culprit, in numbers its owner can check. */
export interface FilteringFinding {
  /** Senders it files into spam while its witnesses find them in the inbox. */
  junkedSenders: number;
  /** Senders it and some witness both found mail from. */
  senders: number;
  /** Of the contrasting senders' mail it found, how much was in spam. */
  spam: number;
  found: number;
  /** The same at the witnesses. */
  witnessSpam: number;
  witnessFound: number;
}

/** Every sender's mail found since `since`, per receiver: found, and of that in spam. */
export async function tallyFiling(db: Kysely<Database>, since: Date): Promise<FilingTally[]> {
  const rows = await db
    .selectFrom('warmup_messages')
    .select([
      'sender_mailbox_id',
      'recipient_mailbox_id',
      sql<number>`cast(count(*) as integer)`.as('found'),
      sql<number>`cast(sum(case when placement = 'spam' then 1 else 0 end) as integer)`.as('spam'),
    ])
    .where('sent_at', '>=', since.toISOString())
    .where('found_at', 'is not', null)
    .groupBy(['sender_mailbox_id', 'recipient_mailbox_id'])
    .execute();
  return rows.map((row) => ({
    senderId: row.sender_mailbox_id,
    receiverId: row.recipient_mailbox_id,
    found: Number(row.found),
    spam: Number(row.spam),
  }));
}

/** Which of these receivers are filtering now. */
export async function listFilteringReceivers(
  db: Kysely<Database>,
  mailboxIds: readonly string[],
): Promise<Set<string>> {
  if (mailboxIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('receiver_filtering')
    .select('mailbox_id')
    .where('mailbox_id', 'in', [...mailboxIds])
    .execute();
  return new Set(rows.map((row) => row.mailbox_id));
}

export interface FilteringChange {
  /** Receivers that became filtering now: a new episode each. */
  started: Array<{ mailboxId: string; since: string }>;
  /** Receivers that no longer are. */
  ended: string[];
}

/** Makes the stored receivers the ones found; says which episodes started and ended. */
export async function saveFilteringReceivers(
  db: Kysely<Database>,
  findings: ReadonlyMap<string, FilteringFinding>,
  at: Date,
): Promise<FilteringChange> {
  const now = at.toISOString();
  const stored = new Set(
    (await db.selectFrom('receiver_filtering').select('mailbox_id').execute()).map((r) => r.mailbox_id),
  );
  const change: FilteringChange = { started: [], ended: [...stored].filter((id) => !findings.has(id)) };
  if (change.ended.length > 0)
    await db.deleteFrom('receiver_filtering').where('mailbox_id', 'in', change.ended).execute();
  for (const [mailboxId, finding] of findings) {
    const numbers = { junked_senders: finding.junkedSenders, senders: finding.senders, updated_at: now };
    if (stored.has(mailboxId)) {
      await db.updateTable('receiver_filtering').set(numbers).where('mailbox_id', '=', mailboxId).execute();
      continue;
    }
    const inserted = await db
      .insertInto('receiver_filtering')
      .values({ mailbox_id: mailboxId, since: now, ...numbers })
      // another worker may have started the same episode a moment ago: its row stands
      .onConflict((oc) => oc.column('mailbox_id').doNothing())
      .returning('mailbox_id')
      .executeTakeFirst();
    if (inserted) change.started.push({ mailboxId, since: now });
  }
  return change;
}
