// SQL of the placement tests; every query a route reaches takes the workspace id.
import { sql, type Kysely } from 'kysely';
import type { Database, NewPlacementTestCopyRow, PlacementTestCopyRow, PlacementTestRow } from '../db/schema.js';

export interface PlacementTestRecord {
  test: PlacementTestRow;
  senderEmail: string;
  copies: Array<PlacementTestCopyRow & { seed_email: string }>;
}

async function copiesOf(db: Kysely<Database>, testIds: string[]): Promise<Map<string, PlacementTestRecord['copies']>> {
  const byTest = new Map<string, PlacementTestRecord['copies']>();
  if (testIds.length === 0) return byTest;
  const rows = await db
    .selectFrom('placement_test_copies as c')
    .innerJoin('mailboxes as m', 'm.id', 'c.seed_mailbox_id')
    .selectAll('c')
    .select('m.email as seed_email')
    .where('c.test_id', 'in', testIds)
    .orderBy('c.provider')
    .orderBy('m.email')
    .execute();
  for (const row of rows) byTest.set(row.test_id, [...(byTest.get(row.test_id) ?? []), row]);
  return byTest;
}

function testsQuery(db: Kysely<Database>, workspaceId: string) {
  return db
    .selectFrom('placement_tests as t')
    .innerJoin('mailboxes as m', 'm.id', 't.sender_mailbox_id')
    .selectAll('t')
    .select('m.email as sender_email')
    .where('t.workspace_id', '=', workspaceId);
}

async function withCopies(
  db: Kysely<Database>,
  rows: Array<PlacementTestRow & { sender_email: string }>,
): Promise<PlacementTestRecord[]> {
  const copies = await copiesOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map(({ sender_email, ...test }) => ({
    test,
    senderEmail: sender_email,
    copies: copies.get(test.id) ?? [],
  }));
}

export async function findPlacementTest(
  db: Kysely<Database>,
  workspaceId: string,
  id: string,
): Promise<PlacementTestRecord | undefined> {
  const row = await testsQuery(db, workspaceId).where('t.id', '=', id).executeTakeFirst();
  return row ? (await withCopies(db, [row]))[0] : undefined;
}

/** A test by id alone: for the engine, which works across workspaces. */
export async function findPlacementTestById(
  db: Kysely<Database>,
  id: string,
): Promise<PlacementTestRecord | undefined> {
  const row = await db
    .selectFrom('placement_tests as t')
    .innerJoin('mailboxes as m', 'm.id', 't.sender_mailbox_id')
    .selectAll('t')
    .select('m.email as sender_email')
    .where('t.id', '=', id)
    .executeTakeFirst();
  return row ? (await withCopies(db, [row]))[0] : undefined;
}

export async function listPlacementTests(
  db: Kysely<Database>,
  workspaceId: string,
  page: number,
  limit: number,
): Promise<{ records: PlacementTestRecord[]; total: number }> {
  const rows = await testsQuery(db, workspaceId)
    .orderBy('t.created_at', 'desc')
    .orderBy('t.id', 'desc')
    .limit(limit)
    .offset((page - 1) * limit)
    .execute();
  const count = await db
    .selectFrom('placement_tests')
    .select(sql<number>`count(*)`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return { records: await withCopies(db, rows), total: Number(count.n) };
}

/** Tests made in a period (ISO bounds, end exclusive), oldest first, at most `limit`; of one sender when given. */
export async function placementTestsBetween(
  db: Kysely<Database>,
  workspaceId: string,
  range: { since: string; until: string; senderMailboxId?: string; limit: number },
): Promise<PlacementTestRecord[]> {
  let query = testsQuery(db, workspaceId)
    .where('t.created_at', '>=', range.since)
    .where('t.created_at', '<', range.until);
  if (range.senderMailboxId !== undefined) query = query.where('t.sender_mailbox_id', '=', range.senderMailboxId);
  const rows = await query.orderBy('t.created_at').orderBy('t.id').limit(range.limit).execute();
  return withCopies(db, rows);
}

/** A new test and its copies (not sent yet), in one transaction. */
export async function insertPlacementTest(
  db: Kysely<Database>,
  test: PlacementTestRow,
  copies: NewPlacementTestCopyRow[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('placement_tests').values(test).execute();
    await trx.insertInto('placement_test_copies').values(copies).execute();
  });
}

/**
 * Copies of a sender's placement tests as sends of the day (engine/send-budget.ts counts them with
 * its warmup mail): those sent in the span, the last one sent since `since` (for the gap), and
 * those of tests still waiting to go out (they hold their room in the day's budget).
 */
export async function placementSendsOfDay(
  db: Kysely<Database>,
  senderId: string,
  span: { start: Date; end: Date },
  since: Date = span.start,
): Promise<{ sent: number; reserved: number; lastSentAt: Date | null }> {
  const from = (since < span.start ? since : span.start).toISOString();
  const row = await db
    .selectFrom('placement_test_copies')
    .select([
      sql<number>`cast(sum(case when sent_at >= ${span.start.toISOString()} and sent_at < ${span.end.toISOString()} then 1 else 0 end) as integer)`.as(
        'sent',
      ),
      sql<number>`cast(sum(case when sent_at is null and placement is null then 1 else 0 end) as integer)`.as(
        'reserved',
      ),
      sql<string | null>`max(sent_at)`.as('last'),
    ])
    .where('sender_mailbox_id', '=', senderId)
    .where((eb) => eb.or([eb('sent_at', 'is', null), eb('sent_at', '>=', from)]))
    .executeTakeFirst();
  return {
    sent: Number(row?.sent ?? 0),
    reserved: Number(row?.reserved ?? 0),
    lastSentAt: row?.last ? new Date(row.last) : null,
  };
}
