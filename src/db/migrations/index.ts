import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';

/** Migrations in order; new ones are appended with the next number. */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
