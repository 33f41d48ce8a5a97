import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';

it('adds the feed tables, stores a day once per address, and goes down and up again', async () => {
  const database = await createTestDatabaseAt('041-alert-mail-recipients');
  await insertRawMailbox(database);
  await database.migrateTo('042-provider-feeds');
  expect(await database.tableNames()).toEqual(
    expect.arrayContaining([
      'feed_connections',
      'snds_days',
      'postmaster_days',
      'feed_set_aside',
      'provider_holds',
      'feed_oauth_flows',
    ]),
  );
  const day = sql`insert into snds_days (workspace_id, ip, day, filter_result, complaint_rate, complaint_rate_max,
      trap_hits, rcpt_commands, data_commands, message_recipients, fetched_at)
    values ('ws_1', '192.0.2.1', '2026-11-27', 'red', '0.3%', 0.003, 2, 10, 10, 10, '2026-11-28T00:00:00.000Z')`;
  await day.execute(database.db);
  await expect(day.execute(database.db)).rejects.toThrow();
  // a workspace's feed data goes with it
  await sql`delete from mailboxes`.execute(database.db);
  await sql`delete from workspaces`.execute(database.db);
  expect(await database.db.selectFrom('snds_days').selectAll().execute()).toEqual([]);

  await database.migrateTo('041-alert-mail-recipients');
  expect(await database.tableNames()).not.toContain('snds_days');
  expect(await database.tableNames()).not.toContain('provider_holds');
  expect(await database.tableNames()).not.toContain('feed_oauth_flows');
  await database.migrateToLatest();
  expect(await database.columnsOf('provider_holds')).toEqual(
    expect.arrayContaining(['workspace_id', 'domain', 'signal', 'day', 'reason', 'since']),
  );
});
