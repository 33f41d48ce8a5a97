import type { Kysely } from 'kysely';

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  const messageColumns = ['engage_after', 'engaged_at', 'rescued_at'];
  for (const column of messageColumns) {
    await db.schema.alterTable('warmup_messages').addColumn(column, 'text').execute();
  }
  for (const column of ['next_sync_at', 'last_plan_day']) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  // IMAP failures are counted apart from SMTP's failure_count: a success on one side must not
  // hide repeated failures on the other.
  await db.schema
    .alterTable('mailboxes')
    .addColumn('sync_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // The reader looks up, per recipient, the sent mail it has not finished with yet.
  await db.schema
    .createIndex('warmup_messages_recipient_pending')
    .on('warmup_messages')
    .columns(['recipient_mailbox_id', 'status', 'engaged_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_recipient_pending').execute();
  for (const column of ['sync_failures', 'last_plan_day', 'next_sync_at']) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
  for (const column of ['rescued_at', 'engaged_at', 'engage_after']) {
    await db.schema.alterTable('warmup_messages').dropColumn(column).execute();
  }
}
