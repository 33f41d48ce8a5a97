// A real OAuth 2.0 / OpenID Connect authorization server on loopback (oidc-provider), standing in
// for Google and Microsoft in tests: authorization code with PKCE, consent pages, refresh tokens,
// revocation, and the introspection endpoint the test Dovecot checks tokens at. Accounts are mail
// addresses: whoever signs in as `x@y.test` (any password) gets tokens whose subject is that address.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Provider from 'oidc-provider';

export interface OAuthStandIn {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  /** The introspection URL with the client's credentials in it, as Dovecot's config wants it. */
  introspectionUrlWithCredentials: string;
  /** Stops answering (connections refused) until start() — the server "down". */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Revokes one token (access or refresh) as the client would. */
  revoke(token: string): Promise<void>;
  /**
   * What a user does in the browser, without one: opens `authorizationUrl`, signs in as `login` and
   * consents on the stand-in's own pages. Answers the redirect back to the app (not followed).
   */
  consent(authorizationUrl: string, login: string): Promise<URL>;
  /** Whether the server still accepts this token (its introspection answer). */
  introspect(token: string): Promise<{ active: boolean; sub?: string }>;
  close(): Promise<void>;
}

export const MAIL_SCOPES = [
  'https://mail.google.com/',
  'https://outlook.office.com/IMAP.AccessAsUser.All',
  'https://outlook.office.com/SMTP.Send',
];

async function listen(server: http.Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export async function startOAuthStandIn(options: {
  redirectUris: string[];
  /** Seconds an access token lives (default an hour, like Google and Microsoft). */
  accessTokenTtl?: number;
  /** Claims of a login that differ from the defaults (say, `email_verified: false`). */
  claimsOf?: (login: string) => Record<string, unknown>;
  /** A refresh token with every code, as Google gives one for access_type=offline without the offline_access scope. */
  refreshLikeGoogle?: boolean;
}): Promise<OAuthStandIn> {
  const clientId = 'warmup-test-client';
  const clientSecret = `stand-in-secret-${Math.random().toString(36).slice(2)}`;
  // the port is fixed first: the issuer URL is part of every token
  const probe = http.createServer();
  const port = await listen(probe, 0);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        introspection_endpoint_auth_method: 'client_secret_basic',
        revocation_endpoint_auth_method: 'client_secret_post',
      },
    ],
    pkce: { required: () => true },
    // and Gmail Postmaster Tools' scope, which the provider feeds ask for (src/feeds/)
    scopes: [
      'openid',
      'email',
      'profile',
      'offline_access',
      ...MAIL_SCOPES,
      'https://www.googleapis.com/auth/postmaster.traffic.readonly',
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: id,
        email_verified: true,
        preferred_username: id,
        name: id.split('@')[0],
        ...options.claimsOf?.(id),
      }),
    }),
    // the login Dovecot reads from the introspection answer (username_attribute = username)
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) =>
      token.accountId ? { username: token.accountId } : undefined,
    features: {
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
    },
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      AuthorizationCode: 120,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
      IdToken: 3600,
      RefreshToken: 14 * 86_400,
    },
    // a refresh token whenever offline_access was granted (with prompt=consent, as per the spec)
    rotateRefreshToken: false,
    ...(options.refreshLikeGoogle ? { issueRefreshToken: () => true } : {}),
    // like Google and Microsoft: the address rides in the ID token itself
    conformIdTokenClaims: false,
    cookies: { keys: ['stand-in-cookie-key'] },
  });
  provider.on('server_error', (_ctx, error) => console.error('OAuth stand-in server_error', error));

  let server: http.Server | null = null;
  const sockets = new Set<Socket>();
  async function start(): Promise<void> {
    if (server) return;
    server = http.createServer(provider.callback());
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await listen(server, port);
  }
  async function stop(): Promise<void> {
    if (!server) return;
    const closing = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  }
  await start();

  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  return {
    issuer,
    port,
    clientId,
    clientSecret,
    introspectionUrlWithCredentials: `http://${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}@127.0.0.1:${port}/token/introspection`,
    start,
    stop,
    async revoke(token) {
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: clientId, client_secret: clientSecret }),
      });
      if (!res.ok) throw new Error(`revocation answered ${res.status}: ${await res.text()}`);
    },
    async consent(authorizationUrl, login) {
      const cookies = new Map<string, string>();
      const redirectBase = new URL(authorizationUrl).searchParams.get('redirect_uri') ?? '';
      const request = async (url: string, form?: Record<string, string>): Promise<Response> => {
        const res = await fetch(url, {
          method: form ? 'POST' : 'GET',
          redirect: 'manual',
          headers: {
            cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
            ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          body: form ? new URLSearchParams(form) : undefined,
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const at = pair!.indexOf('=');
          cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
        }
        return res;
      };
      let res = await request(authorizationUrl);
      for (let step = 0; step < 20; step += 1) {
        const location = res.headers.get('location');
        if (location) {
          const next = new URL(location, issuer);
          if (redirectBase && next.href.startsWith(redirectBase)) return next;
          res = await request(next.href);
          continue;
        }
        const page = await res.text();
        const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
        if (!action) throw new Error(`stand-in page without a form (${res.status}): ${page.slice(0, 500)}`);
        const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1] ?? '';
        const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
        res = await request(new URL(action, issuer).href, form);
      }
      throw new Error('the consent flow did not come back to the app');
    },
    async introspect(token) {
      const res = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({ token }),
      });
      return (await res.json()) as { active: boolean; sub?: string };
    },
    close: stop,
  };
}
