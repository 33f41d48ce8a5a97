import type { Kysely } from 'kysely';

/**
 * Mail between peers. A peer's participating addresses are kept as stand-in mailboxes (status
 * `peer`, no credentials) in a workspace of their own per peer, so the planner, the pair rules,
 * the capacity model and `warmup_messages` treat them as partners unchanged, and the evidence
 * rules see each peer as one party. A message to a stand-in leaves only once the peer accepted
 * its announcement (`peer_announced_at`), and counts against the peer's ceiling on the UTC day
 * it was announced for (`peer_day`, kept if the message moves later); what we found of a peer's mail is reported back once
 * per change (`peer_reported`). The peer row keeps the ceiling it gives us and why it was
 * paused automatically.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('peer_id', 'text').execute();
  await db.schema.alterTable('mailboxes').addColumn('peer_id', 'text').execute();
  await db.schema.createIndex('mailboxes_peer').on('mailboxes').columns(['peer_id', 'email_normalized']).execute();
  await db.schema.alterTable('warmup_messages').addColumn('peer_announced_at', 'text').execute();
  await db.schema.alterTable('warmup_messages').addColumn('peer_day', 'text').execute();
  await db.schema.alterTable('warmup_messages').addColumn('peer_reported', 'text').execute();
  await db.schema.alterTable('peers').addColumn('their_ceiling', 'integer').execute();
  await db.schema.alterTable('peers').addColumn('offer_fetched_at', 'text').execute();
  await db.schema.alterTable('peers').addColumn('paused_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['paused_reason', 'offer_fetched_at', 'their_ceiling'])
    await db.schema.alterTable('peers').dropColumn(column).execute();
  for (const column of ['peer_reported', 'peer_day', 'peer_announced_at'])
    await db.schema.alterTable('warmup_messages').dropColumn(column).execute();
  await db.schema.dropIndex('mailboxes_peer').execute();
  await db.schema.alterTable('mailboxes').dropColumn('peer_id').execute();
  await db.schema.alterTable('workspaces').dropColumn('peer_id').execute();
}
