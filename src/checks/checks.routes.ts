import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import {
  DkimSelector,
  DkimSelectorBody,
  DnsStatusList,
  MailboxBlocklists,
  MailboxChecks,
  MailboxChecksQuery,
} from './checks.schemas.js';
import type { ChecksService } from './checks.service.js';

/**
 * `GET /api/mailboxes/:id/checks`: the DNS checks of the mailbox's domain; `PUT …/dkim-selector`:
 * the selector they use; `GET /api/mailboxes/dns-status`: every mailbox's status in a few words.
 */
export function mailboxChecksRoutes(checks: ChecksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/dns-status',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'listMailboxDnsStatus',
          summary: "Every mailbox's DNS and blocklist status",
          description:
            "From the latest daily DNS checks and blocklist answers (nothing is asked now), every mailbox of the workspace (at most WARMUP_MAX_MAILBOXES) by address: `error` when a check fails or a list lists it, `warn` when a check was not answered, `unknown` before its first check, else `ok`; with a short `label` and the first `fix`, the words the dashboard's mailbox list, its overview and the PDF report use. One request for a whole list, rather than one per mailbox.",
          response: { 200: DnsStatusList, ...errorResponses(401, 429) },
        },
      },
      async (request) => ({ mailboxes: await checks.dnsStatuses(request.workspaceId) }),
    );
    app.get(
      '/:id/checks',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'getMailboxChecks',
          summary: "DNS checks of the mailbox's domain",
          description:
            "MX present; SPF published once, valid, within 10 lookups and authorising the addresses of the mailbox's SMTP server; DMARC published with a policy (and its alignment); DKIM's key at the selector (the query's `dkimSelector`, else the one given with PUT /api/mailboxes/{id}/dkim-selector, else the one learned from the `DKIM-Signature` of its warmup mail) readable and at least 1024 bits. Each is `pass`, `fail` with a plain-language `fix`, `unreachable` (the DNS server did not answer) or `skipped`.",
          params: IdParams,
          querystring: MailboxChecksQuery,
          response: { 200: MailboxChecks, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => checks.checkMailbox(request.workspaceId, request.params.id, request.query),
    );
    app.get(
      '/:id/blocklists',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'getMailboxBlocklists',
          summary: "Blocklist listings of the mailbox's domain and sending addresses",
          description:
            'The latest answers of the daily run: its domain on the domain lists (Spamhaus DBL by default) and each address its warmup mail was seen sent from (the `Received` fields of the copies its peers found) on the address lists (Spamhaus ZEN, Barracuda, SpamCop by default), each `listed` (with since when and where to ask for removal), `clear` or `unreachable`.',
          params: IdParams,
          response: { 200: MailboxBlocklists, ...errorResponses(401, 404, 429) },
        },
      },
      async (request) => ({ blocklists: await checks.blocklists(request.workspaceId, request.params.id) }),
    );
    app.put(
      '/:id/dkim-selector',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'setMailboxDkimSelector',
          summary: 'Give the selector of the DKIM key the checks use',
          description:
            "Without one, the selector is learned from the `DKIM-Signature` of the mailbox's warmup mail as its peers find it. A given selector is kept until changed; `null` forgets it.",
          params: IdParams,
          body: DkimSelectorBody,
          response: { 200: Type.Object({ dkimSelector: DkimSelector }), ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({
        dkimSelector: await checks.setDkimSelector(request.workspaceId, request.params.id, request.body.selector),
      }),
    );
  };
}
