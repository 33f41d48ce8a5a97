import { sql, type Kysely } from 'kysely';

/** "Due at once": a new or migrated mailbox is synced and judged in the next cycle. */
export const DUE_AT_ONCE = '1970-01-01T00:00:00.000Z';

/**
 * Work is claimed, not scanned. Each mailbox carries the time its next sync is due (set when mail
 * is sent to it, after each sync, on resume), and the sync's claim (owner and until when) that keeps
 * two workers from reading one mailbox at once; a claim left by a dead worker runs out after the
 * lease. Reputation and the health guard each have a due time too (once a day, or at once when the
 * mailbox's evidence changed). Each due time is indexed after the status, so a cycle reads the
 * due active ones and nothing of the idle, paused or broken ones.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per ALTER statement: SQLite cannot add several columns in one statement.
  for (const column of ['sync_due_at', 'reputation_due_at', 'health_due_at']) {
    await db.schema
      .alterTable('mailboxes')
      .addColumn(column, 'text', (c) => c.notNull().defaultTo(DUE_AT_ONCE))
      .execute();
  }
  for (const column of ['sync_owner', 'sync_claimed_until']) {
    await db.schema.alterTable('mailboxes').addColumn(column, 'text').execute();
  }
  // (status, due time): the claims read active mailboxes in due order from the index alone. Not a
  // partial index on the due time: SQLite's planner would rather take the index on status and sort.
  for (const column of ['sync_due_at', 'reputation_due_at', 'health_due_at']) {
    await db.schema.createIndex(`mailboxes_${column}`).on('mailboxes').columns(['status', column]).execute();
  }
  // Mailboxes a worker holds, given back when it stops.
  await db.schema
    .createIndex('mailboxes_sync_owner')
    .on('mailboxes')
    .column('sync_owner')
    .where(sql.ref('sync_owner'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mailboxes_sync_owner').execute();
  for (const column of ['sync_due_at', 'reputation_due_at', 'health_due_at']) {
    await db.schema.dropIndex(`mailboxes_${column}`).execute();
  }
  for (const column of ['sync_claimed_until', 'sync_owner', 'health_due_at', 'reputation_due_at', 'sync_due_at']) {
    await db.schema.alterTable('mailboxes').dropColumn(column).execute();
  }
}
