import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Statistics that list every mailbox of a workspace (placement's `byMailbox`, the daily summary's
 * `mailboxes`) read, per mailbox, its listing and its `daily_stats` rows of a day or two. On SQLite
 * each of those was an index entry and then the table's row: two tree walks per row, and a
 * mailbox's row is wide (settings, encrypted credentials). These indexes carry what the statistics
 * read, so SQLite answers from the index alone:
 *
 * - `daily_stats (workspace_id, day, mailbox_id, every counter, reputation)` replaces the
 *   `(workspace_id, day)` index it starts with, so every query that used that one still can.
 * - `mailboxes (workspace_id, email_normalized, id, email, provider, status)`: the listing the
 *   statistics join on, walked in the order of the emails, so sorting the answer by email finds it
 *   (nearly) sorted already.
 *
 * SQLite only. On PostgreSQL the rows of the days being counted are updated all day long, so an
 * index-only scan would still visit the table (its pages are not all-visible), and an index on the
 * counters would make every counter update a non-HOT update of all the table's indexes.
 */
const COUNTERS = [
  'sent',
  'received',
  'inbox',
  'spam',
  'promotions',
  'other',
  'rescued',
  'opened',
  'flagged',
  'replied',
  'bounced',
  'failed',
  'lost',
  'promoted_to_primary',
  'received_inbox',
  'received_spam',
  'received_promotions',
  'received_other',
  'reputation',
];

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema
    .createIndex('daily_stats_workspace_day_mailbox')
    .on('daily_stats')
    .columns(['workspace_id', 'day', 'mailbox_id', ...COUNTERS])
    .execute();
  await db.schema.dropIndex('daily_stats_workspace_day').execute();
  await db.schema
    .createIndex('mailboxes_workspace_listing')
    .on('mailboxes')
    .columns(['workspace_id', 'email_normalized', 'id', 'email', 'provider', 'status'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropIndex('mailboxes_workspace_listing').execute();
  await db.schema.createIndex('daily_stats_workspace_day').on('daily_stats').columns(['workspace_id', 'day']).execute();
  await db.schema.dropIndex('daily_stats_workspace_day_mailbox').execute();
}
