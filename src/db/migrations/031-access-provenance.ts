import type { Kysely } from 'kysely';

/**
 * Who made each API key and each workspace. Access ends when membership ends: removing a person
 * revokes the keys they made, a demotion caps them at the new role, and the number of workspaces a
 * person may make is counted. Rows older than this migration record nobody (null).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
  await db.schema.alterTable('workspaces').addColumn('created_by', 'text').execute();
  await db.schema.createIndex('api_keys_created_by').on('api_keys').columns(['created_by']).execute();
  await db.schema.createIndex('invites_created_by').on('invites').columns(['created_by']).execute();
  await db.schema.createIndex('workspaces_created_by').on('workspaces').columns(['created_by']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('workspaces_created_by').execute();
  await db.schema.dropIndex('invites_created_by').execute();
  await db.schema.dropIndex('api_keys_created_by').execute();
  await db.schema.alterTable('workspaces').dropColumn('created_by').execute();
  await db.schema.alterTable('api_keys').dropColumn('created_by').execute();
}
