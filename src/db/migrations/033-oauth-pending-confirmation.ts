import type { Kysely } from 'kysely';

/**
 * A mailbox OAuth flow started with an API key is not connected at its callback: anyone can open
 * a consent link, so the tokens wait here, encrypted, until a signed-in member of the workspace
 * confirms (or cancels) on the dashboard. Each row lives ten minutes and is used at most once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_confirmations')
    // SHA-256 of the id in the confirmation link: a leaked database row names no link
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('mailbox_id', 'text')
    // the address the provider reported: what the member is asked to confirm
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('tokens_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('oauth_confirmations_expires_at')
    .on('oauth_confirmations')
    .columns(['expires_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oauth_confirmations').execute();
}
