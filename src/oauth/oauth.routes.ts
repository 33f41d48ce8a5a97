import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../http/common.schemas.js';
import {
  AuthorizationEnvelope,
  AuthorizeBody,
  CallbackQuery,
  OAuthProviderList,
  OAuthProviderParams,
  PendingConnectEnvelope,
  PendingConnectParams,
} from './oauth.schemas.js';
import { MailboxEnvelope } from '../mailboxes/mailboxes.schemas.js';
import type { FastifyRequest } from 'fastify';
import type { OAuthService } from './oauth.service.js';

const tags = ['mailboxes'];

/** Under /api/oauth, with the API key: which providers are set up, and starting a flow. */
export function oauthRoutes(service: OAuthService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/providers',
      {
        schema: {
          tags,
          operationId: 'listOAuthProviders',
          summary: 'OAuth providers this server can connect mailboxes with',
          description:
            'The providers whose client id and secret the operator set (WARMUP_OAUTH_GOOGLE_*, WARMUP_OAUTH_MICROSOFT_*, WARMUP_OAUTH_GENERIC_*).',
          response: { 200: OAuthProviderList, ...errorResponses(401) },
        },
      },
      async () => ({ providers: service.providers() }),
    );

    app.post(
      '/:provider/authorize',
      {
        schema: {
          tags,
          operationId: 'authorizeOAuthMailbox',
          summary: 'Start connecting a mailbox with OAuth 2.0',
          description:
            "Answers the provider's consent page (authorization code with PKCE, offline access). Send the user's browser there; after consent the provider sends it to `GET /oauth/callback`, which, for a flow started with the session cookie (and reached with that cookie), logs in to IMAP and SMTP with the new access token (XOAUTH2), stores the mailbox (or, with `mailboxId`, reconnects that one, keeping its history) and redirects to the dashboard: `/mailboxes/<id>?oauth=connected`, or back with `oauth_error`. A flow started with an API key connects nothing at the callback: it redirects to the dashboard's `/oauth/confirm?flow=<id>`, where a signed-in member of this workspace sees the address and confirms (`POST /api/oauth/flows/{id}/confirm`) within 10 minutes. The flow is bound to this workspace, works once and expires after 10 minutes. Tokens are encrypted at rest and never returned. 404 when the provider is not set up; 502 `oauth_provider_unavailable` when its sign-in service cannot be reached.",
          params: OAuthProviderParams,
          body: AuthorizeBody,
          response: { 200: AuthorizationEnvelope, ...errorResponses(400, 401, 404, 502) },
        },
      },
      async (request) => ({
        authorization: await service.authorize(
          request.workspaceId,
          request.params.provider,
          request.body ?? {},
          request.sessionId || undefined,
        ),
      }),
    );

    // Session only: an API key could otherwise confirm the consent it sent a stranger to give.
    const confirmation = { access: 'member', sessionOnly: true } as const;
    const confirmationNote =
      ' Only a signed-in member (or admin, owner) of the workspace that started the flow, with the session cookie: an API key gets 403, a member of another workspace 404.';

    app.get(
      '/flows/:id',
      {
        config: confirmation,
        schema: {
          tags,
          operationId: 'getPendingOAuthConnection',
          summary: 'A consent waiting for confirmation',
          description: `For the dashboard's confirmation page: the address that consented and the workspace it would join. 404 when the link is unknown, used, cancelled or expired.${confirmationNote}`,
          params: PendingConnectParams,
          response: { 200: PendingConnectEnvelope, ...errorResponses(401, 403, 404) },
        },
      },
      async (request) => ({ connection: await service.pending(request.workspaceId, request.params.id) }),
    );

    app.post(
      '/flows/:id/confirm',
      {
        config: confirmation,
        schema: {
          tags,
          operationId: 'confirmOAuthConnection',
          summary: 'Connect the mailbox a consent is waiting for',
          description: `Logs in to IMAP and SMTP with the waiting tokens (XOAUTH2) and stores the mailbox (or reconnects the one the flow named), once. 404 when the link is unknown, used, cancelled or expired; 422 \`connection_failed\` when the mail servers refuse the account; 409 when the address is connected already or the workspace is at its mailbox limit.${confirmationNote}`,
          params: PendingConnectParams,
          response: { 200: MailboxEnvelope, ...errorResponses(400, 401, 403, 404, 409, 422, 502) },
        },
      },
      async (request) => ({ mailbox: await service.confirm(request.workspaceId, request.params.id) }),
    );

    app.delete(
      '/flows/:id',
      {
        config: confirmation,
        schema: {
          tags,
          operationId: 'cancelOAuthConnection',
          summary: 'Discard a consent waiting for confirmation',
          description: `The waiting tokens are deleted and nothing is connected. 404 when the link is unknown, used, cancelled or expired.${confirmationNote}`,
          params: PendingConnectParams,
          response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
        },
      },
      async (request, reply) => {
        await service.cancel(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** GET /oauth/callback: where the provider sends the browser; no API key, the `state` names the workspace. */
export function oauthCallbackRoutes(
  service: OAuthService,
  /** The browser session of the request's cookie, if any: a flow started in a session must end in it. */
  sessionOf: (request: FastifyRequest) => Promise<string | undefined> = async () => undefined,
): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/oauth/callback',
      {
        schema: {
          tags,
          operationId: 'oauthCallback',
          summary: "The provider's redirect after consent",
          description:
            'Not called by API clients: the browser arrives here from the consent page. Redirects (303) to the dashboard (for a flow started with an API key, to its confirmation page `/oauth/confirm?flow=<id>`). A `state` that is unknown, already used or expired, or a flow started in a browser session arriving without the cookie of that session, is a 400 `oauth_state_invalid` and changes nothing.',
          security: [],
          querystring: CallbackQuery,
          response: { 303: Type.Null({ description: 'To the dashboard' }), ...errorResponses(400) },
        },
      },
      async (request, reply) => {
        const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
        const location = await service.callback(request.query, rawQuery, await sessionOf(request));
        return reply.code(303).header('Location', location).header('Cache-Control', 'no-store').send(null);
      },
    );
  };
}
