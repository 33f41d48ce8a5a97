/*
 * The planner's shared inbound counts (`plan_inbound`): new threads reserved for each recipient on
 * each of its local days. Planners working at once on different senders (other workers, other
 * buckets) meet here and nowhere else, so every change is one statement that checks the cap in the
 * same breath as it adds: two of them racing on a row are serialised by its row lock, and the second
 * one re-reads the count the first one left before it checks.
 *
 * The invariant: a planner writes a new thread to (recipient, day) only after a reservation for it
 * succeeded, and gives a reservation back only for threads it did not write. So the rows planned
 * to a recipient on a day never outnumber its count, and the count never passes a cap.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.js';

/** One recipient's day: `<day> <mailbox id>`. */
export function inboundKey(day: string, mailboxId: string): string {
  return `${day} ${mailboxId}`;
}

export interface InboundReservation {
  day: string;
  mailboxId: string;
  /** New threads to reserve (or give back). */
  count: number;
  /** The most the day may hold after it. */
  cap: number;
  /** For a count not stored yet: the threads already planned to it that day (read from the rows). */
  initial: number;
}

/** Rows per statement: 4 bound values each, well under both databases' limits. */
const CHUNK = 1_000;
/** A cap beyond any day's count that still fits an integer column. */
const NO_CAP = 2 ** 31 - 1;

/**
 * Reserves each (recipient, day)'s `count` threads, all or nothing per recipient's day, where the
 * result stays within `cap`. A day without a stored count starts from `initial` (the rows planned
 * before any reservation: planners that reserve always find the count there first). Returns the
 * count each granted reservation left; a missing key was refused (the day is fuller than the caller
 * knew: `readInbound` tells how full).
 */
export async function reserveInbound(
  db: Kysely<Database>,
  wanted: readonly InboundReservation[],
): Promise<Map<string, number>> {
  const granted = new Map<string, number>();
  // one order for every planner, so two statements never wait on each other's rows crosswise
  const sorted = [...wanted].sort((a, b) => compare(inboundKey(a.day, a.mailboxId), inboundKey(b.day, b.mailboxId)));
  for (let start = 0; start < sorted.length; start += CHUNK) {
    const chunk = sorted.slice(start, start + CHUNK);
    const fresh = chunk.filter((r) => r.initial + r.count <= Math.min(r.cap, NO_CAP));
    if (fresh.length > 0) {
      const inserted = await db
        .insertInto('plan_inbound')
        .values(fresh.map((r) => ({ day: r.day, mailbox_id: r.mailboxId, received: r.initial + r.count })))
        .onConflict((oc) => oc.columns(['day', 'mailbox_id']).doNothing())
        .returning(['day', 'mailbox_id', 'received'])
        .execute();
      for (const row of inserted) granted.set(inboundKey(row.day, row.mailbox_id), Number(row.received));
    }
    const rest = chunk.filter((r) => !granted.has(inboundKey(r.day, r.mailboxId)));
    if (rest.length === 0) continue;
    const updated = await retryOnDeadlock(() =>
      sql<{ day: string; mailbox_id: string; received: number }>`
        update plan_inbound set received = plan_inbound.received + v.column3
        from (values ${valuesOf(rest)}) as v
        where plan_inbound.day = v.column1 and plan_inbound.mailbox_id = v.column2
          and plan_inbound.received + v.column3 <= v.column4
        returning plan_inbound.day, plan_inbound.mailbox_id, plan_inbound.received`.execute(db),
    );
    for (const row of updated.rows) granted.set(inboundKey(row.day, row.mailbox_id), Number(row.received));
  }
  return granted;
}

/** Gives back reservations whose threads were not written (their sender was planned elsewhere). */
export async function releaseInbound(
  db: Kysely<Database>,
  given: ReadonlyArray<Pick<InboundReservation, 'day' | 'mailboxId' | 'count'>>,
): Promise<void> {
  const sorted = [...given].sort((a, b) => compare(inboundKey(a.day, a.mailboxId), inboundKey(b.day, b.mailboxId)));
  for (let start = 0; start < sorted.length; start += CHUNK) {
    const chunk = sorted.slice(start, start + CHUNK).map((r) => ({ ...r, cap: NO_CAP }));
    await retryOnDeadlock(() =>
      sql`
        update plan_inbound set received = plan_inbound.received - v.column3
        from (values ${valuesOf(chunk)}) as v
        where plan_inbound.day = v.column1 and plan_inbound.mailbox_id = v.column2`.execute(db),
    );
  }
}

/** The stored counts of these recipients' days, keyed by `inboundKey`; a day without one is left out. */
export async function readInbound(
  db: Kysely<Database>,
  keys: ReadonlyArray<{ day: string; mailboxId: string }>,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const byDay = new Map<string, string[]>();
  for (const { day, mailboxId } of keys) {
    const ids = byDay.get(day);
    if (ids) ids.push(mailboxId);
    else byDay.set(day, [mailboxId]);
  }
  for (const [day, ids] of byDay)
    for (let start = 0; start < ids.length; start += CHUNK) {
      const rows = await db
        .selectFrom('plan_inbound')
        .select(['mailbox_id', 'received'])
        .where('day', '=', day)
        .where('mailbox_id', 'in', ids.slice(start, start + CHUNK))
        .execute();
      for (const row of rows) counts.set(inboundKey(day, row.mailbox_id), Number(row.received));
    }
  return counts;
}

/** Forgets the counts of days before `day`: no thread is planned for a day gone by. */
export async function forgetInboundBefore(db: Kysely<Database>, day: string): Promise<void> {
  await db.deleteFrom('plan_inbound').where('day', '<', day).execute();
}

function valuesOf(
  rows: ReadonlyArray<Pick<InboundReservation, 'day' | 'mailboxId' | 'count' | 'cap'>>,
): RawBuilder<unknown> {
  // typed in the first place they appear: PostgreSQL takes untyped parameters for text
  return sql.join(
    rows.map(
      (r) => sql`(${r.day}, ${r.mailboxId}, cast(${r.count} as integer), cast(${Math.min(r.cap, NO_CAP)} as integer))`,
    ),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * PostgreSQL may still find two multi-row updates waiting on each other (its plan need not visit
 * the rows in the order given) and cancels one of them; that statement changed nothing, so it is
 * run again.
 */
async function retryOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= 5 || (error as { code?: string }).code !== '40P01') throw error;
    }
  }
}
