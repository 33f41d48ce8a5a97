import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Growth kept in check, and placement statistics read from a rollup.
 *
 * - `placement_running_totals`: per mailbox and folded UTC day, where its mail was found (inbox,
 *   spam, promotions, other) and where the mail it received was filed, summed from its first day
 *   through that day; a row every day from its first on. A range of any length is then two rows
 *   per mailbox (the totals at its end minus those the day before it), so the placement
 *   statistics no longer sum mailboxes × days. Folded with the workspace rollup
 *   (interactions/workspace-rollup.ts), never by the engine.
 * - `interactions(day)` and `warmup_messages(thread_id)`: the retention (engine/retention.ts) finds
 *   the oldest interactions by day, and removes a message only with the rest of its thread.
 * - `receiver_verdicts` no longer cascades from `warmup_messages`: a verdict is the statistics'
 *   own record of what a receiver thought, and must outlive the message that retention removes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // Keyed by (workspace, day, mailbox): a range's end is one contiguous run of rows for the whole
  // workspace. No key on the mailbox: deleting one refolds its workspace (forgetFolds), and rows of
  // a mailbox that is gone are never read.
  let table = db.schema
    .createTable('placement_running_totals')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('mailbox_id', 'text', (c) => c.notNull());
  for (const column of PLACEMENT_COUNTERS) table = table.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0));
  table = table.addPrimaryKeyConstraint('placement_running_totals_pk', ['workspace_id', 'day', 'mailbox_id']);
  // SQLite: the rows live in the key's own tree, so reading a day's rows is one sequential walk
  await (postgres ? table : table.modifyEnd(sql`without rowid`)).execute();

  await db.schema.createIndex('interactions_day').on('interactions').column('day').execute();
  await db.schema.createIndex('warmup_messages_thread').on('warmup_messages').column('thread_id').execute();

  if (postgres) {
    const { rows } = await sql<{ name: string }>`
      select conname as name from pg_constraint
      where conrelid = 'receiver_verdicts'::regclass and confrelid = 'warmup_messages'::regclass and contype = 'f'`.execute(
      db,
    );
    for (const { name } of rows) await sql`alter table receiver_verdicts drop constraint ${sql.id(name)}`.execute(db);
  } else {
    await rebuildSqliteVerdictsWithoutMessageKey(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('warmup_messages_thread').execute();
  await db.schema.dropIndex('interactions_day').execute();
  await db.schema.dropTable('placement_running_totals').execute();
  // Verdicts whose message is gone would break the foreign key: they go with it.
  await sql`delete from receiver_verdicts where warmup_message_id not in (select id from warmup_messages)`.execute(db);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table receiver_verdicts add foreign key (warmup_message_id) references warmup_messages (id) on delete cascade`.execute(
      db,
    );
  }
  // On SQLite the table stays without the key: rebuilding it back gains nothing.
}

/** The counters kept as running totals (see stats/stats.repository.ts `placementTotals`). */
const PLACEMENT_COUNTERS = [
  'inbox',
  'spam',
  'promotions',
  'other',
  'received_inbox',
  'received_spam',
  'received_promotions',
  'received_other',
] as const;

/**
 * SQLite cannot drop a foreign key: the table is made again from its own definition (whatever
 * columns it has by now) without the reference to `warmup_messages`, its rows copied, and its
 * indexes made again. Nothing references the verdicts, so dropping the old table checks nothing.
 */
async function rebuildSqliteVerdictsWithoutMessageKey(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = 'receiver_verdicts'`.execute(db);
  const definition = rows.find((row) => row.type === 'table')?.sql;
  if (!definition) throw new Error('receiver_verdicts has no definition');
  const reference = /\s+references\s+"?warmup_messages"?\s*\(\s*"?id"?\s*\)(\s+on\s+delete\s+cascade)?/i;
  if (!reference.test(definition)) return;
  const created = definition
    .replace(reference, '')
    .replace(/^create table\s+"?receiver_verdicts"?/i, 'create table "receiver_verdicts_024"');
  await sql.raw(created).execute(db);
  await sql`insert into receiver_verdicts_024 select * from receiver_verdicts`.execute(db);
  await sql`drop table receiver_verdicts`.execute(db);
  await sql`alter table receiver_verdicts_024 rename to receiver_verdicts`.execute(db);
  for (const index of rows.filter((row) => row.type === 'index' && row.sql !== null))
    await sql.raw(index.sql!).execute(db);
}
