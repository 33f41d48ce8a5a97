import type { MigrationResultSet } from 'kysely';
import { onTestFinished } from 'vitest';
import { createTestDatabase, ownSchema, testMigrator, type TestDatabase } from './test-database.js';

export interface MigrationTestDatabase extends TestDatabase {
  /** Migrates up or down to `migration`; a migration that fails throws its error, failing the test. */
  migrateTo(migration: string): Promise<void>;
  /** Migrates up to the latest migration, likewise. */
  migrateToLatest(): Promise<void>;
  /** The names of the database's tables (on PostgreSQL its own schema's, not every schema's on the server). */
  tableNames(): Promise<string[]>;
  /** The column names of `table`; throws when there is no such table. */
  columnsOf(table: string): Promise<string[]>;
}

/**
 * A fresh test database migrated down to `migration`, for a migration test: it puts in the rows a
 * later migration has to carry across, then steps up and down with `migrateTo`. It is closed when
 * the test finishes, passed or not.
 */
export async function createTestDatabaseAt(migration: string): Promise<MigrationTestDatabase> {
  const database = await createTestDatabase();
  onTestFinished(() => database.close());
  const migrator = await testMigrator(database);
  const schema = await ownSchema(database);
  const succeeded = ({ error }: MigrationResultSet) => {
    if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
  };
  const tables = async () =>
    (await database.db.introspection.getTables()).filter((table) => schema === undefined || table.schema === schema);
  const migrationTestDatabase: MigrationTestDatabase = {
    ...database,
    migrateTo: async (name) => succeeded(await migrator.migrateTo(name)),
    migrateToLatest: async () => succeeded(await migrator.migrateToLatest()),
    tableNames: async () => (await tables()).map((table) => table.name),
    columnsOf: async (name) => {
      const table = (await tables()).find((candidate) => candidate.name === name);
      if (!table) throw new Error(`no table ${name} in the test database`);
      return table.columns.map((column) => column.name);
    },
  };
  await migrationTestDatabase.migrateTo(migration);
  return migrationTestDatabase;
}
