import type { Kysely } from 'kysely';

/**
 * When a mailbox last became active again (resumed, or reconnected out of `error`): a mailbox back
 * in the middle of its send window gets only the late share of a day planned before, as one
 * started late would. Null: active since it was created (or never paused since this column came).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').addColumn('active_since', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('active_since').execute();
}
