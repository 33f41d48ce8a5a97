import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  sql,
  type DialectAdapter,
  type MigrationProvider,
  type SqliteDatabase,
} from 'kysely';
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

/**
 * SQLite runs DDL inside transactions, but Kysely's adapter says it cannot, so its Migrator would
 * run migrations bare: a kill halfway through one would leave a schema no start can migrate.
 * Saying yes makes the Migrator run the pending migrations and their bookkeeping rows in one
 * transaction, as it already does on PostgreSQL.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class TransactionalDdlSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** The data folder holds the database and the secret key: only the service's user may enter it. */
const PRIVATE_DIRECTORY = 0o700;
/** The database, its WAL and shared-memory files: readable by the service's user alone. */
const PRIVATE_FILE = 0o600;

function makePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE));
  fs.chmodSync(file, PRIVATE_FILE); // exactly 0600 whatever the umask or an older release made of it
}

/** The SQLite database's name in the data folder. */
export const SQLITE_FILE = 'warmup.db';

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  const file = options.sqliteFile ?? path.join(options.dataDir, SQLITE_FILE);
  if (!options.sqliteFile) {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIRECTORY });
    try {
      fs.chmodSync(options.dataDir, PRIVATE_DIRECTORY);
    } catch (error) {
      // A folder the operator made for us but owns (a mounted volume): its mode is theirs to set,
      // and the files inside are still private.
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
    }
  } else {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIRECTORY });
  }
  // SQLite gives the -wal and -shm files the mode of the database file, so the file is made
  // private before SQLite opens it; files an older release left readable are narrowed too.
  for (const suffix of ['', '-wal', '-shm']) {
    if (suffix === '' || fs.existsSync(file + suffix)) makePrivateFile(file + suffix);
  }
  const sqlite = new SQLite(file);
  // WAL lets the CLI write (e.g. `workspace create`) while a server holds the file open.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({
    dialect: new TransactionalDdlSqliteDialect({ database: keepingStatements(sqlite) }),
  });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** SQL texts whose prepared statement a SQLite connection keeps for the next call (`keepStatement`). */
const keptTexts = new Set<string>();

/**
 * Asks SQLite connections to keep the statement prepared from `text` rather than prepare it anew on
 * every call, as Kysely does. For the few large texts run over and over (a 1,000-row INSERT of the
 * planner: 12,000 bound values), where preparing is a large part of the cost; every text kept holds
 * its statement for the life of the connection, so never one whose text varies.
 */
export function keepStatement(text: string): string {
  keptTexts.add(text);
  return text;
}

/** better-sqlite3 as Kysely's SQLite driver sees it, preparing each kept text once. */
function keepingStatements(sqlite: SQLite.Database): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text) {
      if (!keptTexts.has(text)) return sqlite.prepare(text);
      let statement = kept.get(text);
      if (statement === undefined) kept.set(text, (statement = sqlite.prepare(text)));
      return statement;
    },
  };
}

/**
 * Brings the schema up to date. On both dialects the pending migrations and their rows in the
 * migration table commit together or not at all (a failure or a kill leaves the previous schema).
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: Dialect,
  provider: MigrationProvider = migrationProvider,
): Promise<string[]> {
  // On PostgreSQL, pin Kysely's bookkeeping tables to the current schema: otherwise its existence
  // check sees the tables of any other schema on the server and never creates ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider,
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
