import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { NotFoundError } from '../http/errors.js';
import type { MailboxChecks, MailboxChecksQuery } from './checks.schemas.js';
import { runMailboxChecks } from './dns-checks.js';
import type { DnsResolve } from './dns-resolver.js';

export interface ChecksServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** WARMUP_DNS_SERVERS, or the system's resolvers. */
  resolve: DnsResolve;
}

export function createChecksService({ db, clock, resolve }: ChecksServiceDeps) {
  return {
    /** The DNS checks of the mailbox's domain, run now (each bounded by the resolver's timeout). */
    async checkMailbox(workspaceId: string, mailboxId: string, query: MailboxChecksQuery): Promise<MailboxChecks> {
      const mailbox = await db
        .selectFrom('mailboxes')
        .select(['email', 'smtp'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', mailboxId)
        .executeTakeFirst();
      if (!mailbox) throw new NotFoundError(`mailbox ${mailboxId} not found`);
      const { domain, checks } = await runMailboxChecks(resolve, mailbox, query.dkimSelector);
      return { domain, checkedAt: clock.now().toISOString(), checks };
    },
  };
}

export type ChecksService = ReturnType<typeof createChecksService>;
