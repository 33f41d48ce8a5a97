import type { Kysely } from 'kysely';

/**
 * Placement tests: a user's own copy sent once by one of their mailboxes to a seed set of their
 * workspace's pool mailboxes, and one row per copy with where the seed found it. Kept apart from
 * warmup_messages so that nothing of a placement test reaches the interactions or the rollups.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('placement_tests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('sender_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema
    .createIndex('placement_tests_workspace')
    .on('placement_tests')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('placement_tests_status').on('placement_tests').column('status').execute();

  await db.schema
    .createTable('placement_test_copies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('test_id', 'text', (c) => c.notNull().references('placement_tests.id').onDelete('cascade'))
    .addColumn('sender_mailbox_id', 'text', (c) => c.notNull())
    .addColumn('seed_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull().unique())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('placement', 'text')
    .addColumn('folder', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('found_at', 'text')
    .execute();
  await db.schema.createIndex('placement_test_copies_test').on('placement_test_copies').column('test_id').execute();
  // the sender's sends of a day count these copies (engine/send-budget.ts)
  await db.schema
    .createIndex('placement_test_copies_sender')
    .on('placement_test_copies')
    .columns(['sender_mailbox_id', 'sent_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('placement_test_copies').execute();
  await db.schema.dropTable('placement_tests').execute();
}
