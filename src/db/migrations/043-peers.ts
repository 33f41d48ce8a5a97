import type { Kysely } from 'kysely';

/**
 * Peering: this installation's Ed25519 identity (one row, its private key encrypted with the
 * installation's secret key), the installations it peers with (two-sided: `pending` until the
 * peer's signed handshake shows it added us too), and the nonces of the signed requests seen
 * lately, kept in the database so that every process refuses a replay alike.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('peer_identity')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('peers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    // base64url of the 32 raw bytes: also the keyid of the peer's signatures
    .addColumn('public_key', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('offer_domains', 'text', (c) => c.notNull())
    .addColumn('offer_mailboxes', 'integer', (c) => c.notNull())
    .addColumn('daily_ceiling', 'integer', (c) => c.notNull())
    .addColumn('handshake_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('peer_nonces')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('peer_nonces_pk', ['key_id', 'nonce'])
    .execute();
  await db.schema.createIndex('peer_nonces_expires').on('peer_nonces').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('peer_nonces').execute();
  await db.schema.dropTable('peers').execute();
  await db.schema.dropTable('peer_identity').execute();
}
