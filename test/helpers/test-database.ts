import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Migrator } from 'kysely';
import { createPostgresSchema } from './postgres-schema.js';
import { copyPostgresTemplate, copySqliteTemplate, templateDir } from './template-database.js';
import { createMigrator, migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';

/** Which database the suite runs on: `WARMUP_TEST_DB=postgres` (with TEST_DATABASE_URL) or SQLite. */
export const testDialect: 'sqlite' | 'postgres' = process.env.WARMUP_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase extends DatabaseHandle {
  /** The settings a child process (`warmup` CLI) needs to open the same database. */
  env: Record<string, string>;
  dataDir: string;
}

/**
 * A fresh, migrated database for one test file: a temporary SQLite file, or a PostgreSQL schema of
 * its own (dropped on close) so that test files never see each other's rows. Within a test run it
 * is a copy of the run's migrated template (template-database.ts).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-test-'));
  if (testDialect === 'postgres') {
    const baseUrl = process.env.TEST_DATABASE_URL;
    if (!baseUrl) throw new Error('WARMUP_TEST_DB=postgres needs TEST_DATABASE_URL');
    const schema = await createPostgresSchema(baseUrl, 't');
    const template = templateDir();
    const copied = template !== undefined && (await copyPostgresTemplate(template, baseUrl, schema.schema));
    const handle = openDatabase({ databaseUrl: schema.url, dataDir, poolSize: 5 });
    if (!copied) await migrateToLatest(handle.db, handle.dialect);
    return {
      ...handle,
      dataDir,
      env: { DATABASE_URL: schema.url, WARMUP_DATA_DIR: dataDir },
      close: async () => {
        await handle.close();
        await schema.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const template = templateDir();
  if (template !== undefined) await copySqliteTemplate(template, dataDir);
  const handle = openDatabase({ dataDir });
  if (template === undefined) await migrateToLatest(handle.db, handle.dialect);
  return {
    ...handle,
    dataDir,
    env: { WARMUP_DATA_DIR: dataDir },
    close: async () => {
      await handle.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The schema the test database's tables are in: its own on PostgreSQL; undefined on SQLite, a file of its own. */
export async function ownSchema(database: TestDatabase): Promise<string | undefined> {
  if (database.dialect !== 'postgres') return undefined;
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema;
}

/** A Migrator over the test database's own schema (PostgreSQL) or file (SQLite), to step through migrations. */
export function testMigrator(database: TestDatabase): Promise<Migrator> {
  return createMigrator(database.db, database.dialect);
}

/**
 * One workspace `ws_1` and one mailbox `mbx_1` in plain SQL, with only the columns every schema
 * from 006 on has: for migration tests that bring rows across a migration.
 */
export async function insertRawMailbox(database: TestDatabase, passwordEncrypted = 'x'): Promise<void> {
  await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'w', '2026-01-01T00:00:00.000Z')`.execute(
    database.db,
  );
  await sql`insert into mailboxes (id, workspace_id, email, email_normalized, provider, connection_type, status,
      imap, smtp, password_encrypted, warmup, created_at, updated_at)
    values ('mbx_1', 'ws_1', 'a@b.test', 'a@b.test', 'custom', 'imap', 'active', '{}', '{}', ${passwordEncrypted}, '{}',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(database.db);
}
