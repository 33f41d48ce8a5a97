import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';

it('makes every existing API key an admin key, adds the account tables empty, and goes down again', async () => {
  const database = await createTestDatabaseAt('012-webhooks');
  await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'w', '2026-01-01T00:00:00.000Z')`.execute(
    database.db,
  );
  await sql`insert into api_keys (id, workspace_id, name, key_hash, created_at, prefix, origin)
    values ('key_1', 'ws_1', 'script', 'h1', '2026-01-01T00:00:00.000Z', 'wk_abcde', 'issued')`.execute(database.db);

  await database.migrateTo('013-accounts');
  const key = await database.db.selectFrom('api_keys').select(['id', 'role']).executeTakeFirstOrThrow();
  expect(key).toEqual({ id: 'key_1', role: 'admin' });
  for (const table of ['users', 'memberships', 'sessions', 'invites', 'installation'] as const) {
    expect(await database.db.selectFrom(table).selectAll().execute()).toEqual([]);
  }
  // one account per email, whatever its case (the service stores the lower-cased address)
  const user = (id: string, email: string) => ({
    id,
    email,
    email_normalized: email.toLowerCase(),
    name: 'x',
    password_hash: 'scrypt$…',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  await database.db.insertInto('users').values(user('usr_1', 'Ann@Example.com')).execute();
  await expect(database.db.insertInto('users').values(user('usr_2', 'ann@example.COM')).execute()).rejects.toThrow();

  await database.migrateTo('012-webhooks');
  expect(await database.tableNames()).not.toContain('users');
  expect(await database.columnsOf('api_keys')).not.toContain('role');
  await database.migrateToLatest();
});
