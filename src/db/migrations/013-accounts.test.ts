import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDatabase, testMigrator, type TestDatabase } from '../../../test/helpers/test-database.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

it('makes every existing API key an admin key, adds the account tables empty, and goes down again', async () => {
  const m = await testMigrator(database);
  expect((await m.migrateTo('012-webhooks')).error).toBeUndefined();
  await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'w', '2026-01-01T00:00:00.000Z')`.execute(
    database.db,
  );
  await sql`insert into api_keys (id, workspace_id, name, key_hash, created_at, prefix, origin)
    values ('key_1', 'ws_1', 'script', 'h1', '2026-01-01T00:00:00.000Z', 'wk_abcde', 'issued')`.execute(database.db);

  expect((await m.migrateTo('013-accounts')).error).toBeUndefined();
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

  expect((await m.migrateTo('012-webhooks')).error).toBeUndefined();
  // PostgreSQL lists every schema's tables (other test files' too): this test's own schema only
  const schema =
    database.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema
      : undefined;
  const columns = (await database.db.introspection.getTables()).filter(
    (t) => schema === undefined || t.schema === schema,
  );
  expect(columns.map((t) => t.name)).not.toContain('users');
  expect(columns.find((t) => t.name === 'api_keys')?.columns.map((c) => c.name)).not.toContain('role');
  expect((await m.migrateToLatest()).error).toBeUndefined();
});
