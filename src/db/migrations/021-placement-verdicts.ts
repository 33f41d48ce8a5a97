import type { Kysely } from 'kysely';

/**
 * What the receiving side thought of each placement-test copy found, read from its own
 * Authentication-Results and spam reports the way the reader reads warmup mail
 * (verdicts/receiver-verdict.ts): null where the receiver said nothing, or the copy was not found.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('placement_test_copies').addColumn('authserv_id', 'text').execute();
  for (const column of ['spf', 'dkim', 'dmarc', 'arc'] as const) {
    await db.schema.alterTable('placement_test_copies').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('placement_test_copies').addColumn('scl', 'integer').execute();
  await db.schema.alterTable('placement_test_copies').addColumn('bcl', 'integer').execute();
  await db.schema.alterTable('placement_test_copies').addColumn('spam_score', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['authserv_id', 'spf', 'dkim', 'dmarc', 'arc', 'scl', 'bcl', 'spam_score']) {
    await db.schema.alterTable('placement_test_copies').dropColumn(column).execute();
  }
}
