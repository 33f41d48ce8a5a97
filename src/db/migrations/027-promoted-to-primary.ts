import { sql, type Kysely } from 'kysely';

/**
 * A daily counter of the sender's mail that a Gmail recipient took from its tab to Primary
 * (`warmup_messages.promoted_at`, migration 022), kept like the other engagement counters: per
 * mailbox in `daily_stats`, per workspace in the folded `workspace_daily_stats`. The moves already
 * recorded are counted in on the day they happened (as far as retention kept their messages), and
 * the folded days are brought along, so the statistics agree with `promoted_at` from the start.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['daily_stats', 'workspace_daily_stats']) {
    await db.schema
      .alterTable(table)
      .addColumn('promoted_to_primary', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  // `where true` keeps SQLite from reading ON CONFLICT as a join's ON
  await sql`
    insert into daily_stats (mailbox_id, workspace_id, day, promoted_to_primary)
    select w.sender_mailbox_id, m.workspace_id, substr(w.promoted_at, 1, 10), count(*)
    from warmup_messages w join mailboxes m on m.id = w.sender_mailbox_id
    where w.promoted_at is not null
    group by w.sender_mailbox_id, m.workspace_id, substr(w.promoted_at, 1, 10)
    on conflict (mailbox_id, day) do update set promoted_to_primary = excluded.promoted_to_primary
  `.execute(db);
  await sql`
    insert into workspace_daily_stats (workspace_id, day, promoted_to_primary)
    select d.workspace_id, d.day, sum(d.promoted_to_primary)
    from daily_stats d join stats_folds f on f.workspace_id = d.workspace_id
    where d.day <= f.through_day and d.promoted_to_primary > 0
    group by d.workspace_id, d.day
    on conflict (workspace_id, day) do update set promoted_to_primary = excluded.promoted_to_primary
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspace_daily_stats').dropColumn('promoted_to_primary').execute();
  await db.schema.alterTable('daily_stats').dropColumn('promoted_to_primary').execute();
}
