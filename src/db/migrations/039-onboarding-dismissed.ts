import type { Kysely } from 'kysely';

/**
 * The overview's onboarding checklist can be put away by an owner or admin: when, per workspace, so
 * every member stops seeing it. A column rather than a table, since it is one more workspace setting.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('onboarding_dismissed_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('onboarding_dismissed_at').execute();
}
