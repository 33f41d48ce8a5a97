import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';

it('answers the per-mailbox statistics from indexes on SQLite, keeps the rows, and goes back down', async () => {
  const database = await createTestDatabaseAt('029-sender-claims');
  await insertRawMailbox(database);
  await sql`insert into daily_stats (mailbox_id, workspace_id, day, sent, inbox, reputation)
    values ('mbx_1', 'ws_1', '2026-01-02', 3, 2, 61)`.execute(database.db);
  const indexes = async (table: string) =>
    (
      await sql<{ name: string }>`
        select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null order by name`.execute(
        database.db,
      )
    ).rows.map((row) => row.name);
  // the daily summary's join: each mailbox's row of the day, by (workspace, day, mailbox)
  const plan = async () =>
    (
      await sql<{ detail: string }>`explain query plan
        select m.id, m.email, m.status, d.sent, d.inbox, d.reputation from mailboxes m
        left join daily_stats d on d.workspace_id = 'ws_1' and d.day = '2026-01-02' and d.mailbox_id = m.id
        where m.workspace_id = 'ws_1'`.execute(database.db)
    ).rows.map((row) => row.detail);

  await database.migrateTo('030-stats-covering-indexes');
  if (database.dialect === 'sqlite') {
    expect(await indexes('daily_stats')).toEqual(['daily_stats_day', 'daily_stats_workspace_day_mailbox']);
    expect(await indexes('mailboxes')).toContain('mailboxes_workspace_listing');
    const steps = await plan();
    expect(steps).toHaveLength(2);
    for (const step of steps) expect(step).toMatch(/USING COVERING INDEX/);
  }
  const row = await database.db
    .selectFrom('daily_stats')
    .select(['mailbox_id', 'day', 'sent', 'inbox', 'reputation'])
    .executeTakeFirstOrThrow();
  expect({ ...row, sent: Number(row.sent), inbox: Number(row.inbox), reputation: Number(row.reputation) }).toEqual({
    mailbox_id: 'mbx_1',
    day: '2026-01-02',
    sent: 3,
    inbox: 2,
    reputation: 61,
  });

  await database.migrateTo('029-sender-claims');
  if (database.dialect === 'sqlite') {
    expect(await indexes('daily_stats')).toEqual(['daily_stats_day', 'daily_stats_workspace_day']);
    expect(await indexes('mailboxes')).not.toContain('mailboxes_workspace_listing');
  }
  expect(await database.db.selectFrom('daily_stats').select('day').execute()).toEqual([{ day: '2026-01-02' }]);
});
