import type { Kysely } from 'kysely';

/**
 * The DNS pause rule and the DKIM selector: why a paused mailbox is paused (`dns` when the rule
 * paused it, so it resumes by itself once fixed; null when its owner did), the selector of its
 * DKIM key with where it came from, and since when each DNS check has been failing.
 */
const MAILBOX_COLUMNS = ['paused_for', 'dkim_selector', 'dkim_selector_source'];

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of MAILBOX_COLUMNS) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('mailbox_checks').addColumn('failing_since', 'text').execute();
  await db.schema
    .createTable('mailbox_sending_ips')
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mailbox_sending_ips_pk', ['mailbox_id', 'ip'])
    .execute();
  await db.schema
    .createTable('blocklist_results')
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('zone', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('delist_url', 'text')
    .addColumn('listed_since', 'text')
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('blocklist_results_pk', ['mailbox_id', 'zone', 'subject'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('blocklist_results').execute();
  await db.schema.dropTable('mailbox_sending_ips').execute();
  await db.schema.alterTable('mailbox_checks').dropColumn('failing_since').execute();
  for (const column of [...MAILBOX_COLUMNS].reverse()) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
}
