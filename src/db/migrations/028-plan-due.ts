import type { Kysely } from 'kysely';
import { DUE_AT_ONCE } from './023-work-claims.js';

/**
 * Planning is claimed, not scanned, like the syncs and judgements of migration 023: each mailbox
 * carries the time it is next due for planning (the start of its next local day, once its day is
 * planned or could not be), so a cycle in which no active mailbox is due reads one row of an index
 * instead of the whole pool. New and migrated mailboxes are due at once; a change of their warmup
 * settings makes them due at once again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('mailboxes')
    .addColumn('plan_due_at', 'text', (c) => c.notNull().defaultTo(DUE_AT_ONCE))
    .execute();
  await db.schema.createIndex('mailboxes_plan_due_at').on('mailboxes').columns(['status', 'plan_due_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mailboxes_plan_due_at').execute();
  await db.schema.alterTable('mailboxes').dropColumn('plan_due_at').execute();
}
