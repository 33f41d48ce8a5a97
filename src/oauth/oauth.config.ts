/*
 * The OAuth providers an operator turns on, read once from the environment. A provider is on when
 * its client id and secret are set. Google and Microsoft come with their real endpoints, scopes and
 * mail servers; each of those can be overridden (a national cloud, a test server), and the generic
 * provider needs them named. Everything downstream receives the parsed result.
 */
import { ConfigError, parseUrl, type SettingDoc } from '../settings.js';
import type { OAuthProviderId } from './oauth.schemas.js';

export interface OAuthServer {
  host: string;
  port: number;
  secure: boolean;
}

export interface OAuthProviderSettings {
  id: OAuthProviderId;
  /** What the dashboard's button says: "Connect with <name>". */
  name: string;
  clientId: string;
  clientSecret: string;
  /** OpenID Connect issuer, whose discovery document names the endpoints. */
  issuer?: string;
  /** Without an issuer: the endpoints themselves. */
  authorizationUrl?: string;
  tokenUrl?: string;
  revocationUrl?: string;
  scopes: string[];
  /** Extra parameters of the authorization request (Google: access_type=offline). */
  authorizationParams: Record<string, string>;
  /** The mailbox provider preset the connected mailbox gets. */
  mailboxProvider: 'gmail' | 'outlook' | 'custom';
  imap: OAuthServer;
  smtp: OAuthServer;
}

export interface OAuthSettings {
  /** WARMUP_PUBLIC_URL: where browsers reach this service; the redirect URI is `<url>/oauth/callback`. */
  publicUrl: string | undefined;
  providers: Partial<Record<OAuthProviderId, OAuthProviderSettings>>;
}

const PRESETS: Record<
  Exclude<OAuthProviderId, 'generic'>,
  (env: NodeJS.ProcessEnv) => Omit<OAuthProviderSettings, 'id' | 'clientId' | 'clientSecret'>
> = {
  google: () => ({
    name: 'Google',
    issuer: 'https://accounts.google.com',
    // https://mail.google.com/ is the only scope Gmail's IMAP and SMTP accept for XOAUTH2
    scopes: ['openid', 'email', 'https://mail.google.com/'],
    // Google gives a refresh token only for access_type=offline, and again only with prompt=consent
    authorizationParams: { access_type: 'offline', prompt: 'consent' },
    mailboxProvider: 'gmail',
    imap: { host: 'imap.gmail.com', port: 993, secure: true },
    smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
  }),
  microsoft: (env) => ({
    name: 'Microsoft',
    // `common` takes work and school accounts (Microsoft 365) and personal ones (Outlook.com)
    issuer: `https://login.microsoftonline.com/${env.WARMUP_OAUTH_MICROSOFT_TENANT || 'common'}/v2.0`,
    scopes: [
      'openid',
      'email',
      'offline_access',
      'https://outlook.office.com/IMAP.AccessAsUser.All',
      'https://outlook.office.com/SMTP.Send',
    ],
    authorizationParams: { prompt: 'consent' },
    mailboxProvider: 'outlook',
    imap: { host: 'outlook.office365.com', port: 993, secure: true },
    smtp: { host: 'smtp.office365.com', port: 587, secure: false },
  }),
};

function url(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : parseUrl(name, raw);
}

function server(env: NodeJS.ProcessEnv, prefix: string, fallback: OAuthServer | undefined): OAuthServer | undefined {
  const host = env[`${prefix}_HOST`] || fallback?.host;
  const portText = env[`${prefix}_PORT`];
  const secureText = env[`${prefix}_SECURE`];
  if (host === undefined) return undefined;
  const port = portText ? Number(portText) : fallback?.port;
  if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError(`${prefix}_PORT must be a port number (1-65535), got "${portText ?? ''}"`);
  }
  let secure = fallback?.secure;
  if (secureText !== undefined && secureText !== '') {
    if (!['true', 'false'].includes(secureText)) {
      throw new ConfigError(`${prefix}_SECURE must be true (implicit TLS) or false (STARTTLS), got "${secureText}"`);
    }
    secure = secureText === 'true';
  }
  if (secure === undefined) throw new ConfigError(`${prefix}_SECURE must be set (true: implicit TLS, false: STARTTLS)`);
  return { host, port, secure };
}

function provider(env: NodeJS.ProcessEnv, id: OAuthProviderId): OAuthProviderSettings | undefined {
  const prefix = `WARMUP_OAUTH_${id.toUpperCase()}`;
  const clientId = env[`${prefix}_CLIENT_ID`];
  const clientSecret = env[`${prefix}_CLIENT_SECRET`];
  if (!clientId) return undefined;
  if (!clientSecret) throw new ConfigError(`${prefix}_CLIENT_SECRET must be set with ${prefix}_CLIENT_ID`);
  const preset = id === 'generic' ? undefined : PRESETS[id](env);
  const scopesText = env[`${prefix}_SCOPES`];
  const scopes = scopesText
    ? scopesText.split(/[\s,]+/).filter(Boolean)
    : (preset?.scopes ?? ['openid', 'email', 'offline_access']);
  const settings: OAuthProviderSettings = {
    id,
    name: env[`${prefix}_NAME`] || preset?.name || 'your mail provider',
    clientId,
    clientSecret,
    scopes,
    authorizationParams: preset?.authorizationParams ?? { prompt: 'consent' },
    mailboxProvider: preset?.mailboxProvider ?? 'custom',
    imap: server(env, `${prefix}_IMAP`, preset?.imap)!,
    smtp: server(env, `${prefix}_SMTP`, preset?.smtp)!,
  };
  const issuer = url(env, `${prefix}_ISSUER`) ?? preset?.issuer;
  const authorizationUrl = url(env, `${prefix}_AUTHORIZATION_URL`);
  const tokenUrl = url(env, `${prefix}_TOKEN_URL`);
  const revocationUrl = url(env, `${prefix}_REVOCATION_URL`);
  if (authorizationUrl && tokenUrl) {
    Object.assign(settings, { authorizationUrl, tokenUrl, ...(revocationUrl ? { revocationUrl } : {}) });
  } else if (issuer) {
    settings.issuer = issuer;
  } else {
    throw new ConfigError(`${prefix}_ISSUER, or ${prefix}_AUTHORIZATION_URL and ${prefix}_TOKEN_URL, must be set`);
  }
  if (!settings.imap || !settings.smtp) {
    throw new ConfigError(`${prefix}_IMAP_HOST and ${prefix}_SMTP_HOST (with _PORT and _SECURE) must be set`);
  }
  return settings;
}

const provider_ = '`WARMUP_OAUTH_<PROVIDER>_`';

/*
 * The settings loadOAuthSettings reads, for the configuration reference. `<PROVIDER>` is GOOGLE,
 * MICROSOFT or GENERIC; Google and Microsoft come with every one but the client id and secret.
 */
export const OAUTH_SETTINGS: readonly SettingDoc[] = [
  {
    name: 'WARMUP_PUBLIC_URL',
    default: 'unset',
    description:
      'The address browsers reach Warmup at; needed with OAuth (the redirect URI is `<url>/oauth/callback`) and OpenID Connect sign-in (`<url>/api/session/oidc/callback`). Also what `npm start` prints as the setup address, and where peer installations reach this one: peering needs it, and its origin is the `@target-uri` their signatures cover (see [the peer protocol](../reference/peer-protocol.md)).',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_CLIENT_ID',
    default: 'unset',
    description:
      'With the client secret, turns on "Connect with Google" (GOOGLE), "Connect with Microsoft" (MICROSOFT) or another provider whose mail servers accept XOAUTH2 (GENERIC); see [OAuth set-up](../how-to/oauth.md).',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_CLIENT_SECRET',
    default: 'unset',
    description: 'The client secret of that OAuth client; required with the client id.',
  },
  {
    name: 'WARMUP_OAUTH_MICROSOFT_TENANT',
    default: '`common`',
    description:
      'The Microsoft tenant whose accounts may connect: `common` takes work and school accounts (Microsoft 365) and personal ones (Outlook.com); a tenant id or domain limits it to one organisation.',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_NAME',
    default: 'Google, Microsoft; GENERIC: `your mail provider`',
    description: "What the dashboard's button says: `Connect with <name>`.",
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_ISSUER',
    default: 'Google: `https://accounts.google.com`; Microsoft: `https://login.microsoftonline.com/<tenant>/v2.0`',
    description:
      'The OpenID Connect issuer whose discovery document names the endpoints. GENERIC needs it, or the two URLs below.',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_AUTHORIZATION_URL',
    default: 'unset',
    description: `With ${provider_}TOKEN_URL, the endpoints themselves instead of an issuer.`,
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_TOKEN_URL',
    default: 'unset',
    description: `The token endpoint, with ${provider_}AUTHORIZATION_URL.`,
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_REVOCATION_URL',
    default: 'unset',
    description: "Where a disconnected mailbox's token is revoked, when the endpoints are named without an issuer.",
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_SCOPES',
    default: "the provider's mail scopes; GENERIC: `openid email offline_access`",
    description: 'The scopes asked for, separated by spaces or commas.',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_IMAP_HOST',
    default: '`imap.gmail.com`, `outlook.office365.com`',
    description: `The IMAP server of connected mailboxes, with ${provider_}IMAP_PORT and ${provider_}IMAP_SECURE; GENERIC needs all three.`,
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_IMAP_PORT',
    default: '`993`',
    description: 'Its port (1–65535).',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_IMAP_SECURE',
    default: '`true`',
    description: '`true`: implicit TLS; `false`: STARTTLS.',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_SMTP_HOST',
    default: '`smtp.gmail.com`, `smtp.office365.com`',
    description: `The SMTP server of connected mailboxes, with ${provider_}SMTP_PORT and ${provider_}SMTP_SECURE; GENERIC needs all three.`,
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_SMTP_PORT',
    default: 'Google `465`, Microsoft `587`',
    description: 'Its port (1–65535).',
  },
  {
    name: 'WARMUP_OAUTH_<PROVIDER>_SMTP_SECURE',
    default: 'Google `true`, Microsoft `false`',
    description: '`true`: implicit TLS; `false`: STARTTLS.',
  },
];

export function loadOAuthSettings(env: NodeJS.ProcessEnv): OAuthSettings {
  const providers: OAuthSettings['providers'] = {};
  for (const id of ['google', 'microsoft', 'generic'] as const) {
    const settings = provider(env, id);
    if (settings) providers[id] = settings;
  }
  const publicUrl = url(env, 'WARMUP_PUBLIC_URL');
  if (Object.keys(providers).length > 0 && publicUrl === undefined) {
    throw new ConfigError(
      'WARMUP_PUBLIC_URL must be set when an OAuth provider is configured: the redirect URI registered with the provider is <WARMUP_PUBLIC_URL>/oauth/callback',
    );
  }
  return { publicUrl, providers };
}
