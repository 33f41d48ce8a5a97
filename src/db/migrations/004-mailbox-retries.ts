import type { Kysely } from 'kysely';

/**
 * Transient failures (a server down or slow) back off per mailbox instead of counting towards
 * `error`: `send_retries`/`sync_retries` count them in a row, `next_send_at` holds a mailbox's
 * sends until its SMTP server is tried again (`next_sync_at` already does that for IMAP).
 */
const COLUMNS = [
  { name: 'send_retries', type: 'integer', notNull: true },
  { name: 'sync_retries', type: 'integer', notNull: true },
  { name: 'next_send_at', type: 'text', notNull: false },
] as const;

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema
      .alterTable('mailboxes')
      .addColumn(column.name, column.type, (c) => (column.notNull ? c.notNull().defaultTo(0) : c))
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...COLUMNS].reverse()) {
    await db.schema.alterTable('mailboxes').dropColumn(column.name).execute();
  }
}
