// What the providers' feeds (feeds/) say of a domain, read for the health guard, and the holds it
// puts on a domain. Every query takes the workspace id: one workspace's feeds never touch another's.
import type { Kysely } from 'kysely';
import { addDays } from '../calendar.js';
import type { Database } from '../db/schema.js';

/** The latest Postmaster day with a spam rate for the domain, on or after `since`. */
export async function latestGmailSpamRate(
  db: Kysely<Database>,
  workspaceId: string,
  domain: string,
  since: string,
): Promise<{ day: string; spam_rate: number } | undefined> {
  const row = await db
    .selectFrom('postmaster_days')
    .select(['day', 'spam_rate'])
    .where('workspace_id', '=', workspaceId)
    .where('domain', '=', domain)
    .where('day', '>=', since)
    .where('spam_rate', 'is not', null)
    .orderBy('day', 'desc')
    .executeTakeFirst();
  return row ? { day: row.day, spam_rate: Number(row.spam_rate) } : undefined;
}

/** How far back the DMARC reports are read for the addresses a domain's mail left from. */
export const SOURCE_DAYS = 30;

/**
 * Each address the domain's mail left from (the sources of its DMARC aggregate reports of the last
 * SOURCE_DAYS days) with its latest SNDS day on or after `since`: the colour Microsoft gave it then.
 */
export async function latestSndsDaysOfDomain(
  db: Kysely<Database>,
  workspaceId: string,
  domain: string,
  today: string,
  since: string,
): Promise<Array<{ ip: string; day: string; filter_result: string }>> {
  const sources = db
    .selectFrom('dmarc_records as r')
    .innerJoin('dmarc_reports as p', 'p.id', 'r.report_id')
    .select('r.source_ip')
    .where('p.workspace_id', '=', workspaceId)
    .where('p.domain', '=', domain)
    .where('p.day', '>=', addDays(today, -SOURCE_DAYS));
  const rows = await db
    .selectFrom('snds_days')
    .select(['ip', 'day', 'filter_result'])
    .where('workspace_id', '=', workspaceId)
    .where('day', '>=', since)
    .where('ip', 'in', sources)
    .orderBy('ip')
    .orderBy('day', 'desc')
    .execute();
  const latest = new Map<string, (typeof rows)[number]>();
  for (const row of rows) if (!latest.has(row.ip)) latest.set(row.ip, row);
  return [...latest.values()];
}

export async function findHold(db: Kysely<Database>, workspaceId: string, domain: string) {
  return db
    .selectFrom('provider_holds')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('domain', '=', domain)
    .executeTakeFirst();
}

export async function saveHold(
  db: Kysely<Database>,
  hold: { workspaceId: string; domain: string; signal: string; day: string; reason: string; at: string },
): Promise<void> {
  const values = { signal: hold.signal, day: hold.day, reason: hold.reason, updated_at: hold.at };
  await db
    .insertInto('provider_holds')
    .values({ workspace_id: hold.workspaceId, domain: hold.domain, since: hold.at, ...values })
    .onConflict((oc) => oc.columns(['workspace_id', 'domain']).doUpdateSet(values))
    .execute();
}

export async function removeHold(db: Kysely<Database>, workspaceId: string, domain: string): Promise<void> {
  await db.deleteFrom('provider_holds').where('workspace_id', '=', workspaceId).where('domain', '=', domain).execute();
}

/** The workspaces' held domains, for the planner: a held domain's mailboxes stay on their ramp day. */
export async function heldDomains(db: Kysely<Database>, workspaceIds: readonly string[]): Promise<Set<string>> {
  if (workspaceIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('provider_holds')
    .select(['workspace_id', 'domain'])
    .where('workspace_id', 'in', [...new Set(workspaceIds)])
    .execute();
  return new Set(rows.map((row) => `${row.workspace_id} ${row.domain}`));
}
