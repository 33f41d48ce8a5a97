import type { Kysely } from 'kysely';

/**
 * Sign-in through the operator's OpenID Connect provider: one short-lived row per started flow,
 * found by the SHA-256 of its `state`, bound to the browser that started it (the SHA-256 of a
 * cookie only that browser holds) and deleted by the first callback that names it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oidc_sign_ins')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('code_verifier_encrypted', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    // set when the flow accepts an invite: the SHA-256 of its link token, like invites.token_hash
    .addColumn('invite_token_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_sign_ins_expires_at').on('oidc_sign_ins').columns(['expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oidc_sign_ins').execute();
}
