import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DnsCheck } from './checks.schemas.js';

/**
 * Keeps the latest result of each check of the mailbox, with since when it has been failing: a
 * failure continues one already running, a pass or skip ends it, and an unreachable DNS server
 * leaves it as it was (nothing was learned). Returns the checks with that time.
 */
export async function saveChecks(
  db: Kysely<Database>,
  mailboxId: string,
  checks: DnsCheck[],
  at: Date,
): Promise<Array<DnsCheck & { failingSince: string | null }>> {
  const checkedAt = at.toISOString();
  const previous = new Map(
    (
      await db
        .selectFrom('mailbox_checks')
        .select(['check', 'failing_since'])
        .where('mailbox_id', '=', mailboxId)
        .execute()
    ).map((row) => [row.check, row.failing_since]),
  );
  const saved: Array<DnsCheck & { failingSince: string | null }> = [];
  for (const check of checks) {
    const before = previous.get(check.check) ?? null;
    const failingSince =
      check.status === 'fail' ? (before ?? checkedAt) : check.status === 'unreachable' ? before : null;
    const row = {
      status: check.status,
      detail: check.detail,
      fix: check.fix,
      checked_at: checkedAt,
      failing_since: failingSince,
    };
    await db
      .insertInto('mailbox_checks')
      .values({ mailbox_id: mailboxId, check: check.check, ...row })
      .onConflict((oc) => oc.columns(['mailbox_id', 'check']).doUpdateSet(row))
      .execute();
    saved.push({ ...check, failingSince });
  }
  return saved;
}

export interface MailboxToCheck {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  smtp: string;
  status: string;
  paused_for: 'dns' | null;
  dkim_selector: string | null;
}

/**
 * Mailboxes whose DNS is due a check, oldest check first: the active ones not checked since
 * `checkedBefore`, and those failing SPF or DMARC, or paused by the DNS rule, not checked since
 * `recheckBefore` (so a failure is seen to last, and a fix resumes warmup within the hour).
 */
export async function mailboxesDueForChecks(
  db: Kysely<Database>,
  options: { checkedBefore: Date; recheckBefore: Date; limit: number },
): Promise<MailboxToCheck[]> {
  return (
    db
      .selectFrom('mailboxes as m')
      .leftJoin('mailbox_checks as c', (join) => join.onRef('c.mailbox_id', '=', 'm.id').on('c.check', '=', 'mx'))
      .select(['m.id', 'm.workspace_id', 'm.email', 'm.name', 'm.smtp', 'm.status', 'm.paused_for', 'm.dkim_selector'])
      .where((eb) => eb.or([eb('m.status', '=', 'active'), eb('m.paused_for', '=', 'dns')]))
      .where((eb) =>
        eb.or([
          eb('c.checked_at', 'is', null),
          eb('c.checked_at', '<', options.checkedBefore.toISOString()),
          eb.and([
            eb('c.checked_at', '<=', options.recheckBefore.toISOString()),
            eb.or([
              eb('m.paused_for', '=', 'dns'),
              eb.exists(
                eb
                  .selectFrom('mailbox_checks as f')
                  .select('f.check')
                  .whereRef('f.mailbox_id', '=', 'm.id')
                  .where('f.check', 'in', ['spf', 'dmarc'])
                  .where('f.failing_since', 'is not', null),
              ),
            ]),
          ]),
        ]),
      )
      // never checked first (SQLite sorts nulls first, PostgreSQL last)
      .orderBy(sql`coalesce(c.checked_at, '')`)
      .limit(options.limit)
      .execute()
  );
}
