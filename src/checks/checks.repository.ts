import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { BlocklistResult } from './blocklists.js';
import type { BlocklistListing, DnsCheck } from './checks.schemas.js';

/**
 * Keeps the latest result of each check of the mailbox, with since when it has been failing: a
 * failure continues one already running, a pass or skip ends it, and an unreachable DNS server
 * leaves it as it was (nothing was learned). Returns the checks with that time.
 */
export async function saveChecks(
  db: Kysely<Database>,
  mailboxId: string,
  checks: DnsCheck[],
  at: Date,
): Promise<Array<DnsCheck & { failingSince: string | null }>> {
  const checkedAt = at.toISOString();
  const previous = new Map(
    (
      await db
        .selectFrom('mailbox_checks')
        .select(['check', 'failing_since'])
        .where('mailbox_id', '=', mailboxId)
        .execute()
    ).map((row) => [row.check, row.failing_since]),
  );
  const saved: Array<DnsCheck & { failingSince: string | null }> = [];
  for (const check of checks) {
    const before = previous.get(check.check) ?? null;
    const failingSince =
      check.status === 'fail' ? (before ?? checkedAt) : check.status === 'unreachable' ? before : null;
    const row = {
      status: check.status,
      detail: check.detail,
      fix: check.fix,
      checked_at: checkedAt,
      failing_since: failingSince,
    };
    await db
      .insertInto('mailbox_checks')
      .values({ mailbox_id: mailboxId, check: check.check, ...row })
      .onConflict((oc) => oc.columns(['mailbox_id', 'check']).doUpdateSet(row))
      .execute();
    saved.push({ ...check, failingSince });
  }
  return saved;
}

export interface MailboxToCheck {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  smtp: string;
  status: string;
  paused_for: 'dns' | null;
  dkim_selector: string | null;
  /** When its checks last ran; null: never. */
  last_checked_at: string | null;
}

/**
 * Mailboxes whose DNS is due a check, oldest check first: the active ones not checked since
 * `checkedBefore`, and those failing SPF or DMARC, or paused by the DNS rule, not checked since
 * `recheckBefore` (so a failure is seen to last, and a fix resumes warmup within the hour).
 */
export async function mailboxesDueForChecks(
  db: Kysely<Database>,
  options: { checkedBefore: Date; recheckBefore: Date; limit: number },
): Promise<MailboxToCheck[]> {
  return (
    db
      .selectFrom('mailboxes as m')
      .leftJoin('mailbox_checks as c', (join) => join.onRef('c.mailbox_id', '=', 'm.id').on('c.check', '=', 'mx'))
      .select([
        'm.id',
        'm.workspace_id',
        'm.email',
        'm.name',
        'm.smtp',
        'm.status',
        'm.paused_for',
        'm.dkim_selector',
        'c.checked_at as last_checked_at',
      ])
      .where((eb) => eb.or([eb('m.status', '=', 'active'), eb('m.paused_for', '=', 'dns')]))
      .where((eb) =>
        eb.or([
          eb('c.checked_at', 'is', null),
          eb('c.checked_at', '<', options.checkedBefore.toISOString()),
          eb.and([
            eb('c.checked_at', '<=', options.recheckBefore.toISOString()),
            eb.or([
              eb('m.paused_for', '=', 'dns'),
              eb.exists(
                eb
                  .selectFrom('mailbox_checks as f')
                  .select('f.check')
                  .whereRef('f.mailbox_id', '=', 'm.id')
                  .where('f.check', 'in', ['spf', 'dmarc'])
                  .where('f.failing_since', 'is not', null),
              ),
            ]),
          ]),
        ]),
      )
      // never checked first (SQLite sorts nulls first, PostgreSQL last)
      .orderBy(sql`coalesce(c.checked_at, '')`)
      .limit(options.limit)
      .execute()
  );
}

/** The addresses the mailbox's mail was seen sent from (engine/sender-evidence.ts), newest first. */
export async function sendingIpsOf(db: Kysely<Database>, mailboxId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mailbox_sending_ips')
    .select('ip')
    .where('mailbox_id', '=', mailboxId)
    .orderBy('last_seen_at', 'desc')
    .execute();
  return rows.map((row) => row.ip);
}

/** A listing not there at the last answer: what `check.failed` tells once. */
export type NewListing = BlocklistResult & { listedSince: string };

/**
 * Keeps the latest blocklist answers of the mailbox: since when each is listed (a listing goes on
 * until a clear answer; an unanswered query leaves it as it was), and nothing about a list, an
 * address or a domain no longer asked about.
 */
export async function saveBlocklistResults(
  db: Kysely<Database>,
  mailboxId: string,
  results: BlocklistResult[],
  at: Date,
): Promise<NewListing[]> {
  const listedNow: NewListing[] = [];
  const checkedAt = at.toISOString();
  const previous = new Map(
    (
      await db
        .selectFrom('blocklist_results')
        .select(['zone', 'subject', 'listed_since'])
        .where('mailbox_id', '=', mailboxId)
        .execute()
    ).map((row) => [`${row.zone} ${row.subject}`, row.listed_since]),
  );
  for (const result of results) {
    const before = previous.get(`${result.zone} ${result.subject}`) ?? null;
    previous.delete(`${result.zone} ${result.subject}`);
    const row = {
      kind: result.kind,
      status: result.status,
      detail: result.detail.slice(0, 1000),
      delist_url: result.delistUrl,
      listed_since:
        result.status === 'listed' ? (before ?? checkedAt) : result.status === 'unreachable' ? before : null,
      checked_at: checkedAt,
    };
    await db
      .insertInto('blocklist_results')
      .values({ mailbox_id: mailboxId, zone: result.zone, subject: result.subject, ...row })
      .onConflict((oc) => oc.columns(['mailbox_id', 'zone', 'subject']).doUpdateSet(row))
      .execute();
    if (result.status === 'listed' && before === null) listedNow.push({ ...result, listedSince: checkedAt });
  }
  for (const key of previous.keys()) {
    const [zone, subject] = key.split(' ') as [string, string];
    await db
      .deleteFrom('blocklist_results')
      .where('mailbox_id', '=', mailboxId)
      .where('zone', '=', zone)
      .where('subject', '=', subject)
      .execute();
  }
  return listedNow;
}

/** The latest blocklist answers of a mailbox of the workspace, listings first; undefined: no such mailbox. */
export async function blocklistListingsOf(
  db: Kysely<Database>,
  workspaceId: string,
  mailboxId: string,
): Promise<BlocklistListing[] | undefined> {
  const mailbox = await db
    .selectFrom('mailboxes')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .executeTakeFirst();
  if (!mailbox) return undefined;
  const rows = await db
    .selectFrom('blocklist_results')
    .selectAll()
    .where('mailbox_id', '=', mailboxId)
    .orderBy('kind')
    .orderBy('subject')
    .orderBy('zone')
    .execute();
  const order = { listed: 0, unreachable: 1, clear: 2 } as Record<string, number>;
  return rows
    .map((row) => ({
      zone: row.zone,
      kind: row.kind as BlocklistListing['kind'],
      subject: row.subject,
      status: row.status as BlocklistListing['status'],
      detail: row.detail,
      listedSince: row.listed_since,
      delistUrl: row.delist_url,
      checkedAt: row.checked_at,
    }))
    .sort((a, b) => (order[a.status] ?? 3) - (order[b.status] ?? 3));
}

export interface WorkspaceListing {
  email: string;
  zone: string;
  kind: string;
  subject: string;
  listedSince: string | null;
  delistUrl: string | null;
}

export interface WorkspaceBlocklists {
  /** The current listings, oldest first. */
  listings: WorkspaceListing[];
  /** Answers kept (lists × addresses and domains asked); 0: never checked. */
  answers: number;
  /** Answers that were not had (the list did not answer or refused the resolver). */
  unreachable: number;
  lastCheckedAt: string | null;
}

/** The latest blocklist answers of the workspace's mailboxes (or one's), for the report: what is listed now. */
export async function workspaceBlocklists(
  db: Kysely<Database>,
  workspaceId: string,
  mailboxId?: string,
): Promise<WorkspaceBlocklists> {
  let query = db
    .selectFrom('blocklist_results as b')
    .innerJoin('mailboxes as m', 'm.id', 'b.mailbox_id')
    .where('m.workspace_id', '=', workspaceId);
  if (mailboxId !== undefined) query = query.where('m.id', '=', mailboxId);
  const [listings, counts] = await Promise.all([
    query
      .select([
        'm.email',
        'b.zone',
        'b.kind',
        'b.subject',
        'b.listed_since as listedSince',
        'b.delist_url as delistUrl',
      ])
      .where('b.status', '=', 'listed')
      .orderBy('b.listed_since')
      .orderBy('m.email')
      .orderBy('b.zone')
      .execute(),
    query
      .select([
        sql<number>`count(*)`.as('answers'),
        sql<number>`cast(sum(case when b.status = 'unreachable' then 1 else 0 end) as integer)`.as('unreachable'),
        sql<string | null>`max(b.checked_at)`.as('last'),
      ])
      .executeTakeFirst(),
  ]);
  return {
    listings,
    answers: Number(counts?.answers ?? 0),
    unreachable: Number(counts?.unreachable ?? 0),
    lastCheckedAt: counts?.last ?? null,
  };
}

export interface MailboxCheckResults {
  mailboxId: string;
  email: string;
  checks: Array<Pick<DnsCheck, 'check' | 'status' | 'fix'>>;
  blocklists: Array<Pick<BlocklistListing, 'zone' | 'subject' | 'status' | 'delistUrl'>>;
  /** When the daily run last stored a check of it; null: never. */
  checkedAt: string | null;
}

/** The latest stored DNS checks and blocklist listings of every mailbox of the workspace, by address. */
export async function workspaceCheckResults(db: Kysely<Database>, workspaceId: string): Promise<MailboxCheckResults[]> {
  const [mailboxes, checks, listings] = await Promise.all([
    db
      .selectFrom('mailboxes')
      .select(['id', 'email'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('email')
      .execute(),
    db
      .selectFrom('mailbox_checks as c')
      .innerJoin('mailboxes as m', 'm.id', 'c.mailbox_id')
      .select(['c.mailbox_id', 'c.check', 'c.status', 'c.fix', 'c.checked_at'])
      .$narrowType<{ check: DnsCheck['check']; status: DnsCheck['status'] }>()
      .where('m.workspace_id', '=', workspaceId)
      .execute(),
    db
      .selectFrom('blocklist_results as b')
      .innerJoin('mailboxes as m', 'm.id', 'b.mailbox_id')
      .select(['b.mailbox_id', 'b.zone', 'b.subject', 'b.delist_url'])
      .where('m.workspace_id', '=', workspaceId)
      .where('b.status', '=', 'listed')
      .orderBy('b.listed_since')
      .execute(),
  ]);
  const results = new Map<string, MailboxCheckResults>(
    mailboxes.map((m) => [m.id, { mailboxId: m.id, email: m.email, checks: [], blocklists: [], checkedAt: null }]),
  );
  for (const row of checks) {
    const result = results.get(row.mailbox_id);
    if (!result) continue;
    result.checks.push({ check: row.check, status: row.status, fix: row.fix });
    if (result.checkedAt === null || row.checked_at > result.checkedAt) result.checkedAt = row.checked_at;
  }
  for (const row of listings) {
    results
      .get(row.mailbox_id)
      ?.blocklists.push({ zone: row.zone, subject: row.subject, status: 'listed', delistUrl: row.delist_url });
  }
  return [...results.values()];
}
