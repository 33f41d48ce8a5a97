import type { Kysely } from 'kysely';

/**
 * The providers' own feeds: a workspace's connection to Microsoft SNDS (its data access key) and to
 * Gmail Postmaster Tools (its Google grant and domains), what each reports per day (unique per
 * address or domain and day, so a day fetched twice is stored once), feed rows that could not be
 * read, and the holds the health guard puts on a domain from them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('feed_connections')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('feed', 'text', (c) => c.notNull())
    .addColumn('secret_encrypted', 'text')
    .addColumn('domains', 'text')
    .addColumn('checked_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('fetched_day', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('feed_connections_pk', ['workspace_id', 'feed'])
    .execute();

  await db.schema
    .createTable('snds_days')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('filter_result', 'text', (c) => c.notNull())
    .addColumn('complaint_rate', 'text', (c) => c.notNull())
    .addColumn('complaint_rate_max', 'real')
    .addColumn('trap_hits', 'integer', (c) => c.notNull())
    .addColumn('rcpt_commands', 'integer', (c) => c.notNull())
    .addColumn('data_commands', 'integer', (c) => c.notNull())
    .addColumn('message_recipients', 'integer', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('snds_days_pk', ['workspace_id', 'ip', 'day'])
    .execute();

  await db.schema
    .createTable('postmaster_days')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('spam_rate', 'real')
    .addColumn('compliance', 'text')
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('postmaster_days_pk', ['workspace_id', 'domain', 'day'])
    .execute();

  await db.schema
    .createTable('feed_set_aside')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('feed', 'text', (c) => c.notNull())
    .addColumn('row_text', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('found_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('feed_set_aside_by_workspace')
    .on('feed_set_aside')
    .columns(['workspace_id', 'feed', 'found_at'])
    .execute();

  // an OAuth consent (oauth_states) that ends in a Postmaster connection of these domains, not a mailbox
  await db.schema
    .createTable('feed_oauth_flows')
    .addColumn('id', 'text', (c) => c.primaryKey().references('oauth_states.id').onDelete('cascade'))
    .addColumn('domains', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('provider_holds')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('signal', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('since', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('provider_holds_pk', ['workspace_id', 'domain'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('provider_holds').execute();
  await db.schema.dropTable('feed_oauth_flows').execute();
  await db.schema.dropTable('feed_set_aside').execute();
  await db.schema.dropTable('postmaster_days').execute();
  await db.schema.dropTable('snds_days').execute();
  await db.schema.dropTable('feed_connections').execute();
}
