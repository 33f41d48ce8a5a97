/*
 * The one file that speaks OAuth 2.0 to providers, through openid-client (authorization code with
 * PKCE, refresh, ID token checks): no hand-written token exchange. Every answer is bounded in time;
 * a failure is either "access revoked or expired" (the user must reconnect) or "the provider is
 * unavailable" (try again later).
 */
import * as client from 'openid-client';
import { TokenUnavailableError } from '../mail/errors.js';
import type { OAuthProviderSettings, OAuthSettings } from './oauth.config.js';
import type { OAuthProviderId } from './oauth.schemas.js';

/** Seconds a request to a provider may take. */
const PROVIDER_TIMEOUT_S = 10;

export interface IssuedTokens {
  accessToken: string;
  /** Absent when the provider keeps the old one (no rotation). */
  refreshToken?: string;
  /** When the access token stops working; providers give expires_in, else an hour is assumed. */
  expiresAt: Date;
  /** The account's address from the ID token (email, else preferred_username), when there is one. */
  email?: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function loopbackOnly(settings: OAuthProviderSettings): boolean {
  const urls = [settings.issuer, settings.authorizationUrl, settings.tokenUrl, settings.revocationUrl].filter(
    (value): value is string => value !== undefined,
  );
  return urls.every((value) => {
    const parsed = new URL(value);
    return parsed.protocol === 'https:' || LOOPBACK.has(parsed.hostname);
  });
}

function usesHttp(settings: OAuthProviderSettings): boolean {
  return [settings.issuer, settings.authorizationUrl, settings.tokenUrl].some((value) => value?.startsWith('http:'));
}

/** The provider said no to the grant: the refresh token (or the code) is revoked, expired or unknown. */
function isRefusedGrant(error: unknown): boolean {
  return error instanceof client.ResponseBodyError && ['invalid_grant', 'unauthorized_client'].includes(error.error);
}

export function describe(error: unknown): string {
  if (error instanceof client.ResponseBodyError)
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? error.message;
  }
  return String(error);
}

export function createOAuthClient(settings: OAuthSettings) {
  const configurations = new Map<OAuthProviderId, Promise<client.Configuration>>();

  function provider(id: OAuthProviderId): OAuthProviderSettings {
    const found = settings.providers[id];
    if (!found) throw new Error(`OAuth provider ${id} is not configured`);
    return found;
  }

  async function build(found: OAuthProviderSettings): Promise<client.Configuration> {
    // plain http only for a server on this machine (a development or test stand-in)
    const insecure = usesHttp(found) && loopbackOnly(found);
    const execute = insecure ? [client.allowInsecureRequests] : [];
    let configuration: client.Configuration;
    if (found.authorizationUrl && found.tokenUrl) {
      configuration = new client.Configuration(
        {
          issuer: new URL(found.authorizationUrl).origin,
          authorization_endpoint: found.authorizationUrl,
          token_endpoint: found.tokenUrl,
          ...(found.revocationUrl ? { revocation_endpoint: found.revocationUrl } : {}),
        },
        found.clientId,
        found.clientSecret,
      );
      if (insecure) client.allowInsecureRequests(configuration);
    } else {
      configuration = await client.discovery(new URL(found.issuer!), found.clientId, found.clientSecret, undefined, {
        execute,
        timeout: PROVIDER_TIMEOUT_S,
      });
    }
    configuration.timeout = PROVIDER_TIMEOUT_S;
    return configuration;
  }

  /** The provider's configuration, discovered once; a failed discovery is tried again next time. */
  function configuration(id: OAuthProviderId): Promise<client.Configuration> {
    let found = configurations.get(id);
    if (!found) {
      found = build(provider(id));
      configurations.set(id, found);
      found.catch(() => configurations.delete(id));
    }
    return found;
  }

  function issued(tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, now: Date): IssuedTokens {
    const claims = tokens.claims();
    const address = claims?.email ?? claims?.preferred_username;
    return {
      accessToken: tokens.access_token,
      ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
      expiresAt: new Date(now.getTime() + (tokens.expiresIn() ?? 3600) * 1000),
      ...(typeof address === 'string' && address.includes('@') ? { email: address } : {}),
    };
  }

  return {
    configured(): Array<{ id: OAuthProviderId; name: string }> {
      return Object.values(settings.providers).map((found) => ({ id: found.id, name: found.name }));
    },

    settings(id: OAuthProviderId): OAuthProviderSettings | undefined {
      return settings.providers[id];
    },

    redirectUri(): string {
      return `${settings.publicUrl ?? ''}/oauth/callback`;
    },

    /** A fresh PKCE verifier and state for one flow. */
    newFlowSecrets(): { state: string; codeVerifier: string } {
      return { state: client.randomState(), codeVerifier: client.randomPKCECodeVerifier() };
    },

    async authorizationUrl(
      id: OAuthProviderId,
      flow: { state: string; codeVerifier: string; loginHint?: string; scopes?: string[] },
    ): Promise<string> {
      const found = provider(id);
      let config: client.Configuration;
      try {
        config = await configuration(id);
      } catch (error) {
        throw new TokenUnavailableError(
          `${found.name}'s sign-in service cannot be reached (${describe(error)})`,
          false,
        );
      }
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: this.redirectUri(),
        // a feed's consent asks for its own scope (feeds/), not the mailbox's
        scope: (flow.scopes ?? found.scopes).join(' '),
        state: flow.state,
        code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
        code_challenge_method: 'S256',
        ...found.authorizationParams,
        ...(flow.loginHint ? { login_hint: flow.loginHint } : {}),
      });
      return url.href;
    },

    /** Trades the callback's code (checked against state and PKCE verifier) for tokens. */
    async exchangeCode(
      id: OAuthProviderId,
      callbackUrl: URL,
      flow: { state: string; codeVerifier: string },
      now: Date,
    ): Promise<IssuedTokens> {
      const found = provider(id);
      try {
        const tokens = await client.authorizationCodeGrant(await configuration(id), callbackUrl, {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: flow.state,
        });
        return issued(tokens, now);
      } catch (error) {
        throw new TokenUnavailableError(
          `${found.name} did not complete the sign-in (${describe(error)})`,
          isRefusedGrant(error) || error instanceof client.AuthorizationResponseError,
        );
      }
    },

    /**
     * Tells the provider a refresh token is no longer wanted (RFC 7009), where it has a revocation
     * endpoint; without one there is nothing to do.
     */
    async revoke(id: OAuthProviderId, refreshToken: string): Promise<void> {
      const config = await configuration(id);
      if (!config.serverMetadata().revocation_endpoint) return;
      await client.tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' });
    },

    /** New access token for a refresh token; TokenUnavailableError says whether access is gone for good. */
    async refresh(id: OAuthProviderId, refreshToken: string, now: Date): Promise<IssuedTokens> {
      const found = provider(id);
      try {
        return issued(await client.refreshTokenGrant(await configuration(id), refreshToken), now);
      } catch (error) {
        if (isRefusedGrant(error)) {
          throw new TokenUnavailableError(
            `${found.name} no longer accepts this mailbox's sign-in (${describe(error)}): the access was revoked or has expired. Reconnect the mailbox`,
            true,
          );
        }
        throw new TokenUnavailableError(
          `${found.name}'s sign-in service cannot renew access right now (${describe(error)})`,
          false,
        );
      }
    },
  };
}

export type OAuthClient = ReturnType<typeof createOAuthClient>;
