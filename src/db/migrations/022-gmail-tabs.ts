import type { Kysely } from 'kysely';

/**
 * Gmail's tab of a warmup message found in a Gmail INBOX (primary, promotions, updates, social,
 * forums; null: not a Gmail mailbox, or not in INBOX), and when the recipient took it from its tab
 * to Primary and Gmail showed the change (a rescue from Promotions, not from spam).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('warmup_messages').addColumn('gmail_category', 'text').execute();
  await db.schema.alterTable('warmup_messages').addColumn('promoted_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('warmup_messages').dropColumn('promoted_at').execute();
  await db.schema.alterTable('warmup_messages').dropColumn('gmail_category').execute();
}
