import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../http/errors.js';
import { PassThrough } from 'node:stream';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { describeBytes, LimitExceededError } from '../http/limits.js';
import {
  assertNoImportRunning,
  importMailboxes,
  IMPORT_COLUMNS,
  MAX_IMPORT_ROWS,
  parseMailboxCsv,
} from './mailboxes.import.js';
import {
  CreateMailboxBody,
  HumanReplyList,
  HumanReplyListQuery,
  InteractionList,
  InteractionListQuery,
  MailboxEnvelope,
  MailboxImportEnvelope,
  MailboxList,
  MailboxListQuery,
  ProviderList,
  UpdateMailboxBody,
} from './mailboxes.schemas.js';
import type { MailboxesService } from './mailboxes.service.js';
import { PROVIDERS } from './providers.js';

const tags = ['mailboxes'];
const providerList = { providers: Object.values(PROVIDERS) };

export function mailboxesRoutes(service: MailboxesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/providers',
      {
        schema: {
          tags,
          operationId: 'listProviders',
          summary: 'Provider presets',
          description:
            'IMAP and SMTP hosts, ports and TLS mode of each known provider, whether it needs an app password, and where it explains how to make one. `custom` is not listed: it has no preset.',
          response: { 200: ProviderList, ...errorResponses(401) },
        },
      },
      async () => providerList,
    );

    app.get(
      '',
      {
        schema: {
          tags,
          operationId: 'listMailboxes',
          summary: 'List mailboxes',
          description: 'Newest first. `q` matches a case-insensitive substring of the address or the name.',
          querystring: MailboxListQuery,
          response: { 200: MailboxList, ...errorResponses(400, 401) },
        },
      },
      async (request) => service.list(request.workspaceId, request.query),
    );

    app.post(
      '',
      {
        schema: {
          tags,
          operationId: 'createMailbox',
          summary: 'Connect a mailbox',
          description:
            'Logs in to IMAP and SMTP first (unless `verify` is false; each check gives up after 10 s): a rejection is a 422 whose `detail` names the side and quotes the server, and nothing is stored. The password is encrypted at rest and never returned. A workspace connects at most 200 mailboxes by default (WARMUP_MAX_MAILBOXES): 409 `mailbox_limit_reached`.',
          body: CreateMailboxBody,
          response: { 201: MailboxEnvelope, ...errorResponses(400, 401, 409, 422) },
        },
      },
      async (request, reply) => {
        const mailbox = await service.create(request.workspaceId, request.body);
        const base = request.url.split('?')[0].replace(/\/$/, '');
        return reply.code(201).header('Location', `${base}/${mailbox.id}`).send({ mailbox });
      },
    );

    // Its own scope: only this route parses CSV, and every other body type here is a 415.
    await app.register(async (scoped) => {
      scoped.removeAllContentTypeParsers();
      scoped.addContentTypeParser('text/csv', { parseAs: 'string' }, (_request, body, done) => done(null, body));
      scoped.post(
        '/import',
        {
          bodyLimit: service.maxImportBytes,
          errorHandler: (error) => {
            if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
              throw new LimitExceededError(
                413,
                'payload_too_large',
                `a mailbox import may be at most ${describeBytes(service.maxImportBytes)} (WARMUP_MAX_IMPORT_BYTES)`,
              );
            }
            if ((error as { code?: string }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
              throw new AppError(415, 'unsupported_media_type', 'a mailbox import must be sent as text/csv');
            }
            throw error;
          },
          schema: {
            tags,
            operationId: 'importMailboxes',
            summary: 'Import mailboxes from a CSV file',
            description:
              `The body is a CSV file (\`Content-Type: text/csv\`, UTF-8, comma-separated, a header line first; up to 10 MiB by default, WARMUP_MAX_IMPORT_BYTES, and ${MAX_IMPORT_ROWS.toLocaleString('en')} rows). ` +
              `Columns: ${IMPORT_COLUMNS.join(', ')}. Only email and password are required; \`provider\` (as for a single mailbox) or imap_host and smtp_host for a custom server; \`username\` sets both logins; the warmup columns default as for a single mailbox. Headers are matched without case, spaces or underscores. ` +
              'Every row is connected like `POST /api/mailboxes` (IMAP and SMTP logins checked, a few rows at a time); its round trip is left to the engine. The answer has one result per row: `created`, `exists` (already connected, or earlier in the file) or `failed` with the reason; passwords never appear. Importing the same file again creates nothing twice. ' +
              'A file that is not CSV, has an unknown column or lacks email or password is a 400 and nothing is imported. With `Accept: application/x-ndjson` the answer streams one JSON line per row as it is decided, then a last line `{"import": {...}}` with the totals.',
            body: { content: { 'text/csv': { schema: Type.String({ description: 'The CSV file' }) } } },
            response: { 200: MailboxImportEnvelope, ...errorResponses(400, 401, 409, 413, 415) },
          },
        },
        async (request, reply) => {
          // The whole file is checked first: a bad file is a 400 before anything is connected or streamed.
          // a request without a body has none to parse: it is an empty file
          const rows = parseMailboxCsv(typeof request.body === 'string' ? request.body : '');
          assertNoImportRunning(request.workspaceId);
          const onError = (error: unknown) => request.log.error({ err: error }, 'mailbox import: a row failed');
          if (!(request.headers.accept ?? '').includes('application/x-ndjson')) {
            return { import: await importMailboxes(service, request.workspaceId, rows, { onError }) };
          }
          const stream = new PassThrough();
          importMailboxes(service, request.workspaceId, rows, {
            onRow: (row) => stream.write(`${JSON.stringify({ row })}\n`),
            onError,
          }).then(
            (summary) => stream.end(`${JSON.stringify({ import: summary })}\n`),
            (error: unknown) => {
              request.log.error({ err: error }, 'mailbox import stopped');
              stream.end(
                `${JSON.stringify({ error: 'the import stopped on an internal error; see the server log' })}\n`,
              );
            },
          );
          return reply.type('application/x-ndjson; charset=utf-8').send(stream);
        },
      );
    });

    app.get(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'getMailbox',
          summary: 'Get a mailbox',
          description: "One mailbox of this workspace, without any secret; another workspace's id answers 404.",
          params: IdParams,
          response: { 200: MailboxEnvelope, ...errorResponses(401, 404) },
        },
      },
      async (request) => ({ mailbox: await service.get(request.workspaceId, request.params.id) }),
    );

    app.patch(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'updateMailbox',
          summary: 'Update a mailbox',
          description:
            'Any of `name`, `password`, `imap`, `smtp`, `warmup`, `provider` (the address is fixed). A change of password, servers or provider logs in again before it is saved (422 when refused) and moves an `error` mailbox back to `active`.',
          params: IdParams,
          body: UpdateMailboxBody,
          response: { 200: MailboxEnvelope, ...errorResponses(400, 401, 404, 422) },
        },
      },
      async (request) => ({ mailbox: await service.update(request.workspaceId, request.params.id, request.body) }),
    );

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'deleteMailbox',
          summary: 'Delete a mailbox',
          description: 'Its credentials, planned sends, interactions and statistics go with it.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 404) },
        },
      },
      async (request, reply) => {
        await service.remove(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/:id/pause',
      {
        schema: {
          tags,
          operationId: 'pauseMailbox',
          summary: 'Pause warmup',
          description:
            '`active` or `error` → `paused`. Idempotent: a paused mailbox answers 200 unchanged. The ramp stays where it is.',
          params: IdParams,
          response: { 200: MailboxEnvelope, ...errorResponses(401, 404) },
        },
      },
      async (request) => ({ mailbox: await service.pause(request.workspaceId, request.params.id) }),
    );

    app.post(
      '/:id/resume',
      {
        schema: {
          tags,
          operationId: 'resumeMailbox',
          summary: 'Resume warmup',
          description:
            '`paused` or `error` → `active` after logging in to IMAP and SMTP again; a failure is a 422 and the status stays. An active mailbox answers 200 unchanged.',
          params: IdParams,
          response: { 200: MailboxEnvelope, ...errorResponses(401, 404, 422) },
        },
      },
      async (request) => ({ mailbox: await service.resume(request.workspaceId, request.params.id) }),
    );

    app.get(
      '/:id/interactions',
      {
        schema: {
          tags,
          operationId: 'listMailboxInteractions',
          summary: "A mailbox's activity log",
          description:
            'Newest first. A counterpart from another workspace is masked (`j***@example.com`). `startDate`/`endDate` are inclusive UTC days.',
          params: IdParams,
          querystring: InteractionListQuery,
          response: { 200: InteractionList, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => service.listInteractions(request.workspaceId, request.params.id, request.query),
    );

    app.get(
      '/:id/replies',
      {
        schema: {
          tags,
          operationId: 'listMailboxHumanReplies',
          summary: "People's replies to a mailbox's warmup mail",
          description:
            'Newest found first. Each is a reply a person (not the pool, not an automatic reply) wrote to a warmup email this mailbox sent: who wrote, when, the start of what they said, and where the message is now. It was left unread, and warmup wrote nothing more in its thread.',
          params: IdParams,
          querystring: HumanReplyListQuery,
          response: { 200: HumanReplyList, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => service.listHumanReplies(request.workspaceId, request.params.id, request.query),
    );
  };
}
