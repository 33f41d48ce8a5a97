import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMigrator,
  openDatabase,
  STATEMENT_CACHE_CHARS,
  withSchemaIntrospection,
  type DatabaseHandle,
} from './database.js';
import { createPostgresSchema } from '../../test/helpers/postgres-schema.js';
import { createTestDatabase, ownSchema, testDialect, type TestDatabase } from '../../test/helpers/test-database.js';

// SQLite only: the compiled-statement cache is the SQLite connection's (PostgreSQL has no such step here).
describe('SQLite compiled statements', () => {
  let dir: string;
  let handle: DatabaseHandle;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-db-'));
    handle = openDatabase({ dataDir: dir, sqliteFile: path.join(dir, 'test.db') });
    await sql`create table notes (id integer primary key, body text not null)`.execute(handle.db);
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bodies = async () =>
    (await sql<{ body: string }>`select body from notes order by id`.execute(handle.db)).rows.map((r) => r.body);

  it('compiles a query once however often it runs', async () => {
    const prepare = vi.spyOn(SQLite.prototype, 'prepare');
    for (let i = 0; i < 3; i++) await bodies();
    expect(prepare.mock.calls.filter(([text]) => String(text).includes('select body from notes'))).toHaveLength(1);
  });

  it('a statement run again reads what was written since', async () => {
    expect(await bodies()).toEqual([]);
    await sql`insert into notes (body) values (${'first'})`.execute(handle.db);
    expect(await bodies()).toEqual(['first']);
    await sql`insert into notes (body) values (${'second'})`.execute(handle.db);
    expect(await bodies()).toEqual(['first', 'second']);
  });

  it('a statement compiled before the table changed sees its new columns', async () => {
    await sql`insert into notes (body) values (${'first'})`.execute(handle.db);
    const all = () => sql`select * from notes`.execute(handle.db);
    expect((await all()).rows).toEqual([{ id: 1, body: 'first' }]);
    await sql`alter table notes add column tag text`.execute(handle.db);
    expect((await all()).rows).toEqual([{ id: 1, body: 'first', tag: null }]);
  });

  it('keeps statements up to a total length of SQL: large ones used once push out the oldest', async () => {
    const prepare = vi.spyOn(SQLite.prototype, 'prepare');
    const compiledBodies = () =>
      prepare.mock.calls.filter(([text]) => String(text).includes('select body from notes')).length;
    await bodies();
    // texts that differ only in their number of values, each a fifth of the bound
    const ids = Array.from({ length: STATEMENT_CACHE_CHARS / 5 / 7 }, (_, i) => 100_000 + i).join(',');
    for (let extra = 0; extra < 6; extra++) {
      await sql.raw(`select id from notes where id in (${ids}${',1'.repeat(extra)})`).execute(handle.db);
    }
    await bodies();
    expect(compiledBodies()).toBe(2);
    await bodies();
    expect(compiledBodies()).toBe(2);
  });

  it('a streamed query leaves its statement usable by the next run', async () => {
    await sql`insert into notes (body) values ('a'), ('b'), ('c')`.execute(handle.db);
    const query = handle.db.selectFrom('notes' as never).select(sql<string>`body`.as('body'));
    const streamed: string[] = [];
    for await (const row of query.stream()) {
      streamed.push((row as { body: string }).body);
      if (streamed.length === 2) break;
    }
    expect(streamed).toEqual(['a', 'b']);
    expect((await query.execute()).map((row) => (row as { body: string }).body)).toEqual(['a', 'b', 'c']);
  });
});

describe.runIf(testDialect === 'postgres')('PostgreSQL migrations on a server shared with other schemas', () => {
  let database: TestDatabase;
  let other: Awaited<ReturnType<typeof createPostgresSchema>>;

  beforeEach(async () => {
    database = await createTestDatabase();
    other = await createPostgresSchema(process.env.TEST_DATABASE_URL!, 'other');
    await sql.raw(`create table ${other.schema}.notes (id serial primary key, body text)`).execute(database.db);
  });

  afterEach(async () => {
    await other.drop();
    await database.close();
  });

  it("reads the names of its own schema's tables only, and finds every migration applied", async () => {
    const schema = (await ownSchema(database))!;
    const { introspection } = withSchemaIntrospection(database.db, schema);
    expect(await introspection.getSchemas()).toEqual([{ name: schema }]);
    const tables = await introspection.getTables();
    const names = tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['kysely_migration', 'kysely_migration_lock', 'mailboxes']));
    expect(names).not.toContain('notes');
    expect(tables.every((t) => t.schema === schema)).toBe(true);

    const migrations = await (await createMigrator(database.db, database.dialect)).getMigrations();
    expect(migrations.length).toBeGreaterThan(25);
    expect(migrations.filter((m) => m.executedAt === undefined)).toEqual([]);
  });
});
