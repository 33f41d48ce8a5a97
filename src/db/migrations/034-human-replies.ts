import type { Kysely } from 'kysely';

/**
 * What people wrote in reply to warmup mail, kept for the mailbox's owner (the reader used to file
 * it and only count it), and the workspace's choice of where such a reply is left: `file` (into
 * the Warmup folder, as before) or `inbox`. One row per mailbox and reply: `reply_key` is the
 * reply's Message-ID, or a key made of what identifies it when it has none, so several workers
 * and repeated scans record it once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('workspaces')
    .addColumn('human_replies', 'text', (c) => c.notNull().defaultTo('file'))
    .execute();
  await db.schema
    .createTable('human_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('reply_key', 'text', (c) => c.notNull())
    // the warmup message it answers, by Message-ID: retention may delete the row, the reply stays
    .addColumn('answers_message_id', 'text', (c) => c.notNull())
    .addColumn('thread_id', 'text')
    // the pool mailbox that received the warmup message answered (null: no longer known)
    .addColumn('pool_mailbox_id', 'text')
    .addColumn('from_name', 'text', (c) => c.notNull())
    .addColumn('from_email', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('written_at', 'text')
    .addColumn('excerpt', 'text', (c) => c.notNull())
    .addColumn('folder', 'text', (c) => c.notNull())
    .addColumn('found_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('human_replies_mailbox_reply', ['mailbox_id', 'reply_key'])
    .execute();
  await db.schema
    .createIndex('human_replies_mailbox_found')
    .on('human_replies')
    .columns(['mailbox_id', 'found_at'])
    .execute();
  await db.schema.createIndex('human_replies_thread').on('human_replies').columns(['thread_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('human_replies').execute();
  await db.schema.alterTable('workspaces').dropColumn('human_replies').execute();
}
