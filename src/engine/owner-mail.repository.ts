// What the reader remembers so that it leaves the owner's mail alone: how far each folder was
// scanned for delivery reports, which mailboxes answer automatically, when the Warmup folder was
// last pruned, and which Message-IDs are warmup mail.
import type { Kysely } from 'kysely';
import type { Database, HumanRepliesTable } from '../db/schema.js';
import type { ScanMark } from '../mail/imap.js';

export async function loadScanMarks(db: Kysely<Database>, mailboxId: string): Promise<Record<string, ScanMark>> {
  const rows = await db
    .selectFrom('mail_scan_marks')
    .select(['folder', 'uid_validity', 'last_uid'])
    .where('mailbox_id', '=', mailboxId)
    .execute();
  return Object.fromEntries(
    rows.map((row) => [row.folder, { uidValidity: row.uid_validity, lastUid: Number(row.last_uid) }]),
  );
}

export async function saveScanMarks(
  db: Kysely<Database>,
  mailboxId: string,
  marks: Record<string, ScanMark>,
  at: Date,
): Promise<void> {
  for (const [folder, mark] of Object.entries(marks)) {
    await db
      .insertInto('mail_scan_marks')
      .values({
        mailbox_id: mailboxId,
        folder,
        uid_validity: mark.uidValidity,
        last_uid: mark.lastUid,
        updated_at: at.toISOString(),
      })
      .onConflict((oc) =>
        oc.columns(['mailbox_id', 'folder']).doUpdateSet({
          uid_validity: mark.uidValidity,
          last_uid: mark.lastUid,
          updated_at: at.toISOString(),
        }),
      )
      .execute();
  }
}

/** The mailbox's own warmup mail sent since `since`: what a person's or an automatic reply would answer. */
export async function listSentSince(
  db: Kysely<Database>,
  senderId: string,
  since: Date,
  limit: number,
): Promise<Array<{ message_id: string; recipient_mailbox_id: string; thread_id: string }>> {
  return db
    .selectFrom('warmup_messages')
    .select(['message_id', 'recipient_mailbox_id', 'thread_id'])
    .where('sender_mailbox_id', '=', senderId)
    .where('sent_at', 'is not', null)
    .where('sent_at', '>=', since.toISOString())
    .orderBy('sent_at', 'desc')
    .limit(limit)
    .execute();
}

/** Which of these Message-IDs (with angle brackets) are warmup mail of this installation. */
export async function knownMessageIds(db: Kysely<Database>, messageIds: readonly string[]): Promise<Set<string>> {
  const known = new Set<string>();
  const unique = [...new Set(messageIds.filter(Boolean))];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('warmup_messages')
      .select('message_id')
      .where('message_id', 'in', unique.slice(i, i + 500))
      .execute();
    for (const row of rows) known.add(row.message_id);
  }
  return known;
}

/** A warmup reply sent in answer to one of the messages asked about. */
export interface KnownReply {
  parentMessageId: string;
  fromEmail: string;
  sentAt: string | null;
}

/** The warmup replies to these messages from these senders (a few per message at most). */
export async function knownReplies(
  db: Kysely<Database>,
  answers: ReadonlyArray<{ parentMessageId: string | undefined; from: string }>,
): Promise<KnownReply[]> {
  const parents = [...new Set(answers.flatMap((a) => (a.parentMessageId ? [a.parentMessageId] : [])))];
  const replies: KnownReply[] = [];
  for (let i = 0; i < parents.length; i += 500) {
    const rows = await db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as m', 'm.id', 'w.sender_mailbox_id')
      .select(['w.parent_message_id', 'm.email', 'w.sent_at'])
      .where('w.parent_message_id', 'in', parents.slice(i, i + 500))
      .execute();
    for (const row of rows) {
      if (row.parent_message_id) {
        replies.push({ parentMessageId: row.parent_message_id, fromEmail: row.email, sentAt: row.sent_at });
      }
    }
  }
  return replies;
}

/** Notes an automatic reply of the mailbox at `at`; resolves to when the one before was seen (null: none). */
export async function recordAutoReply(
  db: Kysely<Database>,
  mailboxId: string,
  at: Date,
): Promise<{ previous: string | null } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('mailboxes')
      .select('auto_reply_at')
      .where('id', '=', mailboxId)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.auto_reply_at === null || row.auto_reply_at < at.toISOString()) {
      await trx.updateTable('mailboxes').set({ auto_reply_at: at.toISOString() }).where('id', '=', mailboxId).execute();
    }
    return { previous: row.auto_reply_at };
  });
}

export async function findAutoReplyAt(db: Kysely<Database>, mailboxId: string): Promise<string | null> {
  const row = await db.selectFrom('mailboxes').select('auto_reply_at').where('id', '=', mailboxId).executeTakeFirst();
  return row?.auto_reply_at ?? null;
}

/** Claims the Warmup folder's pruning for today: true when it was not pruned since `dueBefore`. */
export async function claimWarmupFolderPrune(
  db: Kysely<Database>,
  mailboxId: string,
  dueBefore: Date,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('mailboxes')
    .set({ warmup_folder_pruned_at: at.toISOString() })
    .where('id', '=', mailboxId)
    .where((eb) =>
      eb.or([eb('warmup_folder_pruned_at', 'is', null), eb('warmup_folder_pruned_at', '<', dueBefore.toISOString())]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function noteAnswersScanned(db: Kysely<Database>, mailboxId: string, at: Date): Promise<void> {
  await db.updateTable('mailboxes').set({ answers_scanned_at: at.toISOString() }).where('id', '=', mailboxId).execute();
}

/** The mailbox's workspace and where that workspace wants a person's reply left (`file` or `inbox`). */
export async function humanReplyChoice(
  db: Kysely<Database>,
  mailboxId: string,
): Promise<
  | { workspaceId: string; leave: 'file' | 'inbox'; mailbox: { id: string; email: string; name: string | null } }
  | undefined
> {
  const row = await db
    .selectFrom('mailboxes as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id as workspace_id', 'w.human_replies', 'm.id', 'm.email', 'm.name'])
    .where('m.id', '=', mailboxId)
    .executeTakeFirst();
  return (
    row && {
      workspaceId: row.workspace_id,
      leave: row.human_replies === 'inbox' ? 'inbox' : 'file',
      mailbox: { id: row.id, email: row.email, name: row.name },
    }
  );
}

/** Which of these reply keys of the mailbox are recorded already (a person's replies seen before). */
export async function recordedReplyKeys(
  db: Kysely<Database>,
  mailboxId: string,
  keys: readonly string[],
): Promise<Set<string>> {
  const recorded = new Set<string>();
  const unique = [...new Set(keys.filter(Boolean))];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('human_replies')
      .select('reply_key')
      .where('mailbox_id', '=', mailboxId)
      .where('reply_key', 'in', unique.slice(i, i + 500))
      .execute();
    for (const row of rows) recorded.add(row.reply_key);
  }
  return recorded;
}

/** Records a person's reply once per mailbox and reply key: true when this call recorded it. */
export async function insertHumanReply(trx: Kysely<Database>, row: HumanRepliesTable): Promise<boolean> {
  const inserted = await trx
    .insertInto('human_replies')
    .values(row)
    .onConflict((oc) => oc.columns(['mailbox_id', 'reply_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Closes what is still planned in a thread, with the reason: nothing more is written in it. */
export async function closePlannedInThread(trx: Kysely<Database>, threadId: string, reason: string): Promise<number> {
  const result = await trx
    .updateTable('warmup_messages')
    .set({ status: 'expired', last_error: reason, lease_owner: null, lease_expires_at: null })
    .where('thread_id', '=', threadId)
    .where('status', '=', 'planned')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether a person replied in this thread: the engine writes nothing more in it. */
export async function threadEndedByPerson(db: Kysely<Database>, threadId: string): Promise<boolean> {
  const row = await db.selectFrom('human_replies').select('id').where('thread_id', '=', threadId).executeTakeFirst();
  return row !== undefined;
}
