import { sql, type Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Database } from '../db/schema.js';
import { TOTAL_COLUMNS } from '../stats/stats.schemas.js';
import { PLACEMENTS } from './interactions.schemas.js';

/*
 * The workspace-level daily rollup: finished UTC days of `daily_stats` summed per workspace into
 * `workspace_daily_stats`, by a job the engine runs under a lease, off its write path. Workspace-wide statistics
 * read the folded days from it (one row per day instead of one per mailbox) and sum the days after
 * the workspace's last folded one live. A day is folded once it is FOLD_AFTER_DAYS old, when no
 * interaction is counted on it any more (counters move on the UTC day the interaction happens).
 * Deleting a mailbox takes its rows out of `daily_stats`; `forgetFolds` then sends its workspace
 * back to live sums until the job has folded it again.
 */

/** Yesterday stays live too: a worker whose clock is a little behind may still count on it. */
export const FOLD_AFTER_DAYS = 2;
/** Workspaces brought up to date per run at most, so a run never holds the lease for long. */
export const FOLD_WORKSPACES_PER_RUN = 50;

/** The counters kept per workspace and day: what the workspace-wide statistics sum, under their rollup names. */
export const WORKSPACE_COUNTERS = TOTAL_COLUMNS.map((counter) => rollupColumn(counter));

/**
 * A counter's rollup column as a type (`promotedToPrimary` → `promoted_to_primary`), so that a
 * counter the tables lack fails to compile rather than to query.
 */
export type RollupColumn<Counter extends string> = Counter extends `${infer Letter}${infer Rest}`
  ? `${Letter extends Lowercase<Letter> ? Letter : `_${Lowercase<Letter>}`}${RollupColumn<Rest>}`
  : Counter;

/**
 * The rollup column of a counter: the API names counters in camelCase (`promotedToPrimary`), the
 * rollup tables in snake_case (`promoted_to_primary`); one-word names are the same in both.
 */
export function rollupColumn<Counter extends string>(counter: Counter): RollupColumn<Counter> {
  return counter.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) as RollupColumn<Counter>;
}

export interface FoldSummary {
  /** Workspaces brought up to date by this run. */
  workspaces: number;
  /** The day they are folded through. */
  throughDay: string;
}

/**
 * Brings the rollup of up to FOLD_WORKSPACES_PER_RUN workspaces up to the last finished day, one
 * transaction per workspace: its rows of the days after its mark are replaced by fresh sums of
 * `daily_stats` (all its history the first time) and the mark moves on.
 */
export async function foldFinishedDays(db: Kysely<Database>, now: Date): Promise<FoldSummary> {
  const throughDay = addDays(utcDay(now), -FOLD_AFTER_DAYS);
  {
    const behind = await db
      .selectFrom('workspaces as w')
      .leftJoin('stats_folds as f', 'f.workspace_id', 'w.id')
      .select(['w.id', 'f.through_day'])
      .where((eb) => eb.or([eb('f.through_day', 'is', null), eb('f.through_day', '<', throughDay)]))
      .orderBy('w.id')
      .limit(FOLD_WORKSPACES_PER_RUN)
      .execute();
    for (const { id, through_day: after } of behind) {
      await db.transaction().execute(async (trx) => {
        let stale = trx.deleteFrom('workspace_daily_stats').where('workspace_id', '=', id);
        if (after !== null) stale = stale.where('day', '>', after);
        await stale.execute();
        let days = trx
          .selectFrom('daily_stats')
          .select([
            'workspace_id',
            'day',
            ...WORKSPACE_COUNTERS.map((c) => sql<number>`coalesce(sum(${sql.ref(c)}), 0)`.as(c)),
            sql<number>`coalesce(sum(reputation), 0)`.as('reputation_sum'),
            sql<number>`count(reputation)`.as('reputation_count'),
          ])
          .where('workspace_id', '=', id)
          .where('day', '<=', throughDay);
        if (after !== null) days = days.where('day', '>', after);
        await trx
          .insertInto('workspace_daily_stats')
          .columns(['workspace_id', 'day', ...WORKSPACE_COUNTERS, 'reputation_sum', 'reputation_count'])
          .expression(days.groupBy(['workspace_id', 'day']))
          .execute();
        let staleTotals = trx.deleteFrom('placement_running_totals').where('workspace_id', '=', id);
        if (after !== null) staleTotals = staleTotals.where('day', '>', after);
        await staleTotals.execute();
        await foldPlacementTotals(trx, id, after ?? '', throughDay);
        await trx
          .insertInto('stats_folds')
          .values({ workspace_id: id, through_day: throughDay })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ through_day: throughDay }))
          .execute();
      });
    }
    return { workspaces: behind.length, throughDay };
  }
}

/** Where the mail a mailbox received was filed: a `daily_stats` counter per placement (migration 003). */
export const RECEIVED_PLACEMENT_COUNTERS = PLACEMENTS.map((placement) => `received_${placement}` as const);

/** The placement counters kept as running totals per mailbox (`placement_running_totals`, migration 024). */
export const PLACEMENT_COUNTERS = [...PLACEMENTS, ...RECEIVED_PLACEMENT_COUNTERS];

/**
 * Appends the workspace's days in (after, throughDay] to its mailboxes' running placement totals,
 * a day at a time: each mailbox's row of the day before plus its `daily_stats` row of the day, for
 * every mailbox that has either. So every mailbox has a row on every folded day from its first
 * one on, and a range reads two rows per mailbox by key. The first fold starts at the workspace's
 * first day of statistics.
 */
async function foldPlacementTotals(
  trx: Kysely<Database>,
  workspaceId: string,
  after: string,
  throughDay: string,
): Promise<void> {
  let day = after;
  if (day === '') {
    const first = await trx
      .selectFrom('daily_stats')
      .select((eb) => eb.fn.min('day').as('day'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!first?.day) return;
    day = addDays(first.day, -1);
  }
  const columns = sql.join(PLACEMENT_COUNTERS.map((c) => sql.ref(c)));
  const sums = sql.join(PLACEMENT_COUNTERS.map((c) => sql`sum(${sql.ref(c)})`));
  while (day < throughDay) {
    const previous = day;
    day = addDays(day, 1);
    await sql`
      insert into placement_running_totals (workspace_id, day, mailbox_id, ${columns})
      select cast(${workspaceId} as text), cast(${day} as text), mailbox_id, ${sums}
      from (
        select mailbox_id, ${columns} from placement_running_totals where workspace_id = ${workspaceId} and day = ${previous}
        union all
        select mailbox_id, ${columns} from daily_stats where workspace_id = ${workspaceId} and day = ${day}
      ) moved
      group by mailbox_id
    `.execute(trx);
  }
}

/**
 * Sends a workspace's statistics back to live sums (its folded days no longer match `daily_stats`,
 * e.g. a mailbox and its rollups were deleted); the next fold rebuilds it. Call it in the
 * transaction that changed the history.
 */
export async function forgetFolds(db: Kysely<Database>, workspaceId: string): Promise<void> {
  await db.deleteFrom('stats_folds').where('workspace_id', '=', workspaceId).execute();
  await db.deleteFrom('workspace_daily_stats').where('workspace_id', '=', workspaceId).execute();
  await db.deleteFrom('placement_running_totals').where('workspace_id', '=', workspaceId).execute();
}
