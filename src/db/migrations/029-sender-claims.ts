import type { Kysely } from 'kysely';

/**
 * Senders are claimed one at a time (engine/sender.ts): each claim reads one sender's planned rows
 * that are due. This index makes that a short range scan of the rows it claims, however long the
 * sender's history of sent rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('warmup_messages_sender_due')
    .on('warmup_messages')
    .columns(['sender_mailbox_id', 'status', 'due_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_sender_due').execute();
}
