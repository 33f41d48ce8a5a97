import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorResponses } from '../http/common.schemas.js';
import { readCookie, setScopedCookie, setSessionCookie } from '../http/cookies.js';
import { AppError } from '../http/errors.js';
import { CallbackQuery } from '../oauth/oauth.schemas.js';
import { InviteTokenParams } from '../accounts/accounts.schemas.js';
import { OIDC_FLOW_TTL_MS, type OidcSignIn } from './oidc.service.js';

/** The cookie that binds a sign-in flow to the browser that started it. */
export const OIDC_BROWSER_COOKIE = 'warmup_oidc';
const COOKIE_PATH = '/api/session/oidc';

const OidcSignInInfo = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether the operator set up an OpenID Connect provider' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'What the button says: "Sign in with <name>"' }),
  },
  { $id: 'OidcSignInInfo' },
);

const StartQuery = Type.Object(
  { invite: Type.Optional(InviteTokenParams.properties.token) },
  { additionalProperties: false },
);

const Redirect = Type.Null({ description: 'To the provider, or back to the dashboard' });

/** Redirects the browser; a refusal goes back to the dashboard, which shows its message. */
function redirect(reply: FastifyReply, location: string) {
  return reply.code(303).header('Location', location).header('Cache-Control', 'no-store').send(null);
}

function browserCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeS: number) {
  setScopedCookie(request, reply, { name: OIDC_BROWSER_COOKIE, value, maxAgeS, path: COOKIE_PATH });
}

async function orBackWithError(reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return redirect(reply, `/?${new URLSearchParams({ oidc_error: error.message }).toString()}`);
  }
}

/** `/api/session/oidc`: signing in through the operator's OpenID Connect provider. */
export function oidcSignInRoutes(oidc: OidcSignIn): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'getOidcSignIn',
          summary: 'Whether sign-in through an OpenID Connect provider is offered',
          description: 'Public: the sign-in page shows a "Sign in with <name>" button when it is.',
          response: { 200: OidcSignInInfo },
        },
      },
      async () => oidc.info(),
    );

    app.get(
      '/start',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'startOidcSignIn',
          summary: 'Start signing in through the OpenID Connect provider',
          description:
            "A browser navigation, not an API call: redirects (303) to the provider's sign-in page (authorization code with PKCE, state and nonce) and sets a short-lived cookie that binds the flow to this browser. With `invite`, the flow accepts that invite link. Refusals redirect to the dashboard with `oidc_error`.",
          querystring: StartQuery,
          response: { 303: Redirect, ...errorResponses(400) },
        },
      },
      async (request, reply) =>
        orBackWithError(reply, async () => {
          const started = await oidc.start(request.query.invite);
          browserCookie(request, reply, started.browserToken, Math.floor(OIDC_FLOW_TTL_MS / 1000));
          return redirect(reply, started.authorizationUrl);
        }),
    );

    app.get(
      '/callback',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'finishOidcSignIn',
          summary: "The provider's redirect after sign-in",
          description:
            'Not called by API clients: the browser arrives here from the provider. Signs in the account whose address the provider verified (`email_verified`), or, for a flow started from an invite, accepts the invite (making the account if needed). An address no account uses is refused: accounts are never made without an invite. The flow works once, in the browser that started it, within 10 minutes. Redirects (303) to the dashboard, signed in (session cookie set) or with `oidc_error` saying why not.',
          querystring: CallbackQuery,
          response: { 303: Redirect, ...errorResponses(400) },
        },
      },
      async (request, reply) => {
        const browserToken = readCookie(request, OIDC_BROWSER_COOKIE);
        // the flow's cookie is of no further use, whatever happens
        browserCookie(request, reply, '', 0);
        return orBackWithError(reply, async () => {
          const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
          const session = await oidc.finish(request.query, rawQuery, browserToken);
          setSessionCookie(request, reply, session.token, session.expiresAt);
          return redirect(reply, '/');
        });
      },
    );
  };
}
