import type { Kysely } from 'kysely';

/**
 * OAuth 2.0 mailboxes (Google, Microsoft, a generic provider): which provider signs a mailbox in,
 * its refresh token and current access token (both AES-256-GCM like passwords, never returned),
 * and the short-lived `state` of each consent flow, which binds a callback to the workspace that
 * started it and is used at most once.
 */
const MAILBOX_COLUMNS = [
  'oauth_provider',
  'refresh_token_encrypted',
  'access_token_encrypted',
  'access_token_expires_at',
];

// One column per ALTER statement: SQLite cannot add several columns in one statement.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of MAILBOX_COLUMNS) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  await db.schema
    .createTable('oauth_states')
    // SHA-256 of the state the browser carries: a leaked database row cannot finish a flow
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    // set when the flow reconnects an existing mailbox
    .addColumn('mailbox_id', 'text')
    .addColumn('code_verifier_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_states_expires_at').on('oauth_states').columns(['expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_states').execute();
  for (const column of [...MAILBOX_COLUMNS].reverse()) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
}
