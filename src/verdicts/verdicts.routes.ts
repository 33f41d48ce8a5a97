import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { PeriodQueryShape } from '../stats/stats.schemas.js';
import { MailboxVerdictsEnvelope } from './verdicts.schemas.js';
import type { VerdictsService } from './verdicts.service.js';

const VerdictsQuery = Type.Object(PeriodQueryShape, { additionalProperties: false });

/** `GET /api/mailboxes/:id/verdicts`, registered under `/mailboxes` beside the mailbox routes. */
export function mailboxVerdictsRoutes(verdicts: VerdictsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/:id/verdicts',
      {
        schema: {
          tags: ['mailboxes'],
          operationId: 'getMailboxVerdicts',
          summary: "What the receivers thought of the mailbox's mail",
          description:
            "For the mailbox's emails its peers found in the period (same period rules as the stats routes), per receiving provider: the SPF, DKIM and DMARC results as the receiver's own Authentication-Results stated them (a result the sender side wrote is never read), Microsoft's SCL/BCL and a SpamAssassin-style score where the receiver gave one, and where the mail was filed. A check that receivers saw fail is listed in `problems` with the change that fixes it.",
          params: IdParams,
          querystring: VerdictsQuery,
          response: { 200: MailboxVerdictsEnvelope, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => ({
        verdicts: await verdicts.mailboxVerdicts(request.workspaceId, request.params.id, request.query),
      }),
    );
  };
}
