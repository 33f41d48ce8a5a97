import type { Kysely } from 'kysely';

/**
 * Failed sign-ins counted in the database, not in each process: with several API replicas the
 * limits per account and per client address hold across all of them. One row per key
 * (`account:<email>` or `address:<ip>`) and window; a row whose window has ended is pruned.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('reset_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_reset_at').on('sign_in_failures').columns(['reset_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
}
