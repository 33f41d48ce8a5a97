// The feeds' SQL. Every query takes the workspace id: one workspace never sees another's feeds.
import type { Kysely } from 'kysely';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import type { FeedName } from './feeds.schemas.js';
export { saveConnection } from './feed-connections.repository.js';
import type { SndsRow } from './snds-csv.js';

export async function findConnection(db: Kysely<Database>, workspaceId: string, feed: FeedName) {
  return db
    .selectFrom('feed_connections')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('feed', '=', feed)
    .executeTakeFirst();
}

export type ConnectionRow = NonNullable<Awaited<ReturnType<typeof findConnection>>>;

/** Removes a connection and what it fetched: a feed no longer connected holds nothing. */
export async function deleteConnection(db: Kysely<Database>, workspaceId: string, feed: FeedName): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { numDeletedRows } = await trx
      .deleteFrom('feed_connections')
      .where('workspace_id', '=', workspaceId)
      .where('feed', '=', feed)
      .executeTakeFirst();
    await trx
      .deleteFrom(feed === 'snds' ? 'snds_days' : 'postmaster_days')
      .where('workspace_id', '=', workspaceId)
      .execute();
    return Number(numDeletedRows) > 0;
  });
}

/** The connections not fetched on `day` yet (a failed fetch is tried again on the next run). */
export async function listDueConnections(db: Kysely<Database>, day: string) {
  return db
    .selectFrom('feed_connections')
    .selectAll()
    .where((eb) => eb.or([eb('fetched_day', 'is', null), eb('fetched_day', '<', day)]))
    .orderBy('workspace_id')
    .orderBy('feed')
    .execute();
}

export async function markFetched(
  db: Kysely<Database>,
  connection: { workspace_id: string; feed: string },
  result: { day: string; at: string; error: string | null },
): Promise<void> {
  await db
    .updateTable('feed_connections')
    .set({
      checked_at: result.at,
      last_error: result.error,
      ...(result.error === null ? { fetched_day: result.day } : {}),
    })
    .where('workspace_id', '=', connection.workspace_id)
    .where('feed', '=', connection.feed)
    .execute();
}

/** Stores SNDS rows; a day fetched again replaces its row (stored once per address and day). */
export async function saveSndsDays(db: Kysely<Database>, workspaceId: string, rows: SndsRow[], at: string) {
  for (const row of rows) {
    const values = {
      filter_result: row.filterResult,
      complaint_rate: row.complaintRate,
      complaint_rate_max: row.complaintRateMax,
      trap_hits: row.trapHits,
      rcpt_commands: row.rcptCommands,
      data_commands: row.dataCommands,
      message_recipients: row.messageRecipients,
      fetched_at: at,
    };
    await db
      .insertInto('snds_days')
      .values({ workspace_id: workspaceId, ip: row.ip, day: row.day, ...values })
      .onConflict((oc) => oc.columns(['workspace_id', 'ip', 'day']).doUpdateSet(values))
      .execute();
  }
}

export async function savePostmasterDay(
  db: Kysely<Database>,
  row: {
    workspaceId: string;
    domain: string;
    day: string;
    spamRate: number | null;
    compliance: string | null;
    at: string;
  },
): Promise<void> {
  const values = { spam_rate: row.spamRate, compliance: row.compliance, fetched_at: row.at };
  await db
    .insertInto('postmaster_days')
    .values({ workspace_id: row.workspaceId, domain: row.domain, day: row.day, ...values })
    .onConflict((oc) => oc.columns(['workspace_id', 'domain', 'day']).doUpdateSet(values))
    .execute();
}

export async function setAside(
  db: Kysely<Database>,
  row: { workspaceId: string; feed: FeedName; rowText: string; reason: string; at: Date },
): Promise<void> {
  await db
    .insertInto('feed_set_aside')
    .values({
      id: newId('fsa', row.at.getTime()),
      workspace_id: row.workspaceId,
      feed: row.feed,
      row_text: row.rowText.slice(0, 200),
      reason: row.reason,
      found_at: row.at.toISOString(),
    })
    .execute();
}

/** The workspace's mailboxes are judged by the health guard on its next run (their feeds changed). */
export async function makeHealthDue(db: Kysely<Database>, workspaceId: string, at: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ health_due_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'active')
    .execute();
}

export async function postmasterDays(db: Kysely<Database>, workspaceId: string, domain: string, from: string) {
  return db
    .selectFrom('postmaster_days')
    .select(['day', 'spam_rate', 'compliance'])
    .where('workspace_id', '=', workspaceId)
    .where('domain', '=', domain)
    .where('day', '>=', from)
    .orderBy('day', 'desc')
    .execute();
}

/** SNDS days since `from` of the addresses in the domain's DMARC reports since `from`. */
export async function sndsDaysOfDomain(db: Kysely<Database>, workspaceId: string, domain: string, from: string) {
  const sources = db
    .selectFrom('dmarc_records as r')
    .innerJoin('dmarc_reports as p', 'p.id', 'r.report_id')
    .select('r.source_ip')
    .where('p.workspace_id', '=', workspaceId)
    .where('p.domain', '=', domain)
    .where('p.day', '>=', from);
  return db
    .selectFrom('snds_days')
    .select(['ip', 'day', 'filter_result', 'complaint_rate', 'trap_hits', 'message_recipients'])
    .where('workspace_id', '=', workspaceId)
    .where('day', '>=', from)
    .where('ip', 'in', sources)
    .orderBy('day', 'desc')
    .orderBy('ip')
    .limit(500)
    .execute();
}

/** The feed's rows set aside since `since`: how many, and the latest reason. */
export async function setAsideSummary(db: Kysely<Database>, workspaceId: string, feed: FeedName, since: string) {
  const rows = db
    .selectFrom('feed_set_aside')
    .where('workspace_id', '=', workspaceId)
    .where('feed', '=', feed)
    .where('found_at', '>=', since);
  const [count, latest] = await Promise.all([
    rows.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirst(),
    rows.select('reason').orderBy('found_at', 'desc').limit(1).executeTakeFirst(),
  ]);
  return { count: Number(count?.count ?? 0), latestReason: latest?.reason ?? null };
}

/** Feed rows older than `beforeDay` go: the rules read 7 days, the domain page 30. */
export async function removeOldFeedRows(db: Kysely<Database>, beforeDay: string): Promise<void> {
  await db.deleteFrom('snds_days').where('day', '<', beforeDay).execute();
  await db.deleteFrom('postmaster_days').where('day', '<', beforeDay).execute();
  await db.deleteFrom('feed_set_aside').where('found_at', '<', `${beforeDay}T00:00:00.000Z`).execute();
}
