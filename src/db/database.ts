import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A postgres:// URL; without one the database is SQLite in dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** Overrides the SQLite file (tests use a temporary one). */
  sqliteFile?: string;
  poolSize?: number;
}

// PostgreSQL returns int8 (COUNT, SUM) as strings to stay exact; our counts fit a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  const file = options.sqliteFile ?? path.join(options.dataDir, 'warmup.db');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL lets the CLI write (e.g. `workspace create`) while a server holds the file open.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

export async function migrateToLatest(db: Kysely<Database>, dialect: Dialect): Promise<string[]> {
  // On PostgreSQL, pin Kysely's bookkeeping tables to the current schema: otherwise its existence
  // check sees the tables of any other schema on the server and never creates ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Runs `work` in one transaction; repositories take the `trx` it receives. */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
