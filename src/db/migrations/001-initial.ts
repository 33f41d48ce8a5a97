import type { Kysely } from 'kysely';

// Written with portable types only (text, integer, real) so one migration serves SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('templates_workspace_created')
    .on('templates')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('mailboxes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('connection_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('imap', 'text', (c) => c.notNull())
    .addColumn('smtp', 'text', (c) => c.notNull())
    .addColumn('password_encrypted', 'text', (c) => c.notNull())
    .addColumn('warmup', 'text', (c) => c.notNull())
    .addColumn('reputation', 'integer', (c) => c.notNull().defaultTo(50))
    .addColumn('warmup_day', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('daily_target', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('volume_factor', 'real', (c) => c.notNull().defaultTo(1))
    .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_sync_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('mailboxes_workspace_email', ['workspace_id', 'email_normalized'])
    .execute();
  await db.schema.createIndex('mailboxes_status').on('mailboxes').columns(['status']).execute();

  await db.schema
    .createTable('warmup_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().unique())
    .addColumn('thread_id', 'text', (c) => c.notNull())
    .addColumn('sender_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('recipient_mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('turn', 'integer', (c) => c.notNull())
    .addColumn('parent_message_id', 'text')
    .addColumn('subject', 'text')
    .addColumn('body_text', 'text')
    .addColumn('body_html', 'text')
    .addColumn('template_id', 'text')
    .addColumn('plan_day', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('found_at', 'text')
    .addColumn('placement', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('warmup_messages_due').on('warmup_messages').columns(['status', 'due_at']).execute();
  await db.schema
    .createIndex('warmup_messages_recipient')
    .on('warmup_messages')
    .columns(['recipient_mailbox_id', 'status'])
    .execute();
  await db.schema
    .createIndex('warmup_messages_sender_day')
    .on('warmup_messages')
    .columns(['sender_mailbox_id', 'plan_day'])
    .execute();

  await db.schema
    .createTable('mailbox_plans')
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('warmup_day', 'integer', (c) => c.notNull())
    .addColumn('target', 'integer', (c) => c.notNull())
    .addColumn('planned', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mailbox_plans_pk', ['mailbox_id', 'day'])
    .execute();

  await db.schema
    .createTable('interactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('counterpart_mailbox_id', 'text')
    .addColumn('counterpart_email', 'text', (c) => c.notNull())
    .addColumn('counterpart_workspace_id', 'text')
    .addColumn('subject', 'text')
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('thread_id', 'text')
    .addColumn('placement', 'text')
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addUniqueConstraint('interactions_once', ['mailbox_id', 'message_id', 'type'])
    .execute();
  await db.schema
    .createIndex('interactions_mailbox_time')
    .on('interactions')
    .columns(['mailbox_id', 'occurred_at'])
    .execute();

  await db.schema
    .createTable('daily_stats')
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('received', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('inbox', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('spam', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('promotions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('other', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rescued', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('flagged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('replied', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bounced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lost', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reputation', 'integer')
    .addPrimaryKeyConstraint('daily_stats_pk', ['mailbox_id', 'day'])
    .execute();
  await db.schema.createIndex('daily_stats_workspace_day').on('daily_stats').columns(['workspace_id', 'day']).execute();

  await db.schema
    .createTable('leases')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'leases',
    'daily_stats',
    'interactions',
    'mailbox_plans',
    'warmup_messages',
    'mailboxes',
    'templates',
    'api_keys',
    'workspaces',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
