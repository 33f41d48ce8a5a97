import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/common.schemas.js';
import {
  FeedConnectionEnvelope,
  FeedDomainParams,
  PostmasterAuthorizeBody,
  PostmasterConnectionBody,
  ProviderVerdicts,
  SndsConnectionBody,
  type FeedName,
} from './feeds.schemas.js';
import { AuthorizationEnvelope } from '../oauth/oauth.schemas.js';
import type { OAuthService } from '../oauth/oauth.service.js';
import type { FeedsService } from './feeds.service.js';

const tags = ['feeds'];

const FEED_WORDS: Record<FeedName, { name: string; id: string }> = {
  snds: { name: 'Microsoft SNDS', id: 'Snds' },
  postmaster: { name: 'Gmail Postmaster Tools', id: 'Postmaster' },
};

/** `/api/feeds`: the workspace's connections to the providers' own feeds, and what they say of a domain. */
export function feedsRoutes(feeds: FeedsService, oauth: OAuthService): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const feed of ['snds', 'postmaster'] as const) {
      const { name, id } = FEED_WORDS[feed];
      app.get(
        `/${feed}`,
        {
          config: { access: 'viewer' },
          schema: {
            tags,
            operationId: `get${id}Feed`,
            summary: `The ${name} connection`,
            description: `Whether ${name} is connected (its secret is never returned), when it was last fetched and why that failed, or null.`,
            response: { 200: FeedConnectionEnvelope, ...errorResponses(401, 429) },
          },
        },
        async (request) => ({ connection: await feeds.get(request.workspaceId, feed) }),
      );
      app.delete(
        `/${feed}`,
        {
          config: { access: 'admin' },
          schema: {
            tags,
            operationId: `delete${id}Feed`,
            summary: `Disconnect ${name}`,
            description:
              'The stored secret and the data fetched go with it; a hold it caused is lifted on the next health run.',
            response: { 204: Type.Null({ description: 'Disconnected' }), ...errorResponses(401, 403, 404, 429) },
          },
        },
        async (request, reply) => {
          await feeds.disconnect(request.workspaceId, feed);
          return reply.code(204).send(null);
        },
      );
    }

    app.put(
      '/snds',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'setSndsFeed',
          summary: 'Connect Microsoft SNDS with its data access key',
          description:
            'Stores the key encrypted; the `feeds` job fetches the SNDS data once a day (per address: filter result, complaint rate, trap hits, message counts). Answers `configured: true`, never the key.',
          body: SndsConnectionBody,
          response: { 200: FeedConnectionEnvelope, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request) => ({ connection: await feeds.connectSnds(request.workspaceId, request.body) }),
    );

    app.put(
      '/postmaster',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'setPostmasterFeed',
          summary: 'Connect Gmail Postmaster Tools for verified domains',
          description:
            "Stores the Google refresh token encrypted, and the domains; the `feeds` job fetches each domain's spam rate and compliance status once a day through the installation's Google OAuth app. Answers `configured: true`, never the token.",
          body: PostmasterConnectionBody,
          response: { 200: FeedConnectionEnvelope, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request) => ({ connection: await feeds.connectPostmaster(request.workspaceId, request.body) }),
    );

    app.post(
      '/postmaster/authorize',
      {
        config: { access: 'admin', sessionOnly: true },
        schema: {
          tags,
          operationId: 'authorizePostmasterFeed',
          summary: "Connect Gmail Postmaster Tools through Google's consent page",
          description:
            "Answers Google's consent page for the scope `https://www.googleapis.com/auth/postmaster.traffic.readonly`, through the installation's Google OAuth app (WARMUP_OAUTH_GOOGLE_*), with offline access. After consent Google sends the browser to `GET /oauth/callback`, which stores the refresh token encrypted with these domains (as `PUT /api/feeds/postmaster` does) and redirects to the dashboard's `/domains?feeds=connected`, or with `oauth_error`. Started and finished in the same signed-in browser session only; works once, within 10 minutes. 404 when Google sign-in is not set up.",
          body: PostmasterAuthorizeBody,
          response: { 200: AuthorizationEnvelope, ...errorResponses(400, 401, 403, 404, 429, 502) },
        },
      },
      async (request) => ({
        authorization: await oauth.authorize(request.workspaceId, 'google', {}, request.sessionId || undefined, {
          domains: [...new Set(request.body.domains.map((domain) => domain.toLowerCase().replace(/\.$/, '')))],
        }),
      }),
    );

    app.get(
      '/domains/:domain',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'getProviderVerdicts',
          summary: "What the providers' feeds say of a domain",
          description:
            "The hold the health guard keeps on the domain (with its reason) or null; Gmail Postmaster days and the SNDS days of the addresses the domain's mail left from (its DMARC report sources), 30 days; and each feed's connection with its last error.",
          params: FeedDomainParams,
          response: { 200: ProviderVerdicts, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => feeds.verdicts(request.workspaceId, request.params.domain),
    );
  };
}
