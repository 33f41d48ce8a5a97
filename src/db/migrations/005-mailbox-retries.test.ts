import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';

it('brings back the mailboxes the old rules stopped for an outage, and only those', async () => {
  const database = await createTestDatabaseAt('004-api-keys');
  await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'w', '2026-01-01T00:00:00.000Z')`.execute(
    database.db,
  );
  const stopped: Array<[string, string]> = [
    ['mbx_smtp', 'SMTP sending failed 3 times in a row: SMTP server mx.test:587 did not answer within 30 s'],
    ['mbx_imap', 'IMAP sync failed 3 times in a row: Cannot connect to IMAP server mx.test:993: connection refused'],
    ['mbx_454', 'SMTP login refused: check the app password (454 4.7.0 Temporary authentication failure)'],
    ['mbx_535', 'SMTP login refused: check the app password (535 5.7.8 Error: authentication failed)'],
    ['mbx_spam', 'Warmup stopped: 45% of this mailbox’s warmup emails landed in spam over the last 7 days'],
  ];
  for (const [id, lastError] of stopped) {
    await sql`insert into mailboxes (id, workspace_id, email, email_normalized, provider, connection_type, status,
        imap, smtp, password_encrypted, warmup, created_at, updated_at, failure_count, sync_failures, last_error)
      values (${id}, 'ws_1', ${`${id}@b.test`}, ${`${id}@b.test`}, 'custom', 'imap', 'error', '{}', '{}', 'x', '{}',
        '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 3, 0, ${lastError})`.execute(database.db);
  }

  await database.migrateToLatest();

  const rows = await database.db
    .selectFrom('mailboxes')
    .select(['id', 'status', 'last_error', 'failure_count', 'send_retries', 'next_send_at'])
    .orderBy('id')
    .execute();
  expect(rows.map((r) => [r.id, r.status])).toEqual([
    ['mbx_454', 'active'],
    ['mbx_535', 'error'],
    ['mbx_imap', 'active'],
    ['mbx_smtp', 'active'],
    ['mbx_spam', 'error'],
  ]);
  for (const row of rows.filter((r) => r.status === 'active')) {
    expect(row).toMatchObject({ last_error: null, failure_count: 0, send_retries: 0, next_send_at: null });
  }
});
