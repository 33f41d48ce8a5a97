import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/test-database.js';
import { recordInteraction, recordReputation, type InteractionInput } from '../../engine/interactions.repository.js';
import { migrationProvider } from './index.js';

let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
  await database.db.insertInto('workspaces').values([{ id: 'ws_1', name: 'one', created_at: '2026-01-01T00:00:00.000Z' }, { id: 'ws_2', name: 'two', created_at: '2026-01-01T00:00:00.000Z' }]).execute();
  for (const [id, workspace] of [['mb_a', 'ws_1'], ['mb_b', 'ws_1'], ['mb_c', 'ws_2']] as const) {
    await database.db
      .insertInto('mailboxes')
      .values({
        id,
        workspace_id: workspace,
        email: `${id}@x.test`,
        email_normalized: `${id}@x.test`,
        provider: 'custom',
        connection_type: 'imap',
        status: 'active',
        imap: '{}',
        smtp: '{}',
        password_encrypted: 'x',
        warmup: '{}',
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
      })
      .execute();
  }
});

afterEach(async () => {
  await database.close();
});

async function migrator(): Promise<Migrator> {
  const schema =
    database.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema : undefined;
  return new Migrator({ db: database.db, provider: migrationProvider, ...(schema ? { migrationTableSchema: schema } : {}) });
}

let serial = 0;
function message(from: string, to: string, day: string, placement: 'inbox' | 'spam'): InteractionInput[] {
  const messageId = `<w${++serial}@x.test>`;
  const common = { senderMailboxId: from, counterpartEmail: 'p@x.test', subject: null, messageId, threadId: null, occurredAt: new Date(`${day}T10:00:00Z`) };
  return [
    { ...common, mailboxId: from, type: 'sent', counterpartMailboxId: to },
    { ...common, mailboxId: to, type: 'received', counterpartMailboxId: from, placement },
    { ...common, mailboxId: to, type: 'opened', counterpartMailboxId: from },
  ];
}

async function history(): Promise<void> {
  for (const input of [
    ...message('mb_a', 'mb_b', '2026-03-01', 'inbox'),
    ...message('mb_b', 'mb_a', '2026-03-01', 'spam'),
    ...message('mb_a', 'mb_c', '2026-03-02', 'inbox'),
    ...message('mb_c', 'mb_a', '2026-03-02', 'inbox'),
  ]) {
    expect(await recordInteraction(database.db, input)).toBe(true);
  }
  await recordReputation(database.db, 'mb_a', '2026-03-01', 60);
  await recordReputation(database.db, 'mb_b', '2026-03-01', 71);
  await recordReputation(database.db, 'mb_a', '2026-03-01', 64);
}

/** What the workspace rollup must hold: daily_stats summed per workspace and day. */
async function expected() {
  const { rows } = await sql<Record<string, unknown>>`
    select workspace_id, day, sum(sent) as sent, sum(received) as received, sum(inbox) as inbox, sum(spam) as spam, sum(opened) as opened,
           sum(received_inbox) as received_inbox, sum(received_spam) as received_spam,
           coalesce(sum(reputation), 0) as reputation_sum, count(reputation) as reputation_count
    from daily_stats group by workspace_id, day order by workspace_id, day`.execute(database.db);
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' ? v : Number(v)])));
}

async function actual() {
  const rows = await database.db
    .selectFrom('workspace_daily_stats')
    .select(['workspace_id', 'day', 'sent', 'received', 'inbox', 'spam', 'opened', 'received_inbox', 'received_spam', 'reputation_sum', 'reputation_count'])
    .where((eb) => eb.or([eb('sent', '!=', 0), eb('received', '!=', 0), eb('reputation_count', '!=', 0)]))
    .orderBy('workspace_id')
    .orderBy('day')
    .execute();
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' ? v : Number(v)])));
}

it('is the sum of the mailbox rollups through inserts, updates and deletes', async () => {
  await history();
  expect(await actual()).toEqual(await expected());
  expect((await actual()).find((r) => r.workspace_id === 'ws_1' && r.day === '2026-03-01')).toMatchObject({
    sent: 2,
    received: 2,
    inbox: 1,
    spam: 1,
    opened: 2,
    // the second score of mb_a replaced the first
    reputation_sum: 64 + 71,
    reputation_count: 2,
  });

  // Deleting a mailbox cascades to its rollup rows, and out of the workspace's figures.
  await database.db.deleteFrom('mailboxes').where('id', '=', 'mb_b').execute();
  expect(await actual()).toEqual(await expected());
  expect((await actual()).find((r) => r.workspace_id === 'ws_1' && r.day === '2026-03-01')).toMatchObject({ sent: 1, received: 1, inbox: 1, spam: 0, reputation_sum: 64, reputation_count: 1 });
});

it('covers the history already there, and comes out again cleanly', async () => {
  const m = await migrator();
  const down = await m.migrateTo('003-placement-by-receiver');
  expect(down.error).toBeUndefined();
  expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['004-workspace-daily-stats', 'Down', 'Success']]);
  // History written while the view is gone is in it once it is back.
  await history();
  const up = await m.migrateToLatest();
  expect(up.error).toBeUndefined();
  expect(await actual()).toEqual(await expected());
  expect(await actual()).toHaveLength(3);
});
