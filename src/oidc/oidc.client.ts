/*
 * The one file that speaks OpenID Connect for signing in people, through openid-client:
 * discovery, authorization code with PKCE, state and nonce, ID token checks. Every request to the
 * provider is bounded in time.
 */
import * as client from 'openid-client';
import { describe as describeProviderError } from '../oauth/oauth.client.js';
import { OIDC_CALLBACK_PATH, type OidcSettings } from './oidc.config.js';

/** Seconds a request to the provider may take. */
const PROVIDER_TIMEOUT_S = 10;
const SCOPES = 'openid email profile';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** What the provider says about the person who signed in. */
export interface OidcIdentity {
  email?: string;
  emailVerified: boolean;
  name?: string;
}

/** The provider could not be reached or refused the answer; the message says which. */
export class OidcProviderError extends Error {}

export function createOidcClient(settings: OidcSettings) {
  let discovered: Promise<client.Configuration> | undefined;

  async function discover(): Promise<client.Configuration> {
    const issuer = new URL(settings.issuer);
    // plain http only for a provider on this machine (a development or test stand-in)
    const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
    const configuration = await client.discovery(issuer, settings.clientId, settings.clientSecret, undefined, {
      execute: insecure ? [client.allowInsecureRequests] : [],
      timeout: PROVIDER_TIMEOUT_S,
    });
    configuration.timeout = PROVIDER_TIMEOUT_S;
    return configuration;
  }

  /** The provider's configuration, discovered once; a failed discovery is tried again next time. */
  async function configuration(): Promise<client.Configuration> {
    discovered ??= discover();
    const pending = discovered;
    try {
      return await pending;
    } catch (error) {
      if (discovered === pending) discovered = undefined;
      throw new OidcProviderError(
        `${settings.name}'s sign-in service cannot be reached (${describeProviderError(error)})`,
      );
    }
  }

  const redirectUri = `${settings.publicUrl}${OIDC_CALLBACK_PATH}`;

  return {
    name: settings.name,

    /** Fresh secrets for one flow. */
    newFlowSecrets: () => ({
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
    }),

    async authorizationUrl(flow: { state: string; nonce: string; codeVerifier: string }): Promise<string> {
      const url = client.buildAuthorizationUrl(await configuration(), {
        redirect_uri: redirectUri,
        scope: SCOPES,
        state: flow.state,
        nonce: flow.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
        code_challenge_method: 'S256',
      });
      return url.href;
    },

    /**
     * Trades the callback's code for tokens (state, nonce and PKCE verifier checked) and answers who
     * signed in: from the ID token, or from the userinfo endpoint when the ID token leaves the
     * address or its verification out.
     */
    async identify(
      rawQuery: string,
      flow: { state: string; nonce: string; codeVerifier: string },
    ): Promise<OidcIdentity> {
      const config = await configuration();
      try {
        const tokens = await client.authorizationCodeGrant(config, new URL(`${redirectUri}?${rawQuery}`), {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        let claims: Record<string, unknown> = { ...tokens.claims() };
        if (
          (typeof claims.email !== 'string' || claims.email_verified === undefined) &&
          config.serverMetadata().userinfo_endpoint
        ) {
          claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))) };
        }
        return {
          ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
          // some providers send the string "true"
          emailVerified: claims.email_verified === true || claims.email_verified === 'true',
          ...(typeof claims.name === 'string' && claims.name.trim() ? { name: claims.name.trim() } : {}),
        };
      } catch (error) {
        throw new OidcProviderError(`${settings.name} did not complete the sign-in (${describeProviderError(error)})`);
      }
    },
  };
}

export type OidcClient = ReturnType<typeof createOidcClient>;
