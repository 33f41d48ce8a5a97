import { sql, type Kysely } from 'kysely';

/**
 * What the old rules put into `error` for an outage (three failures of any kind in a row, or a
 * `454 Temporary authentication failure` taken for a refused login): those mailboxes come back to
 * `active` by themselves, as they would now.
 */
const OLD_TRANSIENT_STOPS = [
  'SMTP sending failed 3 times in a row:%',
  'IMAP sync failed 3 times in a row:%',
  'SMTP login refused: check the app password (4%',
];

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
  await sql`
    update mailboxes set status = 'active', last_error = null, failure_count = 0, sync_failures = 0,
      next_sync_at = null
    where status = 'error' and (${sql.join(
      OLD_TRANSIENT_STOPS.map((pattern) => sql`last_error like ${pattern}`),
      sql` or `,
    )})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of [...COLUMNS].reverse()) {
    await db.schema.alterTable('mailboxes').dropColumn(column.name).execute();
  }
}
