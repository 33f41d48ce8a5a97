import type { Kysely } from 'kysely';

/**
 * Receivers found filing most senders' warmup mail into spam while other receivers find it in the
 * inbox (the culprit rule): one row per mailbox while it is such a receiver, removed when it no
 * longer is. A row's start is its episode: the `mailbox.receiver_filtering` event is made once per
 * episode, and the evidence of every sender sets its spam aside while the row is there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('receiver_filtering')
    .addColumn('mailbox_id', 'text', (c) => c.primaryKey().references('mailboxes.id').onDelete('cascade'))
    .addColumn('since', 'text', (c) => c.notNull())
    // the numbers of the latest finding: senders it junks, of the senders it could be compared on
    .addColumn('junked_senders', 'integer', (c) => c.notNull())
    .addColumn('senders', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('receiver_filtering').execute();
}
