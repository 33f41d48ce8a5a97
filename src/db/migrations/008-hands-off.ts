import type { Kysely } from 'kysely';

/**
 * Hands off the owner's mail:
 * - `auto_reply_at`: when an automatic reply of the mailbox (out of office, vacation) to warmup
 *   mail was last seen; while recent, partner choice sends it no warmup mail.
 * - `warmup_folder_pruned_at`: when the Warmup folder last had its old warmup mail removed.
 * - `answers_scanned_at`: when its folders were last searched for answers to its warmup mail.
 * - `mail_scan_marks`: per mailbox and folder, the UIDVALIDITY and the highest UID already
 *   scanned for delivery reports, so each report is downloaded once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per ALTER statement: SQLite cannot add several columns in one statement.
  for (const column of ['auto_reply_at', 'warmup_folder_pruned_at', 'answers_scanned_at']) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  await db.schema
    .createTable('mail_scan_marks')
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('folder', 'text', (c) => c.notNull())
    .addColumn('uid_validity', 'text', (c) => c.notNull())
    .addColumn('last_uid', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mail_scan_marks_pk', ['mailbox_id', 'folder'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_scan_marks').execute();
  for (const column of ['answers_scanned_at', 'warmup_folder_pruned_at', 'auto_reply_at']) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
}
