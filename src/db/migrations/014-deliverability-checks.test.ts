import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  createTestDatabase,
  insertRawMailbox,
  testMigrator,
  type TestDatabase,
} from '../../../test/helpers/test-database.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

it('adds the DNS rule, DKIM selector and blocklist state empty to existing mailboxes, and goes down and up again', async () => {
  const m = await testMigrator(database);
  expect((await m.migrateTo('012-webhooks')).error).toBeUndefined();
  await insertRawMailbox(database, 'v1:x');
  await database.db
    .insertInto('mailbox_checks')
    .values({ mailbox_id: 'mbx_1', check: 'dmarc', status: 'fail', detail: 'none', fix: 'publish', checked_at: 'x' })
    .execute();

  expect((await m.migrateTo('014-deliverability-checks')).error).toBeUndefined();
  const row = await database.db
    .selectFrom('mailboxes')
    .select(['status', 'paused_for', 'dkim_selector', 'dkim_selector_source'])
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ status: 'active', paused_for: null, dkim_selector: null, dkim_selector_source: null });
  // a failure seen before the rule existed starts counting at its next check
  expect(await database.db.selectFrom('mailbox_checks').select('failing_since').execute()).toEqual([
    { failing_since: null },
  ]);
  await database.db
    .insertInto('mailbox_sending_ips')
    .values({ mailbox_id: 'mbx_1', ip: '85.10.20.99', first_seen_at: 'x', last_seen_at: 'x' })
    .execute();
  await database.db
    .insertInto('blocklist_results')
    .values({
      mailbox_id: 'mbx_1',
      zone: 'zen.spamhaus.org',
      subject: '85.10.20.99',
      kind: 'ip',
      status: 'listed',
      detail: 'listed',
      delist_url: null,
      listed_since: 'x',
      checked_at: 'x',
    })
    .execute();

  expect((await m.migrateTo('012-webhooks')).error).toBeUndefined();
  expect((await m.migrateToLatest()).error).toBeUndefined();
  expect(await database.db.selectFrom('blocklist_results').selectAll().execute()).toEqual([]);
});
