import { forgetFolds } from '../interactions/workspace-rollup.js';
import { sql, type Kysely } from 'kysely';
import { countRows, newestFirstPage, type PageWindow } from '../db/list-query.js';
import { containsText } from '../db/text-search.js';
import type {
  Database,
  HumanReplyRow,
  InteractionRow,
  MailboxRow,
  MailboxRowUpdate,
  NewMailboxRow,
} from '../db/schema.js';
import type { InteractionType } from '../interactions/interactions.schemas.js';
import type { MailboxStatus, ProviderId } from './mailboxes.schemas.js';

export interface MailboxFilter {
  status?: MailboxStatus;
  provider?: ProviderId;
  /** Case-insensitive substring of the address or the name. */
  q?: string;
}

export interface InteractionFilter {
  type?: InteractionType;
  /** occurred_at >= this ISO instant. */
  from?: string;
  /** occurred_at < this ISO instant. */
  before?: string;
}

/** A unique-constraint violation on either dialect (SQLite's error code, PostgreSQL's SQLSTATE). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

/** What a mailbox's outlook needs beyond its row (see outlookFacts). */
export interface OutlookFact {
  nextSendAt: string | null;
  sent: number;
  found: number;
  spam: number;
  bounced: number;
  /** Set while it is a receiver found filtering (engine/receiver-filtering.ts). */
  filtering: { junkedSenders: number; senders: number } | null;
  /** Why the providers' feeds hold its domain (engine/provider-signals.ts), or null. */
  providerHold: string | null;
  /** Set while Gmail Postmaster Tools' latest compliance status of its domain is `needs_work`. */
  providerWarning: string | null;
}

/** All mailbox SQL. Every query a route reaches takes the workspace id, so another workspace's id is simply not found. */
export function createMailboxesRepository(db: Kysely<Database>) {
  function filtered(workspaceId: string, filter: MailboxFilter) {
    let query = db.selectFrom('mailboxes').where('workspace_id', '=', workspaceId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.provider !== undefined) query = query.where('provider', '=', filter.provider);
    if (filter.q) query = query.where(containsText(['email', 'name'], filter.q));
    return query;
  }

  function interactionsOf(workspaceId: string, mailboxId: string, filter: InteractionFilter) {
    let query = db
      .selectFrom('interactions')
      .where('workspace_id', '=', workspaceId)
      .where('mailbox_id', '=', mailboxId);
    if (filter.type !== undefined) query = query.where('type', '=', filter.type);
    if (filter.from !== undefined) query = query.where('occurred_at', '>=', filter.from);
    if (filter.before !== undefined) query = query.where('occurred_at', '<', filter.before);
    return query;
  }

  return {
    /**
     * What a mailbox's outlook needs beyond its row, for a page of mailboxes at once: its next
     * planned send, and its own mail of the days from `sinceDay` summed from the daily rollups, less
     * the spam that receivers found filtering filed; and whether it is itself such a receiver.
     */
    async outlookFacts(workspaceId: string, ids: string[], sinceDay: string): Promise<Map<string, OutlookFact>> {
      const facts = new Map<string, OutlookFact>();
      if (ids.length === 0) return facts;
      const [next, week, filtering, setAside, emails, holds, compliance] = await Promise.all([
        db
          .selectFrom('warmup_messages')
          .select(['sender_mailbox_id', (eb) => eb.fn.min('due_at').as('next_due')])
          .where('sender_mailbox_id', 'in', ids)
          .where('status', '=', 'planned')
          .groupBy('sender_mailbox_id')
          .execute(),
        db
          .selectFrom('daily_stats')
          .select([
            'mailbox_id',
            sql<number>`cast(coalesce(sum(sent), 0) as integer)`.as('sent'),
            sql<number>`cast(coalesce(sum(inbox + spam + promotions + other), 0) as integer)`.as('found'),
            sql<number>`cast(coalesce(sum(spam), 0) as integer)`.as('spam'),
            sql<number>`cast(coalesce(sum(bounced), 0) as integer)`.as('bounced'),
          ])
          .where('workspace_id', '=', workspaceId)
          .where('mailbox_id', 'in', ids)
          .where('day', '>=', sinceDay)
          .groupBy('mailbox_id')
          .execute(),
        db
          .selectFrom('receiver_filtering')
          .select(['mailbox_id', 'junked_senders', 'senders'])
          .where('mailbox_id', 'in', ids)
          .execute(),
        // the spam a receiver found filtering filed (engine/receiver-filtering.ts): not the sender's doing
        db
          .selectFrom('warmup_messages as w')
          .innerJoin('receiver_filtering as f', 'f.mailbox_id', 'w.recipient_mailbox_id')
          .select(['w.sender_mailbox_id', sql<number>`cast(count(*) as integer)`.as('spam')])
          .where('w.sender_mailbox_id', 'in', ids)
          .where('w.placement', '=', 'spam')
          .where('w.found_at', 'is not', null)
          .where('w.sent_at', '>=', `${sinceDay}T00:00:00.000Z`)
          .groupBy('w.sender_mailbox_id')
          .execute(),
        db
          .selectFrom('mailboxes')
          .select(['id', 'email_normalized'])
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', ids)
          .execute(),
        db.selectFrom('provider_holds').select(['domain', 'reason']).where('workspace_id', '=', workspaceId).execute(),
        db
          .selectFrom('postmaster_days')
          .select(['domain', 'day', 'compliance'])
          .where('workspace_id', '=', workspaceId)
          .where('day', '>=', sinceDay)
          .where('compliance', 'is not', null)
          .orderBy('day', 'desc')
          .execute(),
      ]);
      for (const id of ids)
        facts.set(id, {
          nextSendAt: null,
          sent: 0,
          found: 0,
          spam: 0,
          bounced: 0,
          filtering: null,
          providerHold: null,
          providerWarning: null,
        });
      for (const row of next) facts.get(row.sender_mailbox_id)!.nextSendAt = row.next_due ?? null;
      for (const row of week) {
        Object.assign(facts.get(row.mailbox_id)!, {
          sent: Number(row.sent),
          found: Number(row.found),
          spam: Number(row.spam),
          bounced: Number(row.bounced),
        });
      }
      for (const row of filtering) {
        facts.get(row.mailbox_id)!.filtering = {
          junkedSenders: Number(row.junked_senders),
          senders: Number(row.senders),
        };
      }
      // the providers' feeds of its domain: a hold (engine/provider-signals.ts), Gmail's latest compliance status
      const holdOf = new Map(holds.map((row) => [row.domain, row.reason]));
      const complianceOf = new Map<string, { day: string; compliance: string | null }>();
      for (const row of compliance) if (!complianceOf.has(row.domain)) complianceOf.set(row.domain, row);
      for (const row of emails) {
        const domain = row.email_normalized.slice(row.email_normalized.lastIndexOf('@') + 1);
        const fact = facts.get(row.id)!;
        fact.providerHold = holdOf.get(domain) ?? null;
        const latest = complianceOf.get(domain);
        if (latest?.compliance === 'needs_work')
          fact.providerWarning = `Gmail Postmaster Tools reports ${domain} as not meeting Gmail's sender requirements (${latest.day}): fix what its Compliance status page names before sending campaigns.`;
      }
      for (const row of setAside) {
        const fact = facts.get(row.sender_mailbox_id)!;
        const spam = Math.min(fact.spam, Number(row.spam));
        Object.assign(fact, { found: fact.found - spam, spam: fact.spam - spam });
      }
      return facts;
    },

    /** One page, newest first; `id` (time-ordered) breaks ties within a millisecond. */
    async list(
      workspaceId: string,
      filter: MailboxFilter,
      page: PageWindow,
    ): Promise<{ rows: MailboxRow[]; total: number }> {
      return newestFirstPage(filtered(workspaceId, filter), 'created_at', page);
    },

    /** How many mailboxes the workspace has connected (the mailbox quota). */
    async countInWorkspace(workspaceId: string): Promise<number> {
      return countRows(filtered(workspaceId, {}));
    },

    async findById(workspaceId: string, id: string): Promise<MailboxRow | undefined> {
      return db
        .selectFrom('mailboxes')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async findByEmail(workspaceId: string, emailNormalized: string): Promise<MailboxRow | undefined> {
      return db
        .selectFrom('mailboxes')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('email_normalized', '=', emailNormalized)
        .executeTakeFirst();
    },

    /** For the engine, which works across workspaces; never reachable from a route. */
    async findByIdInAnyWorkspace(id: string): Promise<MailboxRow | undefined> {
      return db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Throws a unique violation (see isUniqueViolation) when the address is already connected. */
    async insert(row: NewMailboxRow): Promise<MailboxRow> {
      return db.insertInto('mailboxes').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** Applies `changes` (never the state columns: mailbox-state.ts owns those). */
    async update(workspaceId: string, id: string, changes: MailboxRowUpdate): Promise<MailboxRow | undefined> {
      return db
        .updateTable('mailboxes')
        .set(changes)
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Foreign keys cascade to its warmup messages, plans, interactions and daily rollups; the workspace rollup is refolded. */
    async delete(workspaceId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .deleteFrom('mailboxes')
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', id)
          .executeTakeFirst();
        const deleted = Number(result.numDeletedRows) > 0;
        // its history leaves the workspace's figures: the folded days are summed again
        if (deleted) await forgetFolds(trx, workspaceId);
        return deleted;
      });
    },

    /** One page of a mailbox's activity log, newest first. */
    async listInteractions(
      workspaceId: string,
      mailboxId: string,
      filter: InteractionFilter,
      page: PageWindow,
    ): Promise<{ rows: InteractionRow[]; total: number }> {
      return newestFirstPage(interactionsOf(workspaceId, mailboxId, filter), 'occurred_at', page);
    },

    /** The replies people wrote to the mailbox's warmup mail, newest found first. */
    async listHumanReplies(
      workspaceId: string,
      mailboxId: string,
      page: PageWindow,
    ): Promise<{ rows: HumanReplyRow[]; total: number }> {
      const query = db
        .selectFrom('human_replies')
        .where('workspace_id', '=', workspaceId)
        .where('mailbox_id', '=', mailboxId);
      return newestFirstPage(query, 'found_at', page);
    },
  };
}

export type MailboxesRepository = ReturnType<typeof createMailboxesRepository>;
