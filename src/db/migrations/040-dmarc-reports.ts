import type { Kysely } from 'kysely';

/**
 * DMARC aggregate reports (RFC 7489 `rua`), read from a folder of one of the workspace's mailboxes:
 * where they come from (one source per workspace, with the folder's UID mark so each message is
 * looked at once), each report kept once (unique per workspace, reporting organisation and report
 * id, so a report sent or read twice counts once), its rows, and the report mail set aside with
 * the reason it could not be read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dmarc_sources')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('folder', 'text', (c) => c.notNull())
    // the folder's UIDVALIDITY and the highest UID looked at: a new UIDVALIDITY starts again from 0
    .addColumn('uid_validity', 'text')
    .addColumn('last_uid', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('checked_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dmarc_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('org_name', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('begin_at', 'text', (c) => c.notNull())
    .addColumn('end_at', 'text', (c) => c.notNull())
    // the day its rows count on: the UTC day the report's range begins
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('policy_p', 'text')
    .addColumn('policy_sp', 'text')
    .addColumn('policy_pct', 'integer')
    .addColumn('policy_adkim', 'text')
    .addColumn('policy_aspf', 'text')
    .addColumn('records', 'integer', (c) => c.notNull())
    .addColumn('messages', 'integer', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('dmarc_reports_once', ['workspace_id', 'org_name', 'report_id'])
    .execute();
  await db.schema
    .createIndex('dmarc_reports_by_domain')
    .on('dmarc_reports')
    .columns(['workspace_id', 'domain', 'day'])
    .execute();

  await db.schema
    .createTable('dmarc_records')
    .addColumn('report_id', 'text', (c) => c.notNull().references('dmarc_reports.id').onDelete('cascade'))
    .addColumn('row_no', 'integer', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    // the source's reverse name, when one was looked up (left null otherwise)
    .addColumn('source_name', 'text')
    .addColumn('messages', 'integer', (c) => c.notNull())
    .addColumn('disposition', 'text', (c) => c.notNull())
    .addColumn('dkim_aligned', 'text', (c) => c.notNull())
    .addColumn('spf_aligned', 'text', (c) => c.notNull())
    .addColumn('dkim_result', 'text')
    .addColumn('spf_result', 'text')
    .addColumn('header_from', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dmarc_records_pk', ['report_id', 'row_no'])
    .execute();

  await db.schema
    .createTable('dmarc_set_aside')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('found_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dmarc_set_aside_by_workspace')
    .on('dmarc_set_aside')
    .columns(['workspace_id', 'found_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dmarc_set_aside').execute();
  await db.schema.dropTable('dmarc_records').execute();
  await db.schema.dropTable('dmarc_reports').execute();
  await db.schema.dropTable('dmarc_sources').execute();
}
