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
import { CompiledQuery, SqliteAdapter, type Kysely } from 'kysely';
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
  const sorted = [...wanted].sort(byKey);
  for (let start = 0; start < sorted.length; start += CHUNK) {
    const chunk = sorted.slice(start, start + CHUNK);
    const fresh = chunk.filter((r) => r.initial + r.count <= Math.min(r.cap, NO_CAP));
    if (fresh.length > 0) {
      const values: unknown[] = [];
      for (const r of fresh) values.push(r.day, r.mailboxId, r.initial + r.count);
      const inserted = await db.executeQuery<{ day: string; mailbox_id: string; received: number }>(
        CompiledQuery.raw(
          `insert into plan_inbound (day, mailbox_id, received) values ${tuples(db, fresh.length, 3)}
          on conflict (day, mailbox_id) do nothing
          returning day, mailbox_id, received`,
          values,
        ),
      );
      for (const row of inserted.rows) granted.set(inboundKey(row.day, row.mailbox_id), Number(row.received));
    }
    const rest = chunk.filter((r) => !granted.has(inboundKey(r.day, r.mailboxId)));
    if (rest.length === 0) continue;
    const updated = await retryOnDeadlock(() =>
      db.executeQuery<{ day: string; mailbox_id: string; received: number }>(
        CompiledQuery.raw(
          `update plan_inbound set received = plan_inbound.received + v.column3
          from (values ${tuples(db, rest.length, 4, true)}) as v
          where plan_inbound.day = v.column1 and plan_inbound.mailbox_id = v.column2
            and plan_inbound.received + v.column3 <= v.column4
          returning plan_inbound.day, plan_inbound.mailbox_id, plan_inbound.received`,
          valuesOf(rest),
        ),
      ),
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
  const sorted = [...given].sort(byKey);
  for (let start = 0; start < sorted.length; start += CHUNK) {
    const chunk = sorted.slice(start, start + CHUNK);
    await retryOnDeadlock(() =>
      db.executeQuery(
        CompiledQuery.raw(
          `update plan_inbound set received = plan_inbound.received - v.column3
          from (values ${tuples(db, chunk.length, 4, true)}) as v
          where plan_inbound.day = v.column1 and plan_inbound.mailbox_id = v.column2`,
          valuesOf(chunk),
        ),
      ),
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

/** The four values of each reservation's tuple: day, mailbox, count and cap (none given back). */
function valuesOf(
  rows: ReadonlyArray<Pick<InboundReservation, 'day' | 'mailboxId' | 'count'> & { cap?: number }>,
): unknown[] {
  const values: unknown[] = [];
  for (const r of rows) values.push(r.day, r.mailboxId, r.count, Math.min(r.cap ?? NO_CAP, NO_CAP));
  return values;
}

/**
 * `count` tuples of `width` parameters in the database's own placeholders, written as text: the
 * planner reserves thousands of places per batch, and a query tree with a node per value (Kysely's
 * `sql` and `values`) was a sizeable part of what planning allocated. With `typed`, the last two
 * values of each tuple are cast to integers (PostgreSQL takes untyped parameters as text).
 */
function tuples(db: Kysely<Database>, count: number, width: number, typed = false): string {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const parts: string[] = new Array<string>(count);
  let n = 0;
  for (let t = 0; t < count; t++) {
    const params: string[] = new Array<string>(width);
    for (let c = 0; c < width; c++) {
      const param = sqlite ? '?' : `$${++n}`;
      params[c] = typed && c >= width - 2 ? `cast(${param} as integer)` : param;
    }
    parts[t] = `(${params.join(', ')})`;
  }
  return parts.join(', ');
}

/**
 * The order of `inboundKey`, without making the keys: days have one length, so day then mailbox id
 * is the order of "<day> <mailbox id>" (a sort of 10,000 reservations made ~300,000 key strings).
 */
function byKey(a: { day: string; mailboxId: string }, b: { day: string; mailboxId: string }): number {
  if (a.day !== b.day) return a.day < b.day ? -1 : 1;
  return a.mailboxId < b.mailboxId ? -1 : a.mailboxId > b.mailboxId ? 1 : 0;
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
