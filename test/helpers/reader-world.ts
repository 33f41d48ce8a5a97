/*
 * The reader's test world: a test database with erin and frank (who answers everything, in UTC),
 * and a fake IMAP server; the moment the tests start from, and mail Erin sent to Frank.
 */
import type { MailboxRow, WarmupMessageRow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import {
  FakeImap,
  insertMailbox,
  insertMessage,
  insertWorkspace,
  mailWorkDeps,
  type FixtureDeps,
} from './engine-fixtures.js';

export const NOW = new Date('2026-03-12T10:00:00Z');
export const minutes = (n: number) => n * 60_000;
export const hours = (n: number) => n * 60 * 60_000;
export const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);
/** random() that always says yes. */
export const always = () => 0;

export interface ReaderWorld {
  database: TestDatabase;
  imap: FakeImap;
  deps: FixtureDeps;
  erin: MailboxRow;
  frank: MailboxRow;
}

export async function createReaderWorld(): Promise<ReaderWorld> {
  const database = await createTestDatabase();
  const imap = new FakeImap();
  const deps = mailWorkDeps(database.db, database.dialect, { imap: imap.factory });
  const workspaceId = await insertWorkspace(database.db);
  const erin = await insertMailbox(database.db, workspaceId, { email: 'erin@echo.test', name: 'Erin Echo' });
  const frank = await insertMailbox(database.db, workspaceId, {
    email: 'frank@foxtrot.test',
    warmup: { replyRate: 100, timezone: 'UTC' },
  });
  return { database, imap, deps, erin, frank };
}

/** A message Erin sent to Frank an hour ago, and its delivery into one of Frank's folders. */
export async function sentToFrankIn(
  { database, imap, erin, frank }: ReaderWorld,
  folder: 'INBOX' | 'Junk' | null,
  fixture: Partial<Parameters<typeof insertMessage>[1]> = {},
): Promise<WarmupMessageRow> {
  const row = await insertMessage(database.db, {
    sender: erin,
    recipient: frank,
    dueAt: at(-hours(1)),
    status: 'sent',
    sentAt: at(-hours(1)),
    subject: 'Planning',
    body: 'Hi Frank',
    ...fixture,
  });
  if (folder) imap.account('frank@foxtrot.test').deliver(folder, row.message_id);
  return row;
}

export async function mailboxRowOf(database: TestDatabase, id: string) {
  return database.db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
