import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { MailboxChecks, MailboxChecksQuery } from './checks.schemas.js';
import type { ChecksService } from './checks.service.js';

/** `GET /api/mailboxes/:id/checks`: the DNS checks of the mailbox's domain. */
export function mailboxChecksRoutes(checks: ChecksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/:id/checks',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'getMailboxChecks',
          summary: "DNS checks of the mailbox's domain",
          description:
            "MX present; SPF published once, valid, within 10 lookups and authorising the addresses of the mailbox's SMTP server; DMARC published with a policy (and its alignment); DKIM's key at `dkimSelector` readable and at least 1024 bits. Each is `pass`, `fail` with a plain-language `fix`, `unreachable` (the DNS server did not answer) or `skipped`.",
          params: IdParams,
          querystring: MailboxChecksQuery,
          response: { 200: MailboxChecks, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => checks.checkMailbox(request.workspaceId, request.params.id, request.query),
    );
  };
}
