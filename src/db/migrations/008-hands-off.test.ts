import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';
import { loadScanMarks, saveScanMarks } from '../../engine/owner-mail.repository.js';

it('adds the hands-off state to existing mailboxes, keeps 32-bit UIDs whole, and goes back down', async () => {
  const database = await createTestDatabaseAt('006-pool-trust');
  await insertRawMailbox(database);

  await database.migrateToLatest();
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

  await database.migrateTo('006-pool-trust');
  expect(await database.columnsOf('mailboxes')).not.toContain('auto_reply_at');
  expect(await database.tableNames()).not.toContain('mail_scan_marks');
});
