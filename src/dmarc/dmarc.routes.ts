import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/common.schemas.js';
import {
  DmarcDomainDetail,
  DmarcDomainParams,
  DmarcDomains,
  DmarcSourceBody,
  DmarcSourceEnvelope,
} from './dmarc.schemas.js';
import type { DmarcService } from './dmarc.service.js';

const tags = ['dmarc'];

/** `/api/dmarc`: where the workspace's DMARC aggregate reports arrive, and what they say per domain. */
export function dmarcRoutes(dmarc: DmarcService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/source',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'getDmarcSource',
          summary: 'Where the DMARC reports arrive',
          description:
            'The mailbox and folder the `rua` reports are read from, when it was last read and why that failed, or null when none is named.',
          response: { 200: DmarcSourceEnvelope, ...errorResponses(401, 429) },
        },
      },
      async (request) => ({ source: await dmarc.getSource(request.workspaceId) }),
    );

    app.put(
      '/source',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'setDmarcSource',
          summary: 'Name the mailbox and folder the DMARC reports arrive in',
          description:
            "The mailbox must be one of the workspace's own. The `dmarc` job reads the folder's new messages, keeps each DMARC aggregate report attached (gzip, zip or XML), and moves each report message, kept or set aside, to the subfolder `Processed`; any other message stays where it is, its flags untouched. Another mailbox or folder is read from its first message.",
          body: DmarcSourceBody,
          response: { 200: DmarcSourceEnvelope, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request) => ({ source: await dmarc.setSource(request.workspaceId, request.body) }),
    );

    app.delete(
      '/source',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'deleteDmarcSource',
          summary: 'Stop reading DMARC reports',
          description:
            "The `dmarc` job no longer reads the named folder; nothing in the mailbox is touched. The reports already kept stay, with their figures, until they leave the last 30 days: they are the providers' account of what happened. Naming a source again reads its folder from its first message; reports kept before are counted once.",
          response: {
            204: Type.Null({ description: 'No source named any more' }),
            ...errorResponses(401, 403, 404, 429),
          },
        },
      },
      async (request, reply) => {
        await dmarc.removeSource(request.workspaceId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/domains',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'listDmarcDomains',
          summary: 'What the DMARC reports of the last 30 days say, per domain',
          description:
            "Per domain whose policy the reports are about: messages, those passing DMARC (SPF or DKIM aligned), SPF- and DKIM-aligned passes, the dispositions applied, distinct sources and reports; and the report messages set aside, by reason. A day is the UTC day a report's range begins.",
          response: { 200: DmarcDomains, ...errorResponses(401, 429) },
        },
      },
      async (request) => dmarc.domains(request.workspaceId),
    );

    app.get(
      '/domains/:domain',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'getDmarcDomain',
          summary: "One domain's DMARC reports of the last 30 days, per day and per source",
          description:
            'Days with reports, and the sending addresses (at most 200, the most messages first) with their reverse names when known. A domain without reports has empty lists.',
          params: DmarcDomainParams,
          response: { 200: DmarcDomainDetail, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => dmarc.domain(request.workspaceId, request.params.domain),
    );
  };
}
