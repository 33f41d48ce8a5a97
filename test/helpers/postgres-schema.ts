import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A fresh PostgreSQL schema of its own in the database of `baseUrl` (dropped by `drop`), named
 * `<prefix>_<random>`; its URL sets the search path. One per test file or benchmark run, so that
 * neither sees another's rows. No vitest here: the benchmarks use it too.
 */
export async function createPostgresSchema(
  baseUrl: string,
  prefix: string,
): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  await onAdmin(baseUrl, `CREATE SCHEMA ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { schema, url: url.toString(), drop: () => onAdmin(baseUrl, `DROP SCHEMA ${schema} CASCADE`) };
}

async function onAdmin(baseUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}
