import type { Kysely } from 'kysely';

/**
 * People, not only keys: `users` (email unique case-insensitively through `email_normalized`, a
 * scrypt password hash), their `memberships` of workspaces with a role, browser `sessions` (only a
 * hash of the session token; the CSRF token bound to the session), `invites` (a hash of the link's
 * token, expiring, single-use), and `installation`: one row once the first owner exists, so two
 * browsers racing through the first-run setup create one owner. Every existing API key becomes an
 * `admin` key: before roles a key could do everything an admin can. A mailbox OAuth flow remembers
 * the browser session that started it (`oauth_states.session_id`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'workspace_id'])
    .execute();
  await db.schema.createIndex('memberships_workspace').on('memberships').columns(['workspace_id', 'role']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('set null'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id', 'workspace_id']).execute();
  await db.schema.createIndex('sessions_expiry').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('invites_workspace').on('invites').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('installation')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('owner_user_id', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('set_up_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .alterTable('api_keys')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('admin'))
    .execute();

  // A mailbox OAuth flow started in a browser session finishes only in that session.
  await db.schema
    .alterTable('oauth_states')
    .addColumn('session_id', 'text', (c) => c.references('sessions.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_states').dropColumn('session_id').execute();
  await db.schema.alterTable('api_keys').dropColumn('role').execute();
  for (const table of ['installation', 'invites', 'sessions', 'memberships', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
