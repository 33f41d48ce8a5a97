import type { Kysely } from 'kysely';
import type { Database, WebhookEndpointRow } from '../db/schema.js';

// Every query takes the workspace id: one workspace's alert settings or people are never another's.

/** The addresses email alerts go to: the workspace's owners and admins, in a stable order. */
export async function alertRecipients(db: Kysely<Database>, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('u.email')
    .where('m.workspace_id', '=', workspaceId)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('u.email_normalized')
    .execute();
  return rows.map((row) => row.email);
}

export async function workspaceName(db: Kysely<Database>, workspaceId: string): Promise<string | undefined> {
  const row = await db.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst();
  return row?.name;
}

/** The workspace's email alert: the endpoint of kind `email`, one at most. */
export async function findEmailAlert(
  db: Kysely<Database>,
  workspaceId: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'email')
    .orderBy('created_at')
    .executeTakeFirst();
}

/** The workspace's Slack and Teams destinations, oldest first. */
export async function listChatDestinations(db: Kysely<Database>, workspaceId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', 'in', ['slack', 'teams'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The recipients of an email alert delivery whose server already took it. */
export async function alertMailSentTo(db: Kysely<Database>, deliveryId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('alert_mail_recipients')
    .select('address')
    .where('delivery_id', '=', deliveryId)
    .execute();
  return new Set(rows.map((row) => row.address));
}

/** Notes that `address`'s server took the delivery's mail (once: a second note changes nothing). */
export async function markAlertMailSent(
  db: Kysely<Database>,
  deliveryId: string,
  address: string,
  at: Date,
): Promise<void> {
  await db
    .insertInto('alert_mail_recipients')
    .values({ delivery_id: deliveryId, address, sent_at: at.toISOString() })
    .onConflict((oc) => oc.columns(['delivery_id', 'address']).doNothing())
    .execute();
}
