import type { Kysely } from 'kysely';

/**
 * What the pool carried for a mailbox on a planned day (the capacity model, src/engine/pool-capacity.ts),
 * kept beside the ramp target on the plan row and on the mailbox: below the target, the pool held it
 * back, and by how much. Null on plans made before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailbox_plans').addColumn('capacity', 'integer').execute();
  await db.schema.alterTable('mailboxes').addColumn('plan_capacity', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('plan_capacity').execute();
  await db.schema.alterTable('mailbox_plans').dropColumn('capacity').execute();
}
