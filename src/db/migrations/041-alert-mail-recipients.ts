import type { Kysely } from 'kysely';

/**
 * Who already has an email alert: one row per delivery and recipient whose server took the mail,
 * so a retry after a later recipient's failure mails only those still waiting (the first ones got
 * a second copy before). Deleted with its delivery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('alert_mail_recipients')
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_mail_recipients_pk', ['delivery_id', 'address'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alert_mail_recipients').execute();
}
