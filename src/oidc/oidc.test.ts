// Signing in through an OpenID Connect provider, end to end on loopback: a real authorization
// server (oidc-provider) stands in for the operator's Google Workspace, Entra or Keycloak,
// configured through the same WARMUP_OIDC_* settings an operator sets.
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_REDACT_PATHS } from '../app.js';
import { ConfigError } from '../config.js';
import { createPerson } from '../../test/helpers/accounts.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { testDialect } from '../../test/helpers/test-database.js';
import { startOAuthStandIn, type OAuthStandIn } from '../../test/oauth/oauth-stand-in.js';
import { loadOidcSettings, OIDC_CALLBACK_PATH } from './oidc.config.js';

const publicUrl = 'http://warmup.example.test';

describe(`sign-in through an OpenID Connect provider (${testDialect})`, () => {
  let standIn: OAuthStandIn;
  let t: TestApp;
  const logLines: string[] = [];
  const inviteTokens: string[] = [];

  beforeAll(async () => {
    standIn = await startOAuthStandIn({
      redirectUris: [`${publicUrl}${OIDC_CALLBACK_PATH}`],
      claimsOf: (login) => (login.startsWith('unverified') ? { email_verified: false } : {}),
    });
    const oidc = loadOidcSettings({
      WARMUP_OIDC_ISSUER: standIn.issuer,
      WARMUP_OIDC_CLIENT_ID: standIn.clientId,
      WARMUP_OIDC_CLIENT_SECRET: standIn.clientSecret,
      WARMUP_OIDC_NAME: 'Acme SSO',
      WARMUP_PUBLIC_URL: publicUrl,
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'trace', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
    t = await createTestApp({ oidc, logger, slowRequestMs: 0 });
  });

  afterAll(async () => {
    await t?.close();
    await standIn?.close();
  });

  function cookiesOf(res: LightMyRequestResponse): string[] {
    const header = res.headers['set-cookie'];
    return Array.isArray(header) ? header : header ? [header] : [];
  }

  /** Opens the start route as a browser does: the provider's page, and the cookie binding the flow. */
  async function start(invite?: string): Promise<{ authorizationUrl: string; cookie: string }> {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/session/oidc/start${invite ? `?invite=${invite}` : ''}`,
    });
    expect(res.statusCode, res.body).toBe(303);
    const location = res.headers.location as string;
    expect(location.startsWith(`${standIn.issuer}/`), location).toBe(true);
    const line = cookiesOf(res).find((l) => l.startsWith('warmup_oidc='));
    expect(line).toMatch(/HttpOnly; SameSite=Lax/);
    expect(line).toMatch(/Path=\/api\/session\/oidc/);
    return { authorizationUrl: location, cookie: line!.split(';')[0]! };
  }

  async function callback(back: URL, cookie?: string): Promise<LightMyRequestResponse> {
    expect(back.pathname).toBe(OIDC_CALLBACK_PATH);
    return t.app.inject({
      method: 'GET',
      url: `${back.pathname}${back.search}`,
      ...(cookie ? { headers: { cookie } } : {}),
    });
  }

  /** The whole flow: start, sign in at the provider as `login`, come back with the cookie. */
  async function signInAs(login: string, invite?: string): Promise<LightMyRequestResponse> {
    const flow = await start(invite);
    return callback(await standIn.consent(flow.authorizationUrl, login), flow.cookie);
  }

  function signedInCookie(res: LightMyRequestResponse): string {
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/');
    const line = cookiesOf(res).find((l) => l.startsWith('warmup_session='));
    expect(line, JSON.stringify(res.headers)).toBeDefined();
    return line!.split(';')[0]!;
  }

  /** Where a refused sign-in sent the browser: the dashboard, with the reason; no session. */
  function refusal(res: LightMyRequestResponse): string {
    expect(res.statusCode, res.body).toBe(303);
    expect(cookiesOf(res).some((l) => l.startsWith('warmup_session='))).toBe(false);
    const location = new URL(res.headers.location as string, publicUrl);
    expect(location.pathname).toBe('/');
    return location.searchParams.get('oidc_error') ?? '';
  }

  async function sessionOf(cookie: string) {
    const res = await t.app.inject({ method: 'GET', url: '/api/session', headers: { cookie } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ user: { email: string; name: string }; workspace: { id: string } | null; role: string }>();
  }

  it('offers the button with the operator’s name', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/session/oidc' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ enabled: true, name: 'Acme SSO' });
  });

  it('signs in the account of a verified address, as password sign-in does', async () => {
    await createPerson(t, t.workspace.id, 'member', 'Known.Person@corp.test');
    const res = await signInAs('known.person@corp.test');
    const cookie = signedInCookie(res);
    expect(cookie).toMatch(/^warmup_session=[A-Za-z0-9_-]{40,}$/);
    // the flow's cookie is cleared on the way back
    expect(cookiesOf(res).find((l) => l.startsWith('warmup_oidc='))).toMatch(/^warmup_oidc=;.*Max-Age=0/);
    const session = await sessionOf(cookie);
    expect(session.user.email).toBe('Known.Person@corp.test');
    expect(session.workspace?.id).toBe(t.workspace.id);
    expect(session.role).toBe('member');
  });

  it('refuses an address no account uses, and makes no account for it', async () => {
    const message = refusal(await signInAs('stranger@corp.test'));
    expect(message).toContain('no account here uses stranger@corp.test');
    expect(message).toContain('invite');
    const found = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('email_normalized', '=', 'stranger@corp.test')
      .executeTakeFirst();
    expect(found).toBeUndefined();
  });

  it('refuses an address the provider has not verified, even of a known account', async () => {
    await createPerson(t, t.workspace.id, 'admin', 'unverified.admin@corp.test');
    const message = refusal(await signInAs('unverified.admin@corp.test'));
    expect(message).toBe(
      'Acme SSO has not verified the address unverified.admin@corp.test: verify it there, or sign in with your password',
    );
  });

  it('refuses a replayed, forged or handed-over answer', async () => {
    await createPerson(t, t.workspace.id, 'viewer', 'replay@corp.test');
    const flow = await start();
    const back = await standIn.consent(flow.authorizationUrl, 'replay@corp.test');
    signedInCookie(await callback(back, flow.cookie));
    // the same answer again, even from the same browser: the flow was used
    expect(refusal(await callback(back, flow.cookie))).toContain('already used');

    // a state nobody issued
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state-value-1234567890');
    expect(refusal(await callback(forged, flow.cookie))).toContain('unknown');

    // an answer carried to another browser (no cookie, or that browser's own flow cookie)
    const other = await start();
    const mine = await start();
    const handedOver = await standIn.consent(mine.authorizationUrl, 'replay@corp.test');
    expect(refusal(await callback(handedOver))).toContain('another browser');
    const stolen = await start();
    const stolenBack = await standIn.consent(stolen.authorizationUrl, 'replay@corp.test');
    expect(refusal(await callback(stolenBack, other.cookie))).toContain('another browser');
    // and a refused answer is used up: the right browser cannot finish it afterwards either
    expect(refusal(await callback(stolenBack, stolen.cookie))).toContain('already used');
  });

  it('comes back with the reason when the provider stops answering mid-flow', async () => {
    await createPerson(t, t.workspace.id, 'member', 'patient@corp.test');
    const flow = await start();
    const back = await standIn.consent(flow.authorizationUrl, 'patient@corp.test');
    await standIn.stop();
    try {
      expect(refusal(await callback(back, flow.cookie))).toMatch(/^Acme SSO did not complete the sign-in \(/);
    } finally {
      await standIn.start();
    }
    signedInCookie(await signInAs('patient@corp.test'));
  });

  it('makes the account of an invite with its role, once', async () => {
    const { token } = await t.services.accounts.createInvite({ role: 'owner', userId: null }, t.workspace.id, {
      role: 'viewer',
    });
    inviteTokens.push(token);
    // an unverified address does not take the invite
    refusal(await signInAs('unverified.newcomer@corp.test', token));

    const cookie = signedInCookie(await signInAs('newcomer@corp.test', token));
    const session = await sessionOf(cookie);
    expect(session.user).toMatchObject({ email: 'newcomer@corp.test', name: 'newcomer' });
    expect(session.workspace?.id).toBe(t.workspace.id);
    expect(session.role).toBe('viewer');
    const user = await t.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('email_normalized', '=', 'newcomer@corp.test')
      .executeTakeFirstOrThrow();
    expect(user.password_hash).toBe('');
    // a password account cannot be reached with an empty password or any other
    const passwordSignIn = await t.app.inject({
      method: 'POST',
      url: '/api/session',
      payload: { email: 'newcomer@corp.test', password: 'anything at all' },
    });
    expect(passwordSignIn.statusCode).toBe(401);

    // the invite is used: it starts no other flow
    const again = await t.app.inject({ method: 'GET', url: `/api/session/oidc/start?invite=${token}` });
    expect(refusal(again)).toContain('this invite link is not valid');
    // and the account now signs in without an invite
    signedInCookie(await signInAs('newcomer@corp.test'));
  });

  it('lets an existing account accept an invite to another workspace', async () => {
    const other = await t.createWorkspace('Second team');
    await createPerson(t, t.workspace.id, 'member', 'hopper@corp.test');
    const { token } = await t.services.accounts.createInvite({ role: 'owner', userId: null }, other.id, {
      role: 'admin',
    });
    inviteTokens.push(token);
    const session = await sessionOf(signedInCookie(await signInAs('hopper@corp.test', token)));
    expect(session.workspace?.id).toBe(other.id);
    expect(session.role).toBe('admin');
  });

  it('takes an invite addressed to someone only for that verified address', async () => {
    const { token } = await t.services.accounts.createInvite({ role: 'owner', userId: null }, t.workspace.id, {
      role: 'admin',
      email: 'Invited.One@corp.test',
    });
    inviteTokens.push(token);
    expect(refusal(await signInAs('someone.else@corp.test', token))).toContain(
      'this invite is for Invited.One@corp.test',
    );
    const none = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('email_normalized', '=', 'someone.else@corp.test')
      .execute();
    expect(none).toEqual([]);
    const session = await sessionOf(signedInCookie(await signInAs('invited.one@corp.test', token)));
    expect(session.role).toBe('admin');
  });

  it('logs neither an authorization code nor an invite token', () => {
    const logged = logLines.join('\n');
    expect(logged).toContain(`${OIDC_CALLBACK_PATH}?[redacted]`);
    expect(logged).not.toMatch(/[?&]code=/);
    expect(inviteTokens).toHaveLength(3);
    for (const token of inviteTokens) expect(logged).not.toContain(token);
  });
});

describe('WARMUP_OIDC_* settings', () => {
  const complete = {
    WARMUP_OIDC_ISSUER: 'https://login.example.com/realms/acme/',
    WARMUP_OIDC_CLIENT_ID: 'warmup',
    WARMUP_OIDC_CLIENT_SECRET: 'secret',
    WARMUP_PUBLIC_URL: 'https://warmup.example.com',
  };

  it('is off without settings, and complete with all of them', () => {
    expect(loadOidcSettings({})).toBeUndefined();
    expect(loadOidcSettings(complete)).toEqual({
      name: 'your organization',
      issuer: 'https://login.example.com/realms/acme',
      clientId: 'warmup',
      clientSecret: 'secret',
      publicUrl: 'https://warmup.example.com',
    });
  });

  it('names what is missing', () => {
    expect(() => loadOidcSettings({ ...complete, WARMUP_OIDC_CLIENT_SECRET: '' })).toThrow(ConfigError);
    expect(() => loadOidcSettings({ ...complete, WARMUP_PUBLIC_URL: undefined })).toThrow(/WARMUP_PUBLIC_URL/);
    expect(() => loadOidcSettings({ ...complete, WARMUP_OIDC_ISSUER: 'not a url' })).toThrow(/WARMUP_OIDC_ISSUER/);
  });

  it('offers no button and starts no flow when off', async () => {
    const plain = await createTestApp();
    try {
      expect((await plain.app.inject({ method: 'GET', url: '/api/session/oidc' })).json()).toEqual({
        enabled: false,
        name: null,
      });
      const res = await plain.app.inject({ method: 'GET', url: '/api/session/oidc/start' });
      expect(res.statusCode).toBe(303);
      expect(new URL(res.headers.location as string, publicUrl).searchParams.get('oidc_error')).toContain('not set up');
    } finally {
      await plain.close();
    }
  });
});
