import type { Kysely } from 'kysely';

/**
 * Pool trust: a mailbox takes part in the pool only once a round trip proved that its SMTP sends
 * as its address and its IMAP receives that address's mail. Existing mailboxes start unproven:
 * the engine proves them on its next cycles, so no mailbox keeps its place on trust alone.
 */
const TEXT_COLUMNS = ['proven_at', 'proof_note', 'next_proof_at'];

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of TEXT_COLUMNS) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('mailboxes')
    .addColumn('proof_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Reputation and the health guard weigh each sender's mail sent over the last days by the
  // workspace of its receivers, read from the messages themselves.
  await db.schema.createIndex('warmup_messages_sent_at').on('warmup_messages').columns(['sent_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_sent_at').execute();
  await db.schema.alterTable('mailboxes').dropColumn('proof_attempts').execute();
  for (const column of [...TEXT_COLUMNS].reverse()) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
}
