import { sql, type Kysely } from 'kysely';

/**
 * When a mailbox stopped (`stopped_at`, set as it enters `error`, cleared when it works again), so
 * its page and exports say since when; and how many more mailboxes, each on a domain of its own, the
 * capacity model found would carry its ramp on its last planned day (`plan_lift`; null when the pool
 * carried it, or when even the model's most would not). A mailbox already stopped is taken to have
 * stopped at its last status change (`updated_at`), the best record there is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').addColumn('stopped_at', 'text').execute();
  await db.schema.alterTable('mailboxes').addColumn('plan_lift', 'integer').execute();
  await sql`update mailboxes set stopped_at = updated_at where status = 'error'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('plan_lift').execute();
  await db.schema.alterTable('mailboxes').dropColumn('stopped_at').execute();
}
