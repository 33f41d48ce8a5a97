import type { Kysely } from 'kysely';

/**
 * The address the engine's IMAP client last connected to for a mailbox (engine/reader.ts): which
 * mail server the mailbox actually lives on, whatever its domain or host name says. The pool's
 * trust rule (engine/evidence.ts) counts receivers on one server as one voice. Null: not synced
 * since this column came.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').addColumn('imap_address', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('imap_address').execute();
}
