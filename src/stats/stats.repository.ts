import { sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { viewedStatus, type MailboxStatus, type ProviderId } from '../mailboxes/mailboxes.schemas.js';
import type { DayRange } from './period.js';
import { addDays, eachDay } from '../calendar.js';
import { jsonRows, jsonRowsOf } from '../db/json-rows.js';
import type { Placement } from '../interactions/interactions.schemas.js';
import type { DnsCheck } from '../checks/checks.schemas.js';
import { PLACEMENT_COUNTERS, RECEIVED_PLACEMENT_COUNTERS, rollupColumn } from '../interactions/workspace-rollup.js';
import { DAY_COUNT_COLUMNS, TOTAL_COLUMNS, type DayCounts, type Totals } from './stats.schemas.js';

/*
 * All statistics SQL. It reads the rollups only, never the interactions: `daily_stats` (one row
 * per mailbox per day), summed per day for workspace-wide figures, and `mailboxes`. So a query
 * costs one row per mailbox per day of its range, and nothing grows with the number of messages.
 * Workspace-wide figures read finished days from `workspace_daily_stats`, folded off the write
 * path by a leased job (interactions/workspace-rollup.ts; a rollup the engine's transactions updated deadlocked
 * the workers on its one hot row per workspace and day), and sum the later days live. Every query is scoped by workspace, so
 * another workspace's mailbox is simply not found.
 */

export interface DayTotals extends Totals {
  day: string;
  /** Mean of the scores recorded that day, unrounded; null when none was. */
  reputation: number | null;
}

export interface MailboxSummary {
  id: string;
  email: string;
  status: MailboxStatus;
  provider: ProviderId;
  reputation: number;
  warmupDay: number;
  dailyTarget: number;
}

/** Where the mail a mailbox received was found (the receiving side of placement). */
export type ReceivedPlacement = Record<Placement, number>;

export interface MailboxTotals extends Totals {
  mailboxId: string;
  email: string;
  status: MailboxStatus;
  provider: ProviderId;
  reputation: number;
  receivedPlacement: ReceivedPlacement;
}

/** One mailbox's placement over a range: where its mail was found, and where the mail it received was filed. */
export interface MailboxPlacement extends Pick<Totals, Placement> {
  mailboxId: string;
  email: string;
  provider: ProviderId;
  receivedPlacement: ReceivedPlacement;
}

export interface MailboxDay extends DayCounts {
  mailboxId: string;
  day: string;
  reputation: number | null;
}

export interface MailboxCounts {
  total: number;
  active: number;
  paused: number;
  error: number;
  /** Mean reputation of the active mailboxes, unrounded; null when none is active. */
  activeReputation: number | null;
}

interface MailboxListing {
  id: string;
  email: string;
  status: MailboxStatus;
  provider: ProviderId;
  reputation: number;
}

/** A counter's rollup column, read under the counter's own name. */
function counter<Counter extends string>(name: Counter) {
  return sql<number>`${sql.ref(rollupColumn(name))}`.as(name);
}

/** SUM of an integer column (or of a counter's column) as an integer on both dialects; 0 (not null) over no rows. */
function total(column: string): RawBuilder<number> {
  return sql<number>`cast(coalesce(sum(${sql.ref(rollupColumn(column))}), 0) as integer)`;
}

/** The `columns` of `row` as numbers (PostgreSQL returns sums as strings), 0 for a missing one. */
function numbersOf<Column extends string>(
  columns: readonly Column[],
  row: Partial<Record<Column, number | string | null>>,
): Record<Column, number> {
  const numbers = {} as Record<Column, number>;
  for (const column of columns) numbers[column] = Number(row[column] ?? 0);
  return numbers;
}

function toTotals(row: Partial<Record<(typeof TOTAL_COLUMNS)[number], number | string | null>>): Totals {
  return numbersOf(TOTAL_COLUMNS, row);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The day's mean score from the sum and count of its mailboxes' scores. */
function meanScore(sum: unknown, count: unknown): number | null {
  return Number(count) > 0 ? Number(sum) / Number(count) : null;
}

/**
 * Per-mailbox listings are ordered by email, compared as plain text here rather than by SQL, whose
 * order depends on the PostgreSQL collation and would differ between the two dialects.
 */
export function byEmail(a: { id: string; email: string }, b: { id: string; email: string }): number {
  return compareEmails(a.email, a.id, b.email, b.id);
}

function compareEmails(aEmail: string, aId: string, bEmail: string, bId: string): number {
  const left = aEmail.toLowerCase();
  const right = bEmail.toLowerCase();
  if (left !== right) return left < right ? -1 : 1;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

/** `byEmail` for rows that name their mailbox `mailboxId`. */
export function byMailboxEmail(
  a: { mailboxId: string; email: string },
  b: { mailboxId: string; email: string },
): number {
  return compareEmails(a.email, a.mailboxId, b.email, b.mailboxId);
}

export interface MailboxCheckRow {
  mailboxId: string;
  email: string;
  check: DnsCheck['check'];
  status: DnsCheck['status'];
  detail: string;
  fix: string | null;
  checkedAt: string;
}

/** A mailbox with its counters (0 for those `row` lacks) and where the mail it received was filed. */
function withTotals(
  mailbox: MailboxListing,
  row:
    | Partial<Record<(typeof TOTAL_COLUMNS | typeof RECEIVED_PLACEMENT_COUNTERS)[number], number | string | null>>
    | undefined,
): MailboxTotals {
  return {
    mailboxId: mailbox.id,
    email: mailbox.email,
    status: mailbox.status,
    provider: mailbox.provider,
    reputation: mailbox.reputation,
    ...toTotals(row ?? {}),
    receivedPlacement: {
      inbox: Number(row?.received_inbox ?? 0),
      spam: Number(row?.received_spam ?? 0),
      promotions: Number(row?.received_promotions ?? 0),
      other: Number(row?.received_other ?? 0),
    },
  };
}

export function createStatsRepository(db: Kysely<Database>) {
  /**
   * One mailbox's rollup rows, scoped to the workspace through `mailboxes`: written as a subquery
   * so both planners walk the (mailbox_id, day) primary key rather than the workspace's index.
   */
  function ownMailbox(workspaceId: string, mailboxId: string) {
    return (eb: ExpressionBuilder<Database, 'daily_stats'>) =>
      eb(
        'daily_stats.mailbox_id',
        'in',
        eb
          .selectFrom('mailboxes')
          .select('mailboxes.id')
          .where('mailboxes.id', '=', mailboxId)
          .where('mailboxes.workspace_id', '=', workspaceId),
      );
  }

  function mailboxRows(workspaceId: string, mailboxId: string, range: DayRange) {
    return db
      .selectFrom('daily_stats')
      .where(ownMailbox(workspaceId, mailboxId))
      .where('day', '>=', range.startDate)
      .where('day', '<=', range.endDate);
  }

  /** The last day the workspace's rollup holds ('' while none): later days are summed live. */
  const throughDay = (workspaceId: string) =>
    sql<string>`coalesce((select through_day from stats_folds where workspace_id = ${workspaceId}), '')`;

  /** The workspace's folded days (stats/workspace-rollup.ts). */
  function foldedDays(workspaceId: string) {
    return db
      .selectFrom('workspace_daily_stats')
      .where('workspace_id', '=', workspaceId)
      .where('day', '<=', throughDay(workspaceId));
  }

  /** The workspace's mailbox rows of the days not folded yet. */
  function liveDays(workspaceId: string) {
    return db
      .selectFrom('daily_stats')
      .where('workspace_id', '=', workspaceId)
      .where('day', '>', throughDay(workspaceId));
  }

  const foldedDayColumns = [
    'day',
    ...TOTAL_COLUMNS.map(counter),
    sql<number>`reputation_sum`.as('reputation_sum'),
    sql<number>`reputation_count`.as('reputation_count'),
  ] as const;

  /** The workspace's figures per day: the filter goes inside the grouping, so only the range is read. */
  const workspaceDayColumns = [
    'day',
    ...TOTAL_COLUMNS.map((column) => total(column).as(column)),
    total('reputation').as('reputation_sum'),
    sql<number>`cast(count(reputation) as integer)`.as('reputation_count'),
  ] as const;

  async function listMailboxes(workspaceId: string, mailboxId?: string): Promise<MailboxListing[]> {
    let query = db
      .selectFrom('mailboxes')
      .select(['id', 'email', 'status', 'provider', 'reputation'])
      .where('workspace_id', '=', workspaceId);
    if (mailboxId !== undefined) query = query.where('id', '=', mailboxId);
    const rows = await query.execute();
    return rows
      .map((row) => ({ ...row, status: viewedStatus(row.status), reputation: Number(row.reputation) }))
      .sort(byEmail);
  }

  return {
    listMailboxes,

    /** The latest stored DNS check results (the daily run's) of the workspace's mailboxes, or one's. */
    async latestChecks(workspaceId: string, mailboxId?: string): Promise<MailboxCheckRow[]> {
      let query = db
        .selectFrom('mailbox_checks as c')
        .innerJoin('mailboxes as m', 'm.id', 'c.mailbox_id')
        .select([
          'm.id as mailboxId',
          'm.email',
          'c.check',
          'c.status',
          'c.detail',
          'c.fix',
          'c.checked_at as checkedAt',
        ])
        .$narrowType<Pick<MailboxCheckRow, 'check' | 'status'>>()
        .where('m.workspace_id', '=', workspaceId);
      if (mailboxId !== undefined) query = query.where('m.id', '=', mailboxId);
      return query.orderBy('m.email').orderBy('c.check').execute();
    },

    async findMailbox(workspaceId: string, mailboxId: string): Promise<MailboxSummary | undefined> {
      const row = await db
        .selectFrom('mailboxes')
        .select(['id', 'email', 'status', 'provider', 'reputation', 'warmup_day', 'daily_target'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', mailboxId)
        .executeTakeFirst();
      return (
        row && {
          id: row.id,
          email: row.email,
          status: viewedStatus(row.status),
          provider: row.provider,
          reputation: Number(row.reputation),
          warmupDay: Number(row.warmup_day),
          dailyTarget: Number(row.daily_target),
        }
      );
    },

    async workspaceName(workspaceId: string): Promise<string | undefined> {
      const row = await db.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst();
      return row?.name;
    },

    /**
     * The counters of each day of the range that has a row (the workspace's sums, or one mailbox's),
     * and the score a reputation series carries into the range: the mean of the last day before it
     * that has one. One statement: the range, plus that one earlier row (ORDER BY … LIMIT 1 walks
     * the primary key backwards and stops at the first hit).
     */
    async dailyTotals(
      workspaceId: string,
      range: DayRange,
      mailboxId?: string,
    ): Promise<{ rows: DayTotals[]; carried: number | null }> {
      let rows: Array<{ day: string; reputation: number | null } & Totals>;
      if (mailboxId !== undefined) {
        const columns = ['day', ...TOTAL_COLUMNS.map(counter), 'reputation'] as const;
        const before = db
          .selectFrom('daily_stats')
          .select(columns)
          .where(ownMailbox(workspaceId, mailboxId))
          .where('day', '<', range.startDate)
          .where('reputation', 'is not', null)
          .orderBy('day', 'desc')
          .limit(1);
        const found = await mailboxRows(workspaceId, mailboxId, range)
          .select(columns)
          .unionAll(db.selectFrom(before.as('before')).selectAll())
          .execute();
        rows = found.map((row) => ({ day: row.day, ...toTotals(row), reputation: nullableNumber(row.reputation) }));
      } else {
        // Folded days from the workspace rollup, the days after the last folded one summed live.
        const folded = foldedDays(workspaceId)
          .select(foldedDayColumns)
          .where('day', '>=', range.startDate)
          .where('day', '<=', range.endDate);
        const live = liveDays(workspaceId)
          .select(workspaceDayColumns)
          .where('day', '>=', range.startDate)
          .where('day', '<=', range.endDate)
          .groupBy('day');
        // The last scored day before the range, in either: only its reputation is used (carried forward).
        const foldedBefore = foldedDays(workspaceId)
          .select(foldedDayColumns)
          .where('day', '<', range.startDate)
          .where('reputation_count', '>', 0)
          .orderBy('day', 'desc')
          .limit(1);
        const liveBefore = liveDays(workspaceId)
          .select(workspaceDayColumns)
          .where('day', '<', range.startDate)
          .where('reputation', 'is not', null)
          .groupBy('day')
          .orderBy('day', 'desc')
          .limit(1);
        const found = await db
          .selectFrom(folded.as('folded'))
          .selectAll()
          .unionAll(db.selectFrom(live.as('live')).selectAll())
          .unionAll(db.selectFrom(foldedBefore.as('folded_before')).selectAll())
          .unionAll(db.selectFrom(liveBefore.as('live_before')).selectAll())
          .execute();
        rows = found.map((row) => ({
          day: row.day,
          ...toTotals(row),
          reputation: meanScore(row.reputation_sum, row.reputation_count),
        }));
      }
      const earlier = rows
        .filter((row) => row.day < range.startDate && row.reputation !== null)
        .sort((a, b) => (a.day < b.day ? 1 : -1))[0];
      return { rows: rows.filter((row) => row.day >= range.startDate), carried: earlier?.reputation ?? null };
    },

    /** The counters summed over the range. */
    async rangeTotals(workspaceId: string, range: DayRange, mailboxId?: string): Promise<Totals> {
      const sums = TOTAL_COLUMNS.map((column) => total(column).as(column));
      if (mailboxId !== undefined)
        return toTotals(await mailboxRows(workspaceId, mailboxId, range).select(sums).executeTakeFirstOrThrow());
      const parts = await db
        .selectFrom(
          foldedDays(workspaceId)
            .select(sums)
            .where('day', '>=', range.startDate)
            .where('day', '<=', range.endDate)
            .as('folded'),
        )
        .selectAll()
        .unionAll(
          db
            .selectFrom(
              liveDays(workspaceId)
                .select(sums)
                .where('day', '>=', range.startDate)
                .where('day', '<=', range.endDate)
                .as('live'),
            )
            .selectAll(),
        )
        .execute();
      const totals = toTotals({});
      for (const part of parts) {
        const numbers = toTotals(part);
        for (const column of TOTAL_COLUMNS) totals[column] += numbers[column];
      }
      return totals;
    },

    /** The mailboxes by status, and what the workspace sent and received on `day`: one statement for the dashboard. */
    async mailboxCounts(workspaceId: string, day: string): Promise<MailboxCounts & { sent: number; received: number }> {
      const onDay = (column: 'sent' | 'received') =>
        db
          .selectFrom('daily_stats')
          .select(total(column).as(column))
          .where('workspace_id', '=', workspaceId)
          .where('day', '=', day);
      const row = await db
        .selectFrom('mailboxes')
        .select([
          sql<number>`cast(count(*) as integer)`.as('total'),
          sql<number>`cast(coalesce(sum(case when status = 'active' then 1 else 0 end), 0) as integer)`.as('active'),
          sql<number>`cast(coalesce(sum(case when status = 'paused' then 1 else 0 end), 0) as integer)`.as('paused'),
          sql<number>`cast(coalesce(sum(case when status = 'error' then 1 else 0 end), 0) as integer)`.as('error'),
          sql<number | null>`avg(case when status = 'active' then reputation end)`.as('active_reputation'),
          onDay('sent').as('sent'),
          onDay('received').as('received'),
        ])
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirstOrThrow();
      return {
        total: Number(row.total),
        active: Number(row.active),
        paused: Number(row.paused),
        error: Number(row.error),
        activeReputation: nullableNumber(row.active_reputation),
        sent: Number(row.sent ?? 0),
        received: Number(row.received ?? 0),
      };
    },

    /**
     * Every selected mailbox with its counters summed over the range, zeros when it has no rows,
     * by email; plus where the mail it received was found. The PDF report's query, whose cost is
     * mailboxes × days: it sums each mailbox's rows of the range.
     */
    async mailboxTotals(workspaceId: string, range: DayRange, mailboxId?: string): Promise<MailboxTotals[]> {
      const sums = [...TOTAL_COLUMNS, ...RECEIVED_PLACEMENT_COUNTERS].map((column) => total(column).as(column));
      const [mailboxes, rows] = await Promise.all([
        listMailboxes(workspaceId, mailboxId),
        mailboxId !== undefined
          ? mailboxRows(workspaceId, mailboxId, range)
              .select(['mailbox_id', ...sums])
              .groupBy('mailbox_id')
              .execute()
          : db
              .selectFrom('daily_stats')
              .select(['mailbox_id', ...sums])
              .where('workspace_id', '=', workspaceId)
              .where('day', '>=', range.startDate)
              .where('day', '<=', range.endDate)
              .groupBy('mailbox_id')
              .execute(),
      ]);
      const byMailbox = new Map(rows.map((row) => [row.mailbox_id, row]));
      return mailboxes.map((mailbox) => withTotals(mailbox, byMailbox.get(mailbox.id)));
    },

    /**
     * Every selected mailbox with where its mail was found over the range and where the mail it
     * received was filed (the other counters 0), by email: the placement statistics, summed per
     * mailbox in one statement. Folded days come from the running totals
     * (interactions/workspace-rollup.ts): the mailbox's row of the range's last folded day less its
     * row of the day before the range, both primary-key lookups; the days after the workspace's
     * mark are summed live from `daily_stats`. So a range of any length costs a few rows per mailbox.
     */
    async placementTotals(workspaceId: string, range: DayRange, mailboxId?: string): Promise<MailboxPlacement[]> {
      const fold = await db
        .selectFrom('stats_folds')
        .select('through_day')
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      const mark = fold?.through_day ?? '';
      const end = range.endDate < mark ? range.endDate : mark;
      const before = addDays(range.startDate, -1);
      // whether the range has folded days at all; else the running totals are not read
      const folded = before < end;
      const onlyMailbox = (column: RawBuilder<unknown>) =>
        mailboxId === undefined ? sql`` : sql`and ${column} = ${mailboxId}`;
      const runningOn = (alias: string, day: string) =>
        folded
          ? sql`left join placement_running_totals ${sql.raw(alias)}
              on ${sql.ref(`${alias}.workspace_id`)} = ${workspaceId} and ${sql.ref(`${alias}.day`)} = ${day}
              and ${sql.ref(`${alias}.mailbox_id`)} = m.id`
          : sql``;
      // The days after the mark: usually yesterday and today, each joined by key (one index entry
      // per mailbox); a longer run (a workspace not folded yet) summed per mailbox.
      const liveStart = mark !== '' && addDays(mark, 1) > range.startDate ? addDays(mark, 1) : range.startDate;
      const liveDayList = liveStart <= range.endDate ? eachDay({ startDate: liveStart, endDate: range.endDate }) : [];
      const byKey = liveDayList.length <= 2;
      const liveAliases = byKey ? liveDayList.map((_, index) => `live${index}`) : ['live'];
      const liveJoins = byKey
        ? sql.join(
            liveDayList.map(
              (day, index) => sql`left join daily_stats ${sql.raw(`live${index}`)}
                on ${sql.ref(`live${index}.workspace_id`)} = ${workspaceId} and ${sql.ref(`live${index}.day`)} = ${day}
                and ${sql.ref(`live${index}.mailbox_id`)} = m.id`,
            ),
            sql` `,
          )
        : sql`left join (
            select mailbox_id, ${sql.join(PLACEMENT_COUNTERS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`))}
            from daily_stats
            where workspace_id = ${workspaceId} ${onlyMailbox(sql.ref('mailbox_id'))}
              and day > ${mark} and day >= ${range.startDate} and day <= ${range.endDate}
            group by mailbox_id
          ) live on live.mailbox_id = m.id`;
      const sumOf = (column: (typeof PLACEMENT_COUNTERS)[number]) => {
        const of = (alias: string) => sql`coalesce(${sql.ref(`${alias}.${column}`)}, 0)`;
        const parts = liveAliases.map(of);
        if (folded) parts.push(sql`${of('upto')} - ${of('since')}`);
        return sql`cast(${parts.length === 0 ? sql`0` : sql.join(parts, sql` + `)} as integer)`;
      };
      // One row per mailbox with only what the answer needs, all of them in one JSON value:
      // turning 10,000 rows into objects column by column costs more than the SQL (db/json-rows.ts).
      const { rows } = await sql<{ rows: unknown }>`select ${jsonRows(db, [
        sql`m.id`,
        sql`m.email`,
        sql`m.provider`,
        ...PLACEMENT_COUNTERS.map(sumOf),
      ])} as rows
        from mailboxes m
        ${runningOn('upto', end)}
        ${runningOn('since', before)}
        ${liveJoins}
        where m.workspace_id = ${workspaceId} ${onlyMailbox(sql.ref('m.id'))}`.execute(db);
      const mailboxes = jsonRowsOf<[string, string, ProviderId, ...number[]]>(rows[0]?.rows).map(
        (row): MailboxPlacement => ({
          mailboxId: row[0],
          email: row[1],
          provider: row[2],
          inbox: row[3]!,
          spam: row[4]!,
          promotions: row[5]!,
          other: row[6]!,
          receivedPlacement: { inbox: row[7]!, spam: row[8]!, promotions: row[9]!, other: row[10]! },
        }),
      );
      return mailboxes.sort(byMailboxEmail);
    },

    /** The scores recorded on `day` (for one mailbox, or every mailbox of the workspace that has one). */
    async scoresOn(workspaceId: string, day: string, mailboxId?: string): Promise<Map<string, number>> {
      let query = db
        .selectFrom('daily_stats')
        .select(['mailbox_id', 'reputation'])
        .where('workspace_id', '=', workspaceId)
        .where('day', '=', day)
        .where('reputation', 'is not', null);
      if (mailboxId !== undefined) query = query.where('mailbox_id', '=', mailboxId);
      const rows = await query.execute();
      return new Map(rows.map((row) => [row.mailbox_id, Number(row.reputation)]));
    },

    /** The last score before `day` of each of these mailboxes that has one: one primary-key seek per mailbox. */
    async lastScoresBefore(
      workspaceId: string,
      day: string,
      mailboxIds: readonly string[],
    ): Promise<Map<string, number>> {
      const scores = new Map<string, number>();
      // Chunks keep the IN list far from either dialect's parameter limit.
      for (let start = 0; start < mailboxIds.length; start += 500) {
        const rows = await db
          .selectFrom('mailboxes as m')
          .select((eb) => [
            'm.id',
            eb
              .selectFrom('daily_stats as d')
              .select('d.reputation')
              .whereRef('d.mailbox_id', '=', 'm.id')
              .where('d.day', '<', day)
              .where('d.reputation', 'is not', null)
              .orderBy('d.day', 'desc')
              .limit(1)
              .as('reputation'),
          ])
          .where('m.workspace_id', '=', workspaceId)
          .where('m.id', 'in', mailboxIds.slice(start, start + 500))
          .execute();
        for (const row of rows)
          if (row.reputation !== null && row.reputation !== undefined) scores.set(row.id, Number(row.reputation));
      }
      return scores;
    },

    /**
     * Every mailbox of the workspace with its counters of `day` (zeros without a row), its score
     * that day and the day before: the daily summary in one statement, two primary-key lookups per
     * mailbox. Unordered.
     */
    async mailboxesOnDay(workspaceId: string, day: string, dayBefore: string) {
      // Joined by (workspace, day, mailbox): on SQLite one entry of an index that holds the counters.
      const rollupOn = (alias: string, onDay: string) =>
        sql`left join daily_stats ${sql.raw(alias)} on ${sql.ref(`${alias}.workspace_id`)} = ${workspaceId}
          and ${sql.ref(`${alias}.day`)} = ${onDay} and ${sql.ref(`${alias}.mailbox_id`)} = m.id`;
      const zeroOr = (column: string) => sql`coalesce(${sql.ref(`d.${column}`)}, 0)`;
      // All the rows in one JSON value (db/json-rows.ts): 10,000 row objects cost more than the SQL.
      const { rows } = await sql<{ rows: unknown }>`select ${jsonRows(db, [
        sql`m.id`,
        sql`m.email`,
        sql`m.status`,
        ...['sent', 'received', 'inbox', 'spam', 'replied', 'promoted_to_primary'].map(zeroOr),
        sql`d.reputation`,
        sql`p.reputation`,
      ])} as rows
        from mailboxes m
        ${rollupOn('d', day)}
        ${rollupOn('p', dayBefore)}
        where m.workspace_id = ${workspaceId}`.execute(db);
      type Row = [
        string,
        string,
        MailboxStatus,
        number,
        number,
        number,
        number,
        number,
        number,
        number | null,
        number | null,
      ];
      return jsonRowsOf<Row>(rows[0]?.rows).map((row) => ({
        id: row[0],
        email: row[1],
        status: row[2],
        sent: row[3],
        received: row[4],
        inbox: row[5],
        spam: row[6],
        replied: row[7],
        promotedToPrimary: row[8],
        reputation: row[9],
        previousReputation: row[10],
      }));
    },

    /** The rollup rows of a range, unordered; days a mailbox has no row for are absent. */
    async mailboxDays(workspaceId: string, range: DayRange, mailboxId?: string): Promise<MailboxDay[]> {
      const columns = ['mailbox_id', 'day', ...DAY_COUNT_COLUMNS.map(counter), 'reputation'] as const;
      const rows =
        mailboxId !== undefined
          ? await mailboxRows(workspaceId, mailboxId, range).select(columns).execute()
          : await db
              .selectFrom('daily_stats')
              .select(columns)
              .where('workspace_id', '=', workspaceId)
              .where('day', '>=', range.startDate)
              .where('day', '<=', range.endDate)
              .execute();
      return rows.map((row) => ({
        mailboxId: row.mailbox_id,
        day: row.day,
        ...numbersOf(DAY_COUNT_COLUMNS, row),
        reputation: nullableNumber(row.reputation),
      }));
    },
  };
}

export type StatsRepository = ReturnType<typeof createStatsRepository>;
