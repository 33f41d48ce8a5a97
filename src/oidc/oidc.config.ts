/*
 * Sign-in through the operator's OpenID Connect provider (Google Workspace, Microsoft Entra,
 * Keycloak …), read once from WARMUP_OIDC_*. Off unless an issuer and a client are set.
 */
import { ConfigError, textSetting, urlSetting, type SettingDoc } from '../settings.js';

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

const SETTINGS = {
  issuer: urlSetting(
    'WARMUP_OIDC_ISSUER',
    'With `WARMUP_OIDC_CLIENT_ID`, `WARMUP_OIDC_CLIENT_SECRET` and `WARMUP_PUBLIC_URL`, turns on "Sign in with …" through your OpenID Connect provider (redirect URI `<url>/api/session/oidc/callback`). Only verified addresses of existing accounts, or of invite links, sign in: no account is made without an invite (see [people, roles and sessions](../accounts.md)).',
  ),
  clientId: textSetting('WARMUP_OIDC_CLIENT_ID', undefined, 'The client id registered with that provider.'),
  clientSecret: textSetting('WARMUP_OIDC_CLIENT_SECRET', undefined, 'Its client secret (never shown or logged).'),
  name: textSetting('WARMUP_OIDC_NAME', 'your organization', 'What the sign-in button names: `Sign in with <name>`.'),
  publicUrl: urlSetting('WARMUP_PUBLIC_URL', 'The address browsers reach Warmup at.'),
};

/** The settings loadOidcSettings reads, for the configuration reference (WARMUP_PUBLIC_URL is OAuth's). */
export const OIDC_SETTINGS: readonly SettingDoc[] = [
  SETTINGS.issuer,
  SETTINGS.clientId,
  SETTINGS.clientSecret,
  SETTINGS.name,
];

export function loadOidcSettings(env: NodeJS.ProcessEnv): OidcSettings | undefined {
  const issuer = SETTINGS.issuer.read(env);
  const clientId = SETTINGS.clientId.read(env);
  const clientSecret = SETTINGS.clientSecret.read(env);
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId || !clientSecret) {
    throw new ConfigError(
      'WARMUP_OIDC_ISSUER, WARMUP_OIDC_CLIENT_ID and WARMUP_OIDC_CLIENT_SECRET must be set together for OpenID Connect sign-in',
    );
  }
  const publicUrl = SETTINGS.publicUrl.read(env);
  if (!publicUrl) {
    throw new ConfigError(
      `WARMUP_PUBLIC_URL must be set with WARMUP_OIDC_ISSUER: the redirect URI registered with the provider is <WARMUP_PUBLIC_URL>${OIDC_CALLBACK_PATH}`,
    );
  }
  return { name: SETTINGS.name.read(env).trim() || 'your organization', issuer, clientId, clientSecret, publicUrl };
}
