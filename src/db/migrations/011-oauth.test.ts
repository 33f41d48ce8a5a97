import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  createTestDatabase,
  insertRawMailbox,
  testMigrator,
  type TestDatabase,
} from '../../../test/helpers/test-database.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

it('adds the OAuth columns empty to existing mailboxes, and goes down again without losing them', async () => {
  const m = await testMigrator(database);
  expect((await m.migrateTo('006-pool-trust')).error).toBeUndefined();
  await insertRawMailbox(database, 'v1:x');

  expect((await m.migrateTo('011-oauth')).error).toBeUndefined();
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

  expect((await m.migrateTo('006-pool-trust')).error).toBeUndefined();
  expect((await m.migrateToLatest()).error).toBeUndefined();
});
