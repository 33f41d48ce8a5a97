import type { Kysely } from 'kysely';

/**
 * Parallel planning: the new threads reserved for each recipient on each of its local days, so that
 * planners working at once on different mailboxes share every recipient's inbound cap. A planner
 * adds to `received` with one conditional UPDATE (`received + n <= cap`) before it writes the rows;
 * the count never goes below the rows written (see engine/plan-inbound.repository.ts). Keyed by day
 * first, so the days left behind go in one range delete.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('plan_inbound')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('received', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('plan_inbound_pk', ['day', 'mailbox_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('plan_inbound').execute();
}
