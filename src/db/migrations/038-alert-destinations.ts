import type { Kysely } from 'kysely';

/**
 * Alerts where people are: each webhook endpoint gets a kind that says how its events are written
 * (`standard`: signed JSON as before; `slack` and `teams`: the chat's incoming-webhook format;
 * `email`: the workspace's one email alert, mailed to its owners and admins through the operator's
 * SMTP server). Every kind goes through the same outbox, so a crash loses no alert.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('standard'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('kind').execute();
}
