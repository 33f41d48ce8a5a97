// hasReplyFrom is what keeps a mailbox to one reply per parent: planReply cannot lean on the reply's
// Message-ID for that, because Outlook's carries the send moment and two plans of one answer would
// get two IDs. These rows are the cases planReply meets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { insertMailbox, insertMessage, insertWorkspace } from '../../test/helpers/engine-fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { hasReplyFrom } from './warmup-messages.repository.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const later = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

describe('hasReplyFrom: whether a mailbox already answered a parent', () => {
  let database: TestDatabase;
  let ann: MailboxRow;
  let ben: MailboxRow;
  let cat: MailboxRow;
  let toBen: WarmupMessageRow;
  let toCat: WarmupMessageRow;

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    const workspace = await insertWorkspace(db);
    ann = await insertMailbox(db, workspace, { email: 'ann@one.test' });
    ben = await insertMailbox(db, workspace, { email: 'ben@two.test' });
    cat = await insertMailbox(db, workspace, { email: 'cat@three.test' });
    toBen = await insertMessage(db, { sender: ann, recipient: ben, dueAt: T0, status: 'sent', sentAt: T0 });
    toCat = await insertMessage(db, { sender: ann, recipient: cat, dueAt: T0, status: 'sent', sentAt: T0 });
  });

  afterAll(async () => {
    await database?.close();
  });

  it('is false while nobody has answered the parent', async () => {
    expect(await hasReplyFrom(database.db, ben.id, toBen.message_id)).toBe(false);
    expect(await hasReplyFrom(database.db, cat.id, toCat.message_id)).toBe(false);
  });

  it('is true once the mailbox planned a reply to it, and stays true when that reply is sent', async () => {
    const reply = await insertMessage(database.db, { sender: ben, recipient: ann, parent: toBen, dueAt: later(30) });
    expect(await hasReplyFrom(database.db, ben.id, toBen.message_id)).toBe(true);

    await database.db
      .updateTable('warmup_messages')
      .set({ status: 'sent', sent_at: later(31).toISOString() })
      .where('id', '=', reply.id)
      .execute();
    expect(await hasReplyFrom(database.db, ben.id, toBen.message_id)).toBe(true);
  });

  it("names only that mailbox's reply to that parent: not another mailbox's, not one to another parent", async () => {
    // ben answered toBen (above); cat has answered nothing, and ben never answered toCat
    expect(await hasReplyFrom(database.db, cat.id, toBen.message_id)).toBe(false);
    expect(await hasReplyFrom(database.db, ben.id, toCat.message_id)).toBe(false);
    // the parent's own sender is not its replier either
    expect(await hasReplyFrom(database.db, ann.id, toBen.message_id)).toBe(false);

    await insertMessage(database.db, { sender: cat, recipient: ann, parent: toCat, dueAt: later(40) });
    expect(await hasReplyFrom(database.db, cat.id, toCat.message_id)).toBe(true);
    expect(await hasReplyFrom(database.db, cat.id, toBen.message_id)).toBe(false);
  });
});
