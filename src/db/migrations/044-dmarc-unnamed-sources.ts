import { sql, type Kysely } from 'kysely';

/**
 * The `dmarcNames` job looks for the report sources whose reverse name was not asked yet every
 * 15 minutes: a partial index of those rows alone, so each pass reads the few new ones, not every
 * record ever kept.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('dmarc_records_unnamed')
    .on('dmarc_records')
    .column('source_ip')
    .where(sql.ref('source_name'), 'is', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('dmarc_records_unnamed').execute();
}
