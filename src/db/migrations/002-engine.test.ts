import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDatabase, testMigrator, type TestDatabase } from '../../../test/helpers/test-database.js';
import type { NewMailboxRow } from '../schema.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

it('adds the engine columns with their defaults, and comes out again cleanly', async () => {
  await database.db
    .insertInto('workspaces')
    .values({ id: 'ws_1', name: 'w', created_at: '2026-01-01T00:00:00.000Z' })
    .execute();
  const mailbox: NewMailboxRow = {
    id: 'mbx_1',
    workspace_id: 'ws_1',
    email: 'a@b.test',
    email_normalized: 'a@b.test',
    provider: 'custom',
    connection_type: 'imap',
    status: 'active',
    imap: '{}',
    smtp: '{}',
    password_encrypted: 'x',
    warmup: '{}',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
  await database.db.insertInto('mailboxes').values(mailbox).execute();
  expect(
    await database.db
      .selectFrom('mailboxes')
      .select(['next_sync_at', 'last_plan_day', 'sync_failures'])
      .executeTakeFirstOrThrow(),
  ).toEqual({ next_sync_at: null, last_plan_day: null, sync_failures: 0 });

  const m = await testMigrator(database);
  const down = await m.migrateTo('001-initial');
  expect(down.error).toBeUndefined();
  expect(down.results?.map((r) => [r.migrationName, r.status])).toContainEqual(['002-engine', 'Success']);
  const up = await m.migrateToLatest();
  expect(up.error).toBeUndefined();
  expect(up.results?.map((r) => [r.migrationName, r.status])).toContainEqual(['002-engine', 'Success']);
  // the row survived both ways and has the new columns again
  expect(await database.db.selectFrom('mailboxes').select(['id', 'sync_failures', 'next_sync_at']).execute()).toEqual([
    { id: 'mbx_1', sync_failures: 0, next_sync_at: null },
  ]);
  const columns = ['engage_after', 'engaged_at', 'rescued_at'] as const;
  await database.db
    .insertInto('warmup_messages')
    .values({
      id: 'msg_1',
      message_id: '<1@b.test>',
      thread_id: '<1@b.test>',
      sender_mailbox_id: 'mbx_1',
      recipient_mailbox_id: 'mbx_1',
      kind: 'initial',
      turn: 1,
      plan_day: '2026-01-01',
      due_at: '2026-01-01T10:00:00.000Z',
      status: 'planned',
      created_at: '2026-01-01T00:00:00.000Z',
    })
    .execute();
  expect(await database.db.selectFrom('warmup_messages').select(columns).executeTakeFirstOrThrow()).toEqual({
    engage_after: null,
    engaged_at: null,
    rescued_at: null,
  });
});
