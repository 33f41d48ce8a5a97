import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';

it('adds the DNS rule, DKIM selector and blocklist state empty to existing mailboxes, and goes down and up again', async () => {
  const database = await createTestDatabaseAt('012-webhooks');
  await insertRawMailbox(database, 'v1:x');
  await database.db
    .insertInto('mailbox_checks')
    .values({ mailbox_id: 'mbx_1', check: 'dmarc', status: 'fail', detail: 'none', fix: 'publish', checked_at: 'x' })
    .execute();

  await database.migrateTo('014-deliverability-checks');
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

  await database.migrateTo('012-webhooks');
  await database.migrateToLatest();
  expect(await database.db.selectFrom('blocklist_results').selectAll().execute()).toEqual([]);
});
