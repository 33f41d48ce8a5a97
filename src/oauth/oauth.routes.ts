import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../http/common.schemas.js';
import {
  AuthorizationEnvelope,
  AuthorizeBody,
  CallbackQuery,
  OAuthProviderList,
  OAuthProviderParams,
} from './oauth.schemas.js';
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
            "Answers the provider's consent page (authorization code with PKCE, offline access). Send the user's browser there; after consent the provider sends it to `GET /oauth/callback`, which logs in to IMAP and SMTP with the new access token (XOAUTH2), stores the mailbox (or, with `mailboxId`, reconnects that one, keeping its history) and redirects to the dashboard: `/mailboxes/<id>?oauth=connected`, or back with `oauth_error`. The flow is bound to this workspace (and, when started with the session cookie, to that browser session), works once and expires after 10 minutes. Tokens are encrypted at rest and never returned. 404 when the provider is not set up; 502 `oauth_provider_unavailable` when its sign-in service cannot be reached.",
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
            'Not called by API clients: the browser arrives here from the consent page. Redirects (303) to the dashboard. A `state` that is unknown, already used or expired, or a flow started in a browser session arriving without the cookie of that session, is a 400 `oauth_state_invalid` and changes nothing.',
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
