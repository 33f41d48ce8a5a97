import type { Kysely } from 'kysely';

/**
 * Placement counted on the receiving side as well: `received_<placement>` on a mailbox's rollup is
 * where the warmup mail it received was filed. Placement by the receiver's provider ("where Gmail
 * put our mail") then reads rollups only, never the interactions.
 */
const COLUMNS = ['received_inbox', 'received_spam', 'received_promotions', 'received_other'];

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema
      .alterTable('daily_stats')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...COLUMNS].reverse()) {
    await db.schema.alterTable('daily_stats').dropColumn(column).execute();
  }
}
