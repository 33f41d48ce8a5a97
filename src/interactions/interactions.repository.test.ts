import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { recordInteraction, recordReputation, type InteractionInput } from './interactions.repository.js';

let database: TestDatabase;
const at = new Date('2026-03-02T10:00:00.000Z');

async function insertMailbox(id: string, workspaceId: string, email: string) {
  await database.db
    .insertInto('mailboxes')
    .values({
      id,
      workspace_id: workspaceId,
      email,
      email_normalized: email,
      name: null,
      provider: 'custom',
      connection_type: 'imap',
      status: 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'x',
      warmup: '{}',
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
    })
    .execute();
}

beforeAll(async () => {
  database = await createTestDatabase();
  for (const ws of ['ws_a', 'ws_b']) {
    await database.db.insertInto('workspaces').values({ id: ws, name: ws, created_at: at.toISOString() }).execute();
  }
  await insertMailbox('mb_sender', 'ws_a', 'alice@alpha.test');
  await insertMailbox('mb_recipient', 'ws_b', 'bob@beta.test');
});
afterAll(() => database?.close());

function received(overrides: Partial<InteractionInput> = {}): InteractionInput {
  return {
    mailboxId: 'mb_recipient',
    type: 'received',
    senderMailboxId: 'mb_sender',
    counterpartMailboxId: 'mb_sender',
    counterpartEmail: 'alice@alpha.test',
    subject: 'Notes from Tuesday',
    messageId: '<m1@alpha.test>',
    threadId: '<m1@alpha.test>',
    placement: 'spam',
    occurredAt: at,
    ...overrides,
  };
}

async function rollup(mailboxId: string) {
  return database.db
    .selectFrom('daily_stats')
    .selectAll()
    .where('mailbox_id', '=', mailboxId)
    .where('day', '=', '2026-03-02')
    .executeTakeFirst();
}

describe('recordInteraction', () => {
  it('counts a received message for the recipient and its placement for the sender, once', async () => {
    expect(await recordInteraction(database.db, received())).toBe(true);
    expect(await recordInteraction(database.db, received())).toBe(false);
    expect(await recordInteraction(database.db, received({ type: 'rescued', placement: null }))).toBe(true);

    const recipient = await rollup('mb_recipient');
    const sender = await rollup('mb_sender');
    expect(recipient).toMatchObject({
      received: 1,
      spam: 0,
      rescued: 0,
      received_spam: 1,
      received_inbox: 0,
      workspace_id: 'ws_b',
    });
    expect(sender).toMatchObject({ received: 0, spam: 1, rescued: 1, received_spam: 0, workspace_id: 'ws_a' });

    const log = await database.db
      .selectFrom('interactions')
      .selectAll()
      .where('mailbox_id', '=', 'mb_recipient')
      .orderBy('type')
      .execute();
    expect(log.map((i) => i.type)).toEqual(['received', 'rescued']);
    expect(log[0]).toMatchObject({
      workspace_id: 'ws_b',
      counterpart_workspace_id: 'ws_a',
      day: '2026-03-02',
      placement: 'spam',
    });
  });

  it('keeps placement on the receiving side too, unknown placement as other', async () => {
    expect(await recordInteraction(database.db, received({ messageId: '<m5@alpha.test>', placement: 'inbox' }))).toBe(
      true,
    );
    expect(await recordInteraction(database.db, received({ messageId: '<m6@alpha.test>', placement: null }))).toBe(
      true,
    );
    expect(await recordInteraction(database.db, received({ messageId: '<m6@alpha.test>', placement: null }))).toBe(
      false,
    );
    expect(await rollup('mb_recipient')).toMatchObject({
      received: 3,
      received_spam: 1,
      received_inbox: 1,
      received_other: 1,
      received_promotions: 0,
    });
    expect(await rollup('mb_sender')).toMatchObject({
      spam: 1,
      inbox: 1,
      other: 1,
      received_inbox: 0,
      received_other: 0,
    });
  });

  it('counts sent mail for the sender itself', async () => {
    const sent = received({
      mailboxId: 'mb_sender',
      type: 'sent',
      counterpartMailboxId: 'mb_recipient',
      counterpartEmail: 'bob@beta.test',
      placement: null,
      messageId: '<m2@alpha.test>',
    });
    expect(await recordInteraction(database.db, sent)).toBe(true);
    expect(await recordInteraction(database.db, sent)).toBe(false);
    expect(await rollup('mb_sender')).toMatchObject({ sent: 1 });
  });

  it('skips a mailbox that no longer exists instead of failing', async () => {
    expect(await recordInteraction(database.db, received({ mailboxId: 'mb_gone', messageId: '<m3@alpha.test>' }))).toBe(
      false,
    );
    expect(
      await recordInteraction(
        database.db,
        received({ senderMailboxId: 'mb_gone', counterpartMailboxId: 'mb_gone', messageId: '<m4@alpha.test>' }),
      ),
    ).toBe(true);
  });

  it('keeps reputation as daily history and as the current score', async () => {
    await recordReputation(database.db, 'mb_sender', '2026-03-02', 71);
    await recordReputation(database.db, 'mb_sender', '2026-03-02', 73);
    expect(await rollup('mb_sender')).toMatchObject({ reputation: 73, sent: 1 });
    const mailbox = await database.db
      .selectFrom('mailboxes')
      .select('reputation')
      .where('id', '=', 'mb_sender')
      .executeTakeFirstOrThrow();
    expect(mailbox.reputation).toBe(73);
  });
});
