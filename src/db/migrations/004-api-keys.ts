import { sql, type Kysely } from 'kysely';

/**
 * What an operator needs to manage keys without ever seeing one again: a short `prefix` to
 * recognise a key by (unknown for keys made before this migration), when it was `last_used_at`
 * (written at most once a minute per key), and its `origin`: `bootstrap` for the key that
 * WARMUP_API_KEY makes (replaced when that setting changes), `issued` for every other key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('prefix', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'text').execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('issued'))
    .execute();
  // Before this migration the bootstrap key was the `default` workspace's key named `bootstrap`.
  await sql`update api_keys set origin = 'bootstrap' where workspace_id = 'ws_default' and name = 'bootstrap'`.execute(
    db,
  );
  await db.schema.createIndex('api_keys_workspace').on('api_keys').column('workspace_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_workspace').execute();
  for (const column of ['origin', 'last_used_at', 'prefix']) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}
