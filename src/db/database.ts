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
  type DatabaseIntrospector,
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

/** Compiled statements kept per SQLite connection: the distinct queries of a running service, with room to spare. */
const STATEMENT_CACHE_SIZE = 500;
/**
 * The SQL text the kept statements may add up to. A compiled statement grows with its text, and
 * texts that differ only in their number of values (an `IN` list, the last rows of a multi-row
 * INSERT) would otherwise fill the cache with large statements used once: 500 of those held
 * hundreds of MB while a day of 100,000 mailboxes was planned.
 */
export const STATEMENT_CACHE_CHARS = 1_000_000;

/**
 * Kysely prepares every query it runs, and better-sqlite3 compiles the SQL again each time: about
 * 0.1 ms a statement, as much as a small query's own work. This remembers the compiled statements
 * by their SQL text (least recently used dropped first, within a count and a total text length).
 * A statement still being iterated (a streamed query) is not handed out twice: a fresh one is
 * compiled instead.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  let chars = 0;
  return {
    close: () => sqlite.close(),
    prepare(text) {
      const known = statements.get(text);
      if (known && !known.busy) {
        statements.delete(text);
        statements.set(text, known);
        return known;
      }
      const statement = sqlite.prepare(text);
      if (!known && text.length <= STATEMENT_CACHE_CHARS) {
        statements.set(text, statement);
        chars += text.length;
        while (statements.size > STATEMENT_CACHE_SIZE || chars > STATEMENT_CACHE_CHARS) {
          const oldest = statements.keys().next().value!;
          statements.delete(oldest);
          chars -= oldest.length;
        }
      }
      return statement;
    },
  };
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
    dialect: new TransactionalDdlSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
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
  const migrator = await createMigrator(db, dialect, provider);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** A Migrator over the database's current schema (PostgreSQL) or file (SQLite). */
export async function createMigrator(
  db: Kysely<Database>,
  dialect: Dialect,
  provider: MigrationProvider = migrationProvider,
): Promise<Migrator> {
  // On PostgreSQL, pin Kysely's bookkeeping tables to the current schema: otherwise its existence
  // check sees the tables of any other schema on the server and never creates ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  if (!schema) return new Migrator({ db, provider });
  return new Migrator({ db: withSchemaIntrospection(db, schema), provider, migrationTableSchema: schema });
}

/**
 * The database with an introspection that lists only `schema`'s tables, by name. Kysely's own reads
 * every column of every table of every schema on the server to learn whether its bookkeeping table
 * exists: slow on a server that holds many schemas, and it fails ("schema … does not exist") when
 * another schema is dropped while it runs (another installation, or another test file, on the same
 * server). The migrator only asks for the tables' names.
 */
export function withSchemaIntrospection(db: Kysely<Database>, schema: string): Kysely<Database> {
  const schemas = sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`;
  const tables = sql<{ name: string; type: string }>`
    select table_name as name, table_type as type from information_schema.tables where table_schema = ${schema}`;
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => (await schemas.execute(db)).rows,
    getTables: async () =>
      (await tables.execute(db)).rows.map((row) => ({
        name: row.name,
        schema,
        isView: row.type === 'VIEW',
        columns: [],
      })),
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  // Kysely's methods read private fields: they run on the database itself, not on the proxy.
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Runs `work` in one transaction; repositories take the `trx` it receives. */
export function inTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
