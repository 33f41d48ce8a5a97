import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export const TODAY_COUNT_COLUMNS = [
  'sent',
  'inbox',
  'spam',
  'promotions',
  'other',
  'bounced',
  'failed',
  'lost',
] as const;

/** Today's counts of the whole installation, from the daily rollups (one row per mailbox). */
export type TodayCounts = Record<(typeof TODAY_COUNT_COLUMNS)[number], number>;

export async function sumTodayCounts(db: Kysely<Database>, day: string): Promise<TodayCounts> {
  const row = await db
    .selectFrom('daily_stats')
    .select((eb) => TODAY_COUNT_COLUMNS.map((column) => eb.fn.sum<number | string | null>(column).as(column)))
    .where('day', '=', day)
    .executeTakeFirst();
  const counts = {} as TodayCounts;
  for (const column of TODAY_COUNT_COLUMNS) counts[column] = Number(row?.[column] ?? 0);
  return counts;
}

/** Planned sends whose time has come and that no worker has claimed yet: the engine's backlog. */
export async function countDueMessages(db: Kysely<Database>, now: string): Promise<number> {
  const row = await db
    .selectFrom('warmup_messages')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'planned')
    .where('due_at', '<=', now)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Named leases (planning, mailbox syncs) that are held right now. */
export async function countHeldLeases(db: Kysely<Database>, now: string): Promise<number> {
  const row = await db
    .selectFrom('leases')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Mailboxes a worker holds for a sync right now (engine/reader.ts claims them, not named leases). */
export async function countClaimedSyncs(db: Kysely<Database>, now: string): Promise<number> {
  const row = await db
    .selectFrom('mailboxes')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('sync_owner', 'is not', null)
    .where('sync_claimed_until', '>', now)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function countMailboxesByStatus(db: Kysely<Database>): Promise<Array<{ status: string; count: number }>> {
  const rows = await db
    .selectFrom('mailboxes')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
    // a peer's addresses (stand-ins) are not this installation's mailboxes
    .where('peer_id', 'is', null)
    .groupBy('status')
    .execute();
  return rows.map((row) => ({ status: row.status, count: Number(row.count) }));
}

/** Planned sends a worker has claimed and is sending right now (their claim has not expired). */
export async function countClaimedMessages(db: Kysely<Database>, now: string): Promise<number> {
  const row = await db
    .selectFrom('warmup_messages')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'planned')
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Webhook deliveries still to be sent (pending) and given up (failed), installation-wide. */
export async function countWebhookDeliveries(db: Kysely<Database>): Promise<Array<{ status: string; count: number }>> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('status', 'in', ['pending', 'failed'])
    .groupBy('status')
    .execute();
  return rows.map((row) => ({ status: row.status, count: Number(row.count) }));
}

/** Peers of the installation by state; the states without one are answered as 0. */
export async function countPeersByState(db: Kysely<Database>): Promise<Array<{ state: string; count: number }>> {
  const rows = await db
    .selectFrom('peers')
    .select(['state', (eb) => eb.fn.countAll<number | string>().as('count')])
    .groupBy('state')
    .execute();
  return rows.map((row) => ({ state: row.state, count: Number(row.count) }));
}
