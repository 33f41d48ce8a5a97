import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** What the onboarding checklist is ticked from, counted in the workspace's own rows only. */
export interface OnboardingFacts {
  domains: string[];
  mailboxes: number;
  /** Mailboxes whose domain has not been checked yet (no DNS check stored). */
  uncheckedMailboxes: number;
  failingDnsChecks: number;
  blocklistListings: number;
  members: number;
  pendingInvites: number;
  enabledAlerts: number;
}

function count(row: { n: number | string | bigint } | undefined): number {
  return Number(row?.n ?? 0);
}

export async function onboardingFacts(
  db: Kysely<Database>,
  workspaceId: string,
  now: string,
): Promise<OnboardingFacts> {
  const mailboxIds = db.selectFrom('mailboxes').select('id').where('workspace_id', '=', workspaceId);
  const [emails, unchecked, failing, listed, members, invites, alerts] = await Promise.all([
    db.selectFrom('mailboxes').select('email').where('workspace_id', '=', workspaceId).execute(),
    db
      .selectFrom('mailboxes')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('mailbox_checks').select('check').whereRef('mailbox_checks.mailbox_id', '=', 'mailboxes.id'),
          ),
        ),
      )
      .executeTakeFirst(),
    db
      .selectFrom('mailbox_checks')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('mailbox_id', 'in', mailboxIds)
      .where('status', '=', 'fail')
      .executeTakeFirst(),
    db
      .selectFrom('blocklist_results')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('mailbox_id', 'in', mailboxIds)
      .where('status', '=', 'listed')
      .executeTakeFirst(),
    db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
    db
      .selectFrom('invites')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst(),
    db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('enabled', '=', 1)
      .executeTakeFirst(),
  ]);
  const domains = [...new Set(emails.map((row) => row.email.slice(row.email.lastIndexOf('@') + 1).toLowerCase()))];
  return {
    domains: domains.sort(),
    mailboxes: emails.length,
    uncheckedMailboxes: count(unchecked),
    failingDnsChecks: count(failing),
    blocklistListings: count(listed),
    members: count(members),
    pendingInvites: count(invites),
    enabledAlerts: count(alerts),
  };
}
