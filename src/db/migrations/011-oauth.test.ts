import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';

it('adds the OAuth columns empty to existing mailboxes, and goes down again without losing them', async () => {
  const database = await createTestDatabaseAt('006-pool-trust');
  await insertRawMailbox(database, 'v1:x');

  await database.migrateTo('011-oauth');
  const row = await database.db
    .selectFrom('mailboxes')
    .select(['id', 'connection_type', 'oauth_provider', 'refresh_token_encrypted', 'access_token_expires_at'])
    .executeTakeFirstOrThrow();
  expect(row).toEqual({
    id: 'mbx_1',
    connection_type: 'imap',
    oauth_provider: null,
    refresh_token_encrypted: null,
    access_token_expires_at: null,
  });
  await database.db
    .insertInto('oauth_states')
    .values({
      id: 'h',
      workspace_id: 'ws_1',
      provider: 'microsoft',
      mailbox_id: null,
      code_verifier_encrypted: 'v1:x',
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: '2026-01-01T00:10:00.000Z',
    })
    .execute();
  // a workspace's flows go with it
  await sql`delete from mailboxes`.execute(database.db);
  await sql`delete from workspaces where id = 'ws_1'`.execute(database.db);
  expect(await database.db.selectFrom('oauth_states').selectAll().execute()).toEqual([]);

  await database.migrateTo('006-pool-trust');
  await database.migrateToLatest();
});
