import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createTestDatabaseAt } from '../../../test/helpers/migration-test-database.js';
import { insertRawMailbox } from '../../../test/helpers/test-database.js';

it('keeps the verdicts across the migration and lets them outlive their warmup message', async () => {
  const database = await createTestDatabaseAt('020-oidc-sign-in');
  await insertRawMailbox(database);
  await sql`insert into warmup_messages (id, message_id, thread_id, sender_mailbox_id, recipient_mailbox_id, kind,
      turn, plan_day, due_at, status, created_at)
    values ('msg_1', '<m1@b.test>', '<m1@b.test>', 'mbx_1', 'mbx_1', 'initial', 1, '2026-01-02',
      '2026-01-02T09:00:00.000Z', 'sent', '2026-01-02T09:00:00.000Z')`.execute(database.db);
  await sql`insert into receiver_verdicts (warmup_message_id, sender_mailbox_id, recipient_mailbox_id,
      receiver_provider, identified_by, placement, spf, found_at)
    values ('msg_1', 'mbx_1', 'mbx_1', 'gmail', 'message-id', 'inbox', 'pass', '2026-01-02T10:00:00.000Z')`.execute(
    database.db,
  );

  await database.migrateToLatest();
  if (database.dialect === 'sqlite') {
    // the table was made again: its index came back with it
    const { rows } = await sql<{ name: string }>`
      select name from sqlite_master where type = 'index' and tbl_name = 'receiver_verdicts' and sql is not null`.execute(
      database.db,
    );
    expect(rows.map((row) => row.name)).toEqual(['receiver_verdicts_sender']);
  }
  await database.db.deleteFrom('warmup_messages').where('id', '=', 'msg_1').execute();
  const verdicts = await database.db.selectFrom('receiver_verdicts').select(['warmup_message_id', 'spf']).execute();
  expect(verdicts).toEqual([{ warmup_message_id: 'msg_1', spf: 'pass' }]);
  // a mailbox deleted still takes its verdicts with it
  await database.db.deleteFrom('mailboxes').where('id', '=', 'mbx_1').execute();
  expect(await database.db.selectFrom('receiver_verdicts').select('warmup_message_id').execute()).toEqual([]);
});
