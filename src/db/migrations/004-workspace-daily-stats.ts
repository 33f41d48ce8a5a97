import { PostgresAdapter, sql, type Kysely } from 'kysely';

/*
 * The workspace's daily rollup: `daily_stats` summed over a workspace's mailboxes, one row per
 * workspace per day. Workspace-wide statistics (dashboard, analytics, reputation, engagement)
 * then read one row per day instead of one per mailbox per day: summing 1,000 mailboxes × 90 days
 * of `daily_stats` on every request costs 30–100 ms; this costs well under a millisecond.
 *
 * Triggers on `daily_stats` keep it exact: every insert, update and delete of a mailbox's row
 * moves the workspace's row by the difference, in the same transaction — whoever writes (the
 * engine's recordInteraction and recordReputation, a bulk import) and including the cascade when
 * a mailbox is deleted, whose history then leaves the workspace's figures as it leaves the
 * per-mailbox ones. The reputation of a day is kept as a sum and a count of the mailboxes scored
 * that day, so its mean is the mean of the mailboxes that have a score.
 */

const COUNTERS = [
  'sent',
  'received',
  'inbox',
  'spam',
  'promotions',
  'other',
  'rescued',
  'opened',
  'flagged',
  'replied',
  'bounced',
  'failed',
  'lost',
  'received_inbox',
  'received_spam',
  'received_promotions',
  'received_other',
];

const columns = ['workspace_id', 'day', ...COUNTERS, 'reputation_sum', 'reputation_count'].join(', ');

/** The VALUES of a change: each counter's difference, and the reputation's. `old`/`row` are null on insert/delete. */
function changeValues(row: string, old: string | null, scored: (ref: string) => string): string {
  const delta = (column: string) => (old ? `${row}.${column} - ${old}.${column}` : `${row}.${column}`);
  const reputation = old ? `coalesce(${row}.reputation, 0) - coalesce(${old}.reputation, 0)` : `coalesce(${row}.reputation, 0)`;
  const count = old ? `${scored(row)} - ${scored(old)}` : scored(row);
  return `(${row}.workspace_id, ${row}.day, ${COUNTERS.map(delta).join(', ')}, ${reputation}, ${count})`;
}

const ADD_ON_CONFLICT = `on conflict (workspace_id, day) do update set ${[...COUNTERS, 'reputation_sum', 'reputation_count']
  .map((c) => `${c} = workspace_daily_stats.${c} + excluded.${c}`)
  .join(', ')}`;

function subtractRow(old: string, scored: (ref: string) => string): string {
  const sets = [...COUNTERS.map((c) => `${c} = ${c} - ${old}.${c}`), `reputation_sum = reputation_sum - coalesce(${old}.reputation, 0)`, `reputation_count = reputation_count - ${scored(old)}`];
  return `update workspace_daily_stats set ${sets.join(', ')} where workspace_id = ${old}.workspace_id and day = ${old}.day`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  let table = db.schema
    .createTable('workspace_daily_stats')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull());
  for (const counter of [...COUNTERS, 'reputation_sum', 'reputation_count']) table = table.addColumn(counter, 'integer', (c) => c.notNull().defaultTo(0));
  await table.addPrimaryKeyConstraint('workspace_daily_stats_pk', ['workspace_id', 'day']).execute();

  // Existing history first, then the triggers keep it up to date.
  await sql
    .raw(
      `insert into workspace_daily_stats (${columns})
       select workspace_id, day, ${COUNTERS.map((c) => `sum(${c})`).join(', ')}, coalesce(sum(reputation), 0), count(reputation)
       from daily_stats group by workspace_id, day`,
    )
    .execute(db);

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const scored = (ref: string) => `(case when ${ref}.reputation is null then 0 else 1 end)`;
    await sql
      .raw(
        `create function workspace_daily_stats_apply() returns trigger language plpgsql as $$
         begin
           if tg_op = 'INSERT' then
             insert into workspace_daily_stats (${columns}) values ${changeValues('new', null, scored)} ${ADD_ON_CONFLICT};
           elsif tg_op = 'UPDATE' then
             insert into workspace_daily_stats (${columns}) values ${changeValues('new', 'old', scored)} ${ADD_ON_CONFLICT};
           else
             ${subtractRow('old', scored)};
           end if;
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw('create trigger daily_stats_to_workspace after insert or update or delete on daily_stats for each row execute function workspace_daily_stats_apply()')
      .execute(db);
    return;
  }
  const scored = (ref: string) => `(${ref}.reputation is not null)`;
  await sql
    .raw(`create trigger daily_stats_insert_to_workspace after insert on daily_stats begin
            insert into workspace_daily_stats (${columns}) values ${changeValues('new', null, scored)} ${ADD_ON_CONFLICT}; end`)
    .execute(db);
  await sql
    .raw(`create trigger daily_stats_update_to_workspace after update on daily_stats begin
            insert into workspace_daily_stats (${columns}) values ${changeValues('new', 'old', scored)} ${ADD_ON_CONFLICT}; end`)
    .execute(db);
  await sql.raw(`create trigger daily_stats_delete_to_workspace after delete on daily_stats begin ${subtractRow('old', scored)}; end`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql.raw('drop trigger daily_stats_to_workspace on daily_stats').execute(db);
    await sql.raw('drop function workspace_daily_stats_apply()').execute(db);
  } else {
    for (const name of ['daily_stats_insert_to_workspace', 'daily_stats_update_to_workspace', 'daily_stats_delete_to_workspace']) {
      await sql.raw(`drop trigger ${name}`).execute(db);
    }
  }
  await db.schema.dropTable('workspace_daily_stats').execute();
}
