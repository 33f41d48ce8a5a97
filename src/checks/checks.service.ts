import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { NotFoundError } from '../http/errors.js';
import { blocklistListingsOf, workspaceCheckResults } from './checks.repository.js';
import type {
  BlocklistListing,
  DkimSelector,
  MailboxChecks,
  MailboxChecksQuery,
  MailboxDnsStatus,
} from './checks.schemas.js';
import { dnsStatus } from './dns-status.js';
import { runMailboxChecks } from './dns-checks.js';
import type { DnsResolve } from './dns-resolver.js';

export interface ChecksServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** WARMUP_DNS_SERVERS, or the system's resolvers. */
  resolve: DnsResolve;
}

function selectorOf(row: { dkim_selector: string | null; dkim_selector_source: 'user' | 'mail' | null }): DkimSelector {
  return { selector: row.dkim_selector, source: row.dkim_selector === null ? null : row.dkim_selector_source };
}

export function createChecksService({ db, clock, resolve }: ChecksServiceDeps) {
  return {
    /** The DNS checks of the mailbox's domain, run now (each bounded by the resolver's timeout). */
    async checkMailbox(workspaceId: string, mailboxId: string, query: MailboxChecksQuery): Promise<MailboxChecks> {
      const mailbox = await db
        .selectFrom('mailboxes')
        .select(['email', 'smtp', 'dkim_selector', 'dkim_selector_source'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', mailboxId)
        .executeTakeFirst();
      if (!mailbox) throw new NotFoundError(`mailbox ${mailboxId} not found`);
      const selector = query.dkimSelector ?? mailbox.dkim_selector ?? undefined;
      const { domain, checks } = await runMailboxChecks(resolve, mailbox, selector);
      return { domain, checkedAt: clock.now().toISOString(), dkimSelector: selectorOf(mailbox), checks };
    },

    /** The latest blocklist answers of the daily run. */
    async blocklists(workspaceId: string, mailboxId: string): Promise<BlocklistListing[]> {
      const listings = await blocklistListingsOf(db, workspaceId, mailboxId);
      if (!listings) throw new NotFoundError(`mailbox ${mailboxId} not found`);
      return listings;
    },

    /** Every mailbox's DNS status from the latest daily checks and blocklist answers, by address. */
    async dnsStatuses(workspaceId: string): Promise<MailboxDnsStatus[]> {
      return (await workspaceCheckResults(db, workspaceId)).map((result) => ({
        mailboxId: result.mailboxId,
        email: result.email,
        domain: result.email.slice(result.email.lastIndexOf('@') + 1).toLowerCase(),
        checkedAt: result.checkedAt,
        ...dnsStatus(result.checks, result.blocklists),
      }));
    },

    /** The user gives the DKIM selector (kept until changed), or forgets it (null: the one learned from mail is used next). */
    async setDkimSelector(workspaceId: string, mailboxId: string, selector: string | null): Promise<DkimSelector> {
      const row = await db
        .updateTable('mailboxes')
        .set({ dkim_selector: selector, dkim_selector_source: selector === null ? null : 'user' })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', mailboxId)
        .returning(['dkim_selector', 'dkim_selector_source'])
        .executeTakeFirst();
      if (!row) throw new NotFoundError(`mailbox ${mailboxId} not found`);
      return selectorOf(row);
    },
  };
}

export type ChecksService = ReturnType<typeof createChecksService>;
