import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  createTestDatabase,
  insertRawMailbox,
  testMigrator,
  type TestDatabase,
} from '../../../test/helpers/test-database.js';
import { loadScanMarks, saveScanMarks } from '../../engine/owner-mail.repository.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

it('adds the hands-off state to existing mailboxes, keeps 32-bit UIDs whole, and goes back down', async () => {
  const m = await testMigrator(database);
  expect((await m.migrateTo('006-pool-trust')).error).toBeUndefined();
  await insertRawMailbox(database);

  expect((await m.migrateToLatest()).error).toBeUndefined();
  const row = await database.db
    .selectFrom('mailboxes')
    .select(['auto_reply_at', 'warmup_folder_pruned_at', 'answers_scanned_at'])
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ auto_reply_at: null, warmup_folder_pruned_at: null, answers_scanned_at: null });

  // IMAP UIDs and UIDVALIDITY are unsigned 32-bit: above a signed integer's range
  const at = new Date('2026-03-01T00:00:00.000Z');
  await saveScanMarks(database.db, 'mbx_1', { INBOX: { uidValidity: '4294967295', lastUid: 4_000_000_000 } }, at);
  await saveScanMarks(database.db, 'mbx_1', { INBOX: { uidValidity: '4294967295', lastUid: 4_000_000_001 } }, at);
  expect(await loadScanMarks(database.db, 'mbx_1')).toEqual({
    INBOX: { uidValidity: '4294967295', lastUid: 4_000_000_001 },
  });

  expect((await m.migrateTo('006-pool-trust')).error).toBeUndefined();
  // PostgreSQL lists every schema's tables: this test's own schema only
  const schema =
    database.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema
      : undefined;
  const tables = (await database.db.introspection.getTables()).filter(
    (t) => schema === undefined || t.schema === schema,
  );
  expect(tables.find((t) => t.name === 'mailboxes')!.columns.map((c) => c.name)).not.toContain('auto_reply_at');
  expect(tables.map((t) => t.name)).not.toContain('mail_scan_marks');
});
