/*
 * Sign-in through the operator's OpenID Connect provider (Google Workspace, Microsoft Entra,
 * Keycloak …), read once from WARMUP_OIDC_*. Off unless an issuer and a client are set.
 */
import { ConfigError } from '../config.js';
import { url } from '../oauth/oauth.config.js';

export interface OidcSettings {
  /** What the sign-in button says: "Sign in with <name>". */
  name: string;
  /** The issuer whose discovery document (/.well-known/openid-configuration) names the endpoints. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** WARMUP_PUBLIC_URL: the redirect URI registered with the provider is `<url>/api/session/oidc/callback`. */
  publicUrl: string;
}

export const OIDC_CALLBACK_PATH = '/api/session/oidc/callback';
export const OIDC_START_PATH = '/api/session/oidc/start';

export function loadOidcSettings(env: NodeJS.ProcessEnv): OidcSettings | undefined {
  const issuer = url(env, 'WARMUP_OIDC_ISSUER');
  const clientId = env.WARMUP_OIDC_CLIENT_ID || undefined;
  const clientSecret = env.WARMUP_OIDC_CLIENT_SECRET || undefined;
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId || !clientSecret) {
    throw new ConfigError(
      'WARMUP_OIDC_ISSUER, WARMUP_OIDC_CLIENT_ID and WARMUP_OIDC_CLIENT_SECRET must be set together for OpenID Connect sign-in',
    );
  }
  const publicUrl = url(env, 'WARMUP_PUBLIC_URL');
  if (!publicUrl) {
    throw new ConfigError(
      `WARMUP_PUBLIC_URL must be set with WARMUP_OIDC_ISSUER: the redirect URI registered with the provider is <WARMUP_PUBLIC_URL>${OIDC_CALLBACK_PATH}`,
    );
  }
  return { name: env.WARMUP_OIDC_NAME?.trim() || 'your organization', issuer, clientId, clientSecret, publicUrl };
}
