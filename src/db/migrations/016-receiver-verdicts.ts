import type { Kysely } from 'kysely';

/**
 * What the receiving provider thought of each warmup email found (SPF, DKIM, DMARC and ARC from its
 * own Authentication-Results, Microsoft's SCL/BCL, a spam score): one row per found message, read
 * per sender and period. Also an index on warmup_messages(parent_message_id): a reply whose
 * Message-ID a provider replaced is recognised by the message it answers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('receiver_verdicts')
    .addColumn('warmup_message_id', 'text', (c) => c.primaryKey().references('warmup_messages.id').onDelete('cascade'))
    .addColumn('sender_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('recipient_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('receiver_provider', 'text', (c) => c.notNull())
    .addColumn('identified_by', 'text', (c) => c.notNull())
    .addColumn('placement', 'text', (c) => c.notNull())
    .addColumn('authserv_id', 'text')
    .addColumn('spf', 'text')
    .addColumn('dkim', 'text')
    .addColumn('dmarc', 'text')
    .addColumn('arc', 'text')
    .addColumn('scl', 'integer')
    .addColumn('bcl', 'integer')
    .addColumn('spam_score', 'double precision')
    .addColumn('found_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('receiver_verdicts_sender')
    .on('receiver_verdicts')
    .columns(['sender_mailbox_id', 'found_at'])
    .execute();
  await db.schema.createIndex('warmup_messages_parent').on('warmup_messages').columns(['parent_message_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_parent').execute();
  await db.schema.dropTable('receiver_verdicts').execute();
}
