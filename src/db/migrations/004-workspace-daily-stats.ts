import { sql, type Kysely } from 'kysely';

/*
 * The workspace's daily figures: `daily_stats` summed over a workspace's mailboxes, one row per
 * workspace per day, as a VIEW. An earlier version kept it as a table moved by triggers on
 * `daily_stats`; on PostgreSQL that put one hot row per workspace and day into every engine
 * transaction, between the locks of two mailboxes' rows, and several workers deadlocked on it
 * (a deadlock while a send was being recorded meant that message was sent again). A view is
 * exact by construction, takes no lock and costs nothing on the write path; the price is that a
 * workspace-wide query sums mailboxes × days rollup rows (see BENCHMARKS.md). The reputation of a
 * day is a sum and a count of the mailboxes scored that day, so its mean is over those mailboxes.
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

export async function up(db: Kysely<unknown>): Promise<void> {
  const sums = COUNTERS.map((c) => `cast(sum(${c}) as integer) as ${c}`).join(', ');
  await sql
    .raw(
      `create view workspace_daily_stats as
       select workspace_id, day, ${sums},
              cast(coalesce(sum(reputation), 0) as integer) as reputation_sum,
              cast(count(reputation) as integer) as reputation_count
       from daily_stats group by workspace_id, day`,
    )
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('drop view workspace_daily_stats').execute(db);
}
