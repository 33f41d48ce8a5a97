import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox, type TestDatabase } from '../../../test/helpers/test-database.js';

async function insertMessage(database: TestDatabase, id: string, promotedAt: string | null): Promise<void> {
  await sql`insert into warmup_messages (id, message_id, thread_id, sender_mailbox_id, recipient_mailbox_id, kind,
      turn, plan_day, due_at, status, created_at, gmail_category, promoted_at)
    values (${id}, ${`<${id}@b.test>`}, ${`<${id}@b.test>`}, 'mbx_1', 'mbx_1', 'initial', 1, '2026-01-02',
      '2026-01-02T09:00:00.000Z', 'sent', '2026-01-02T09:00:00.000Z', 'promotions', ${promotedAt})`.execute(
    database.db,
  );
}

it('counts the moves to Primary already made on their days, folded days included, and goes back down', async () => {
  const database = await createTestDatabaseAt('026-plan-inbound');
  await insertRawMailbox(database);
  // two moves on a folded day that has a rollup, one on a live day without a row yet, one mail never moved
  await insertMessage(database, 'msg_1', '2026-01-02T11:00:00.000Z');
  await insertMessage(database, 'msg_2', '2026-01-02T15:00:00.000Z');
  await insertMessage(database, 'msg_3', '2026-01-05T08:00:00.000Z');
  await insertMessage(database, 'msg_4', null);
  await sql`insert into daily_stats (mailbox_id, workspace_id, day, received, opened)
    values ('mbx_1', 'ws_1', '2026-01-02', 4, 3)`.execute(database.db);
  await sql`insert into workspace_daily_stats (workspace_id, day, received, opened)
    values ('ws_1', '2026-01-02', 4, 3)`.execute(database.db);
  await sql`insert into stats_folds (workspace_id, through_day) values ('ws_1', '2026-01-03')`.execute(database.db);

  await database.migrateTo('027-promoted-to-primary');
  const days = await database.db
    .selectFrom('daily_stats')
    .select(['day', 'received', 'opened', 'promoted_to_primary'])
    .where('mailbox_id', '=', 'mbx_1')
    .orderBy('day')
    .execute();
  expect(days).toEqual([
    { day: '2026-01-02', received: 4, opened: 3, promoted_to_primary: 2 },
    { day: '2026-01-05', received: 0, opened: 0, promoted_to_primary: 1 },
  ]);
  const folded = await database.db
    .selectFrom('workspace_daily_stats')
    .select(['day', 'received', 'opened', 'promoted_to_primary'])
    .orderBy('day')
    .execute();
  expect(folded).toEqual([{ day: '2026-01-02', received: 4, opened: 3, promoted_to_primary: 2 }]);

  await database.migrateTo('026-plan-inbound');
  expect(await database.columnsOf('daily_stats')).not.toContain('promoted_to_primary');
  expect(await database.columnsOf('workspace_daily_stats')).not.toContain('promoted_to_primary');
  expect(await database.db.selectFrom('daily_stats').select(['day', 'opened']).orderBy('day').execute()).toEqual([
    { day: '2026-01-02', opened: 3 },
    { day: '2026-01-05', opened: 0 },
  ]);
});
