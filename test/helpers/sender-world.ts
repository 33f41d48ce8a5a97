/*
 * The sender's test world: a test database with three mailboxes (erin, frank, and grace writing
 * German from Berlin), each with a plan of room for everything the sender tests send on
 * 2026-03-12, and a fake SMTP server; the moment the tests start from, and their queries.
 */
import type { InteractionType } from '../../src/interactions/interactions.schemas.js';
import type { MailboxRow } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import {
  FakeSmtp,
  insertMailbox,
  insertPlan,
  insertWorkspace,
  mailWorkDeps,
  type FixtureDeps,
} from './engine-fixtures.js';

export const NOW = new Date('2026-03-12T10:00:00Z');
export const minutes = (n: number) => n * 60_000;
export const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

export interface SenderWorld {
  database: TestDatabase;
  smtp: FakeSmtp;
  deps: FixtureDeps;
  erin: MailboxRow;
  frank: MailboxRow;
  grace: MailboxRow;
}

export async function createSenderWorld(): Promise<SenderWorld> {
  const database = await createTestDatabase();
  const smtp = new FakeSmtp();
  const deps = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory });
  const workspaceId = await insertWorkspace(database.db);
  const erin = await insertMailbox(database.db, workspaceId, { email: 'erin@echo.test', name: 'Erin Echo' });
  const frank = await insertMailbox(database.db, workspaceId, { email: 'frank.fox@foxtrot.test' });
  const grace = await insertMailbox(database.db, workspaceId, {
    email: 'grace@golf.test',
    name: 'Grace',
    warmup: { language: 'de', timezone: 'Europe/Berlin' },
  });
  // a day with room for everything these tests send; the bounds themselves are tested in sender.bounds.test.ts
  for (const mailbox of [erin, frank, grace]) await insertPlan(database.db, mailbox, '2026-03-12', 100);
  return { database, smtp, deps, erin, frank, grace };
}

export async function interactionsOf(database: TestDatabase, type?: InteractionType) {
  let query = database.db.selectFrom('interactions').selectAll().orderBy('occurred_at');
  if (type) query = query.where('type', '=', type);
  return query.execute();
}
