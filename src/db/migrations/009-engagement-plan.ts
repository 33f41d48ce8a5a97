import type { Kysely } from 'kysely';

/**
 * People differ: what a mailbox does with a warmup message it found, and when, planned once when
 * it finds the message and carried out over later syncs. A null time is a step not taken (mail
 * not opened is not flagged or answered); filing always comes last. Messages found before this
 * migration get their plan at their next sync.
 */
const DUE_COLUMNS = ['rescue_due_at', 'open_due_at', 'flag_due_at', 'reply_due_at', 'file_due_at'];

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of DUE_COLUMNS) {
    await db.schema.alterTable('warmup_messages').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...DUE_COLUMNS].reverse()) {
    await db.schema.alterTable('warmup_messages').dropColumn(column).execute();
  }
}
