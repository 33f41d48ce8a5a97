import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';

it('indexes the DMARC records whose source was not named yet, which the dmarcNames job reads, and goes back down', async () => {
  const database = await createTestDatabaseAt('043-peers');
  // the job's own question (src/dmarc/source-names.ts)
  const unnamed = () =>
    database.db
      .selectFrom('dmarc_records')
      .where('source_name', 'is', null)
      .select('source_ip')
      .distinct()
      .orderBy('source_ip')
      .limit(50);
  const indexes = async () =>
    database.dialect === 'sqlite'
      ? (
          await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'index' and tbl_name = 'dmarc_records'`.execute(database.db)
        ).rows.map((row) => row.name)
      : (
          await sql<{ name: string }>`select indexname as name from pg_indexes
            where tablename = 'dmarc_records' and schemaname = current_schema()`.execute(database.db)
        ).rows.map((row) => row.name);

  expect(await indexes()).not.toContain('dmarc_records_unnamed');
  await database.migrateTo('044-dmarc-unnamed-sources');
  expect(await indexes()).toContain('dmarc_records_unnamed');
  if (database.dialect === 'sqlite') {
    const { sql: text, parameters } = unnamed().compile();
    const values = [...parameters];
    const plan = await sql<{ detail: string }>`explain query plan ${sql.raw(
      text.replace(/\?/g, () => JSON.stringify(values.shift())),
    )}`.execute(database.db);
    expect(plan.rows.map((row) => row.detail).join('\n')).toMatch(/USING (COVERING )?INDEX dmarc_records_unnamed/);
  }
  expect(await unnamed().execute()).toEqual([]);

  await database.migrateTo('043-peers');
  expect(await indexes()).not.toContain('dmarc_records_unnamed');
});
