// A migrated database is made once per test run and copied for every test file that asks for one:
// running the 40-odd migrations took one to five seconds a database, and a run opens a few hundred.
// The copy is what migrating gives (the same migrations, the same bookkeeping rows); only how long it
// takes differs. The template lives in the run's own folder (WARMUP_TEST_TEMPLATE_DIR, made by the
// global setup and removed after the run), so a migration changed between runs is always used.
// Without that folder (a benchmark, a script) every database is migrated as before.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrateToLatest, openDatabase, SQLITE_FILE } from '../../src/db/database.js';

/** The run's template folder, when the run has one. */
export function templateDir(): string | undefined {
  const dir = process.env.WARMUP_TEST_TEMPLATE_DIR;
  return dir && fs.existsSync(dir) ? dir : undefined;
}

/** Writes `build`'s result to `file` once per run: built aside, then renamed, so no reader sees half a file. */
async function once(file: string, build: (aside: string) => Promise<void>): Promise<string> {
  if (fs.existsSync(file)) return file;
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await build(aside);
    // two test files racing both build a whole template; the later rename wins, the same bytes
    fs.renameSync(aside, file);
  } finally {
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return file;
}

/** Puts a migrated SQLite database into `dataDir` by copying the run's template. */
export async function copySqliteTemplate(dir: string, dataDir: string): Promise<void> {
  const template = await once(path.join(dir, 'sqlite-template.db'), async (aside) => {
    const buildDir = `${aside}.dir`;
    try {
      const handle = openDatabase({ dataDir: buildDir });
      await migrateToLatest(handle.db, handle.dialect);
      // closing checkpoints the write-ahead log into the file and removes it: one file holds it all
      await handle.close();
      fs.copyFileSync(path.join(buildDir, SQLITE_FILE), aside);
    } finally {
      fs.rmSync(buildDir, { recursive: true, force: true });
    }
  });
  fs.mkdirSync(dataDir, { recursive: true });
  fs.copyFileSync(template, path.join(dataDir, SQLITE_FILE));
}

/** The placeholder the PostgreSQL template's SQL carries where each copy's schema name goes. */
const SCHEMA_PLACEHOLDER = '__warmup_template_schema__';

/**
 * Fills the empty schema `schema` with the run's migrated template: the template schema's dump
 * (pg_dump of one migrated schema, rows included), replayed under the new name in one round trip.
 * False when pg_dump is not there or fails (another major version than the server's): the caller migrates.
 */
export async function copyPostgresTemplate(dir: string, baseUrl: string, schema: string): Promise<boolean> {
  let script: string;
  try {
    const file = await once(path.join(dir, 'postgres-template.sql'), (aside) => dumpMigratedSchema(baseUrl, aside));
    script = fs.readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(script.replaceAll(SCHEMA_PLACEHOLDER, schema));
  } finally {
    await client.end();
  }
  return true;
}

async function dumpMigratedSchema(baseUrl: string, out: string): Promise<void> {
  const schema = `tpl_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const url = new URL(baseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const handle = openDatabase({ databaseUrl: url.toString(), dataDir: path.dirname(out), poolSize: 1 });
      try {
        await migrateToLatest(handle.db, handle.dialect);
      } finally {
        await handle.close();
      }
      const { stdout } = await promisify(execFile)(
        'pg_dump',
        ['--schema', schema, '--inserts', '--no-owner', '--no-privileges', '--dbname', baseUrl],
        { maxBuffer: 64 * 1024 * 1024 },
      );
      const statements = stdout
        .split('\n')
        // the copy's schema exists already; comments are not needed, and psql's own commands
        // (\\restrict, which newer pg_dump releases write around a dump) are not SQL
        .filter(
          (line) => !line.startsWith(`CREATE SCHEMA ${schema};`) && !line.startsWith('--') && !line.startsWith('\\'),
        )
        .join('\n')
        .replaceAll(schema, SCHEMA_PLACEHOLDER);
      if (!statements.includes(`${SCHEMA_PLACEHOLDER}.kysely_migration `))
        throw new Error('pg_dump gave no migration table');
      fs.writeFileSync(out, statements);
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  } finally {
    await admin.end();
  }
}
