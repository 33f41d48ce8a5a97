import type { Kysely } from 'kysely';

/**
 * A workspace-level daily rollup for the statistics: one row per workspace per finished UTC day,
 * the sums of its mailboxes' `daily_stats` rows, folded by a leased job after the day is over
 * (stats/workspace-rollup.ts), never by the engine's transactions (a row every interaction of a
 * workspace had to update once serialised the workers and deadlocked them). `stats_folds` keeps
 * each workspace's last day folded; later days are summed live from `daily_stats`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  let table = db.schema
    .createTable('workspace_daily_stats')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull());
  for (const column of COUNTERS) table = table.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0));
  await table
    .addColumn('reputation_sum', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reputation_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('workspace_daily_stats_pk', ['workspace_id', 'day'])
    .execute();
  await db.schema
    .createTable('stats_folds')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('through_day', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('stats_folds').execute();
  await db.schema.dropTable('workspace_daily_stats').execute();
}

/** The counters of a day kept per workspace: those the workspace-wide statistics sum. */
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
] as const;
