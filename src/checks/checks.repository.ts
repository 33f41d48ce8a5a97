import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DnsCheck } from './checks.schemas.js';

/** Keeps the latest result of each check of the mailbox. */
export async function saveChecks(db: Kysely<Database>, mailboxId: string, checks: DnsCheck[], at: Date): Promise<void> {
  const checkedAt = at.toISOString();
  for (const check of checks) {
    const row = { status: check.status, detail: check.detail, fix: check.fix, checked_at: checkedAt };
    await db
      .insertInto('mailbox_checks')
      .values({ mailbox_id: mailboxId, check: check.check, ...row })
      .onConflict((oc) => oc.columns(['mailbox_id', 'check']).doUpdateSet(row))
      .execute();
  }
}

export interface MailboxToCheck {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  smtp: string;
}

/** Active mailboxes of `workspaceIds` not checked since `since`, oldest check first. */
export async function mailboxesDueForChecks(
  db: Kysely<Database>,
  workspaceIds: string[],
  since: Date,
  limit: number,
): Promise<MailboxToCheck[]> {
  if (workspaceIds.length === 0) return [];
  return db
    .selectFrom('mailboxes as m')
    .leftJoin('mailbox_checks as c', (join) => join.onRef('c.mailbox_id', '=', 'm.id').on('c.check', '=', 'mx'))
    .select(['m.id', 'm.workspace_id', 'm.email', 'm.name', 'm.smtp'])
    .where('m.workspace_id', 'in', workspaceIds)
    .where('m.status', '=', 'active')
    .where((eb) => eb.or([eb('c.checked_at', 'is', null), eb('c.checked_at', '<', since.toISOString())]))
    .orderBy('c.checked_at')
    .limit(limit)
    .execute();
}
