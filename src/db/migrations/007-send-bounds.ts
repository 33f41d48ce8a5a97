import type { Kysely } from 'kysely';

/**
 * Send bounds: before each send the sender reads what the mailbox sent on its local day and when it
 * last sent (the day's budget and the minimum gap). One index makes that a short range scan per
 * mailbox, however long its history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('warmup_messages_sender_sent')
    .on('warmup_messages')
    .columns(['sender_mailbox_id', 'sent_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_sender_sent').execute();
}
