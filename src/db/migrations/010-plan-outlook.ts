import type { Kysely } from 'kysely';

/**
 * What the last plan of a mailbox wanted and why it got less: the ramp's target of the day before
 * the pool cut it (`ramp_target`), and the reason (`plan_limited_by`, `pool_too_small`), so the
 * API can say why a mailbox sends less than its ramp instead of a line in the server log.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per ALTER statement: SQLite cannot add several columns in one statement.
  await db.schema.alterTable('mailboxes').addColumn('ramp_target', 'integer').execute();
  await db.schema.alterTable('mailboxes').addColumn('plan_limited_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('plan_limited_by').execute();
  await db.schema.alterTable('mailboxes').dropColumn('ramp_target').execute();
}
