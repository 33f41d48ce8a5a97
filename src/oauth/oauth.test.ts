// OAuth 2.0 mailboxes end to end on loopback: a real authorization server (oidc-provider) stands
// in for Microsoft, configured through the same WARMUP_OAUTH_* settings an operator sets, and a
// private Postfix + Dovecot checks every XOAUTH2 login at that server's introspection endpoint.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { LOG_REDACT_PATHS } from '../app.js';
import { fixedClock } from '../clock.js';
import { createEngine, type Engine } from '../jobs/job-list.js';
import { verifyImap } from '../mail/imap.js';
import { verifySmtp } from '../mail/smtp.js';
import { loadSecretKey, decryptSecret } from '../secrets/secrets.js';
import { testEngineDeps } from '../../test/helpers/engine.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { createPerson, openSession, type TestPerson } from '../../test/helpers/accounts.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../../test/mailstack/private-stack.js';
import { describeWithMailStack, stackMailPolicy } from '../../test/mailstack/use-mail-stack.js';
import { startOAuthStandIn, type OAuthStandIn } from '../../test/oauth/oauth-stand-in.js';
import { loadOAuthSettings } from './oauth.config.js';
import { REFRESH_MARGIN_MS } from './oauth.tokens.js';

const USERS = [
  { email: 'olga@oauth-one.test', password: 'olga-pass-123' },
  { email: 'otto@oauth-two.test', password: 'otto-pass-123' },
  { email: 'opal@oauth-two.test', password: 'opal-pass-123' },
];
const [olga, otto, opal] = USERS;

// with the run's mail stack (Postfix and Dovecot are installed), a private one of this file's own
describeWithMailStack('OAuth 2.0 mailboxes against a real authorization server and mail stack', () => {
  const clock = fixedClock('2026-11-26T09:00:00.000Z');
  const publicUrl = `http://127.0.0.1:${40_000 + (process.pid % 9_000)}`;
  let standIn: OAuthStandIn;
  let stack: PrivateMailStack;
  let t: TestApp;
  let engine: Engine;
  const key = loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: '/nonexistent' });
  const responses: string[] = [];
  const logLines: string[] = [];

  async function call(workspace: TestWorkspace, options: Parameters<TestWorkspace['request']>[0]) {
    const res = await workspace.request(options);
    responses.push(`${JSON.stringify(res.headers)}\n${res.body}`);
    return res;
  }

  async function callback(url: URL): Promise<LightMyRequestResponse> {
    const res = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    responses.push(`${JSON.stringify(res.headers)}\n${res.body}`);
    return res;
  }

  async function authorize(workspace: TestWorkspace, body: Record<string, unknown> = {}): Promise<string> {
    const res = await call(workspace, { method: 'POST', url: '/api/oauth/microsoft/authorize', payload: body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().authorization.authorizationUrl as string;
  }

  const members = new Map<string, TestPerson>();
  /** A fresh session of the workspace's member: the tests move the clock past a session's life. */
  async function memberOf(workspace: TestWorkspace) {
    let person = members.get(workspace.id);
    if (!person) {
      person = await createPerson(t, workspace.id, 'member');
      members.set(workspace.id, person);
    }
    return openSession(t, person.userId, workspace.id);
  }

  /**
   * The whole flow as a member goes through it on the dashboard (started and finished in their
   * browser session): returns where the callback sent the browser.
   */
  async function connect(workspace: TestWorkspace, login: string, body: Record<string, unknown> = {}): Promise<URL> {
    const person = await memberOf(workspace);
    const started = await person.request({ method: 'POST', url: '/api/oauth/microsoft/authorize', payload: body });
    expect(started.statusCode, started.body).toBe(200);
    const back = await standIn.consent(started.json().authorization.authorizationUrl, login);
    const res = await t.app.inject({
      method: 'GET',
      url: `${back.pathname}${back.search}`,
      headers: { cookie: person.cookie },
    });
    responses.push(`${JSON.stringify(res.headers)}\n${res.body}`);
    expect(res.statusCode, res.body).toBe(303);
    return new URL(res.headers.location as string);
  }

  async function tokensOf(mailboxId: string) {
    const row = await t.database.db
      .selectFrom('mailboxes')
      .select(['refresh_token_encrypted', 'access_token_encrypted', 'access_token_expires_at'])
      .where('id', '=', mailboxId)
      .executeTakeFirstOrThrow();
    return {
      refresh: decryptSecret(key, row.refresh_token_encrypted!, `${mailboxId}:oauth-refresh`),
      access: decryptSecret(key, row.access_token_encrypted!, `${mailboxId}:oauth-access`),
      expiresAt: row.access_token_expires_at!,
      stored: row,
    };
  }

  async function mailbox(id: string) {
    const res = await call(t.workspace, { method: 'GET', url: `/api/mailboxes/${id}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().mailbox;
  }

  const seenTokens = new Set<string>();
  async function remember(mailboxId: string) {
    const tokens = await tokensOf(mailboxId);
    seenTokens.add(tokens.refresh);
    seenTokens.add(tokens.access);
    return tokens;
  }

  beforeAll(async () => {
    standIn = await startOAuthStandIn({ redirectUris: [`${publicUrl}/oauth/callback`] });
    stack = await startPrivateMailStack('oauth', USERS, {
      oauth2: { introspectionUrl: standIn.introspectionUrlWithCredentials },
    });
    // exactly what an operator puts in the environment to connect Microsoft mailboxes
    const oauth = loadOAuthSettings({
      WARMUP_PUBLIC_URL: publicUrl,
      WARMUP_OAUTH_MICROSOFT_CLIENT_ID: standIn.clientId,
      WARMUP_OAUTH_MICROSOFT_CLIENT_SECRET: standIn.clientSecret,
      WARMUP_OAUTH_MICROSOFT_ISSUER: standIn.issuer,
      WARMUP_OAUTH_MICROSOFT_IMAP_HOST: stack.host,
      WARMUP_OAUTH_MICROSOFT_IMAP_PORT: String(stack.imapPort),
      WARMUP_OAUTH_MICROSOFT_IMAP_SECURE: 'false',
      WARMUP_OAUTH_MICROSOFT_SMTP_HOST: stack.host,
      WARMUP_OAUTH_MICROSOFT_SMTP_PORT: String(stack.submissionPort),
      WARMUP_OAUTH_MICROSOFT_SMTP_SECURE: 'false',
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'trace', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
    t = await createTestApp({ clock, oauth, mailPolicy: stackMailPolicy(stack), logger });
    engine = createEngine(testEngineDeps(t, { seed: 3, workerId: 'oauth-worker' }));
  }, 90_000);

  afterAll(async () => {
    await engine?.stop();
    await t?.close();
    await stack?.stop();
    await standIn?.close();
  });

  let olgaId: string;
  let ottoId: string;

  it('lists the configured provider and refuses one that is not set up', async () => {
    const res = await call(t.workspace, { method: 'GET', url: '/api/oauth/providers' });
    expect(res.json()).toEqual({ providers: [{ id: 'microsoft', name: 'Microsoft' }] });
    expectProblem(await call(t.workspace, { method: 'POST', url: '/api/oauth/google/authorize' }), 404, 'not_found');
    const url = new URL(await authorize(t.workspace, { loginHint: olga.email }));
    expect(url.origin).toBe(standIn.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${publicUrl}/oauth/callback`);
    expect(url.searchParams.get('scope')).toContain('offline_access');
    expect(url.searchParams.get('scope')).toContain('https://outlook.office.com/IMAP.AccessAsUser.All');
    expect(url.searchParams.get('login_hint')).toBe(olga.email);
  });

  it('connects a mailbox: consent, callback, logins with the token, stored active, no token returned', async () => {
    const landed = await connect(t.workspace, olga.email);
    expect(landed.origin + landed.pathname).toMatch(new RegExp(`^${publicUrl}/mailboxes/mbx_`));
    expect(landed.searchParams.get('oauth')).toBe('connected');
    olgaId = landed.pathname.split('/').pop()!;
    const connected = await mailbox(olgaId);
    expect(connected).toMatchObject({
      email: olga.email,
      provider: 'outlook',
      connectionType: 'oauth2',
      oauthProvider: 'microsoft',
      status: 'active',
      imap: { host: stack.host, port: stack.imapPort, secure: false, username: olga.email },
      lastError: null,
    });
    const tokens = await remember(olgaId);
    // encrypted at rest: the stored columns are not the tokens
    expect(JSON.stringify(tokens.stored)).not.toContain(tokens.access);
    expect(JSON.stringify(tokens.stored)).not.toContain(tokens.refresh);
    expect((await standIn.introspect(tokens.access)).active).toBe(true);

    const second = await connect(t.workspace, otto.email);
    ottoId = second.pathname.split('/').pop()!;
    await remember(ottoId);
  });

  it('a replayed, forged or expired callback, or one of another workspace, changes nothing', async () => {
    const before = await t.database.db.selectFrom('mailboxes').select('id').execute();
    // replayed: a fresh flow's answer used twice
    const back = await standIn.consent(await authorize(t.workspace), opal.email);
    const first = await callback(back);
    expect(first.statusCode).toBe(303);
    expect(new URL(first.headers.location as string).pathname).toBe('/oauth/confirm');
    const replay = await callback(back);
    expectProblem(replay, 400, 'oauth_state_invalid');
    // forged: a state nobody issued
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state-value-123');
    expectProblem(await callback(forged), 400, 'oauth_state_invalid');
    expectProblem(await callback(new URL(`${publicUrl}/oauth/callback?code=abc`)), 400, 'oauth_state_invalid');
    // expired: consent given after the flow's ten minutes
    const late = await authorize(t.workspace);
    clock.advance(11 * 60_000);
    expectProblem(await callback(await standIn.consent(late, opal.email)), 400, 'oauth_state_invalid');
    const after = await t.database.db.selectFrom('mailboxes').select('id').execute();
    expect(after.length).toBe(before.length);

    // another workspace's flow lands in that workspace, never in this one
    const other = await t.createWorkspace('other');
    const elsewhere = await connect(other, opal.email);
    const otherId = elsewhere.pathname.split('/').pop()!;
    expect((await call(other, { method: 'GET', url: `/api/mailboxes/${otherId}` })).statusCode).toBe(200);
    expect((await call(t.workspace, { method: 'GET', url: `/api/mailboxes/${otherId}` })).statusCode).toBe(404);
    const otherTokens = await remember(otherId);
    await call(other, { method: 'DELETE', url: `/api/mailboxes/${otherId}` });
    // a deleted mailbox gives its access back: the provider no longer takes its tokens
    expect((await standIn.introspect(otherTokens.refresh)).active).toBe(false);
    // reconnecting a mailbox of this workspace from another one is a 404
    expectProblem(
      await call(other, { method: 'POST', url: '/api/oauth/microsoft/authorize', payload: { mailboxId: olgaId } }),
      404,
      'not_found',
    );
  });

  it('a flow started in a browser session finishes only with that session', async () => {
    const person = await createPerson(t, t.workspace.id, 'member');
    const started = await person.request({ method: 'POST', url: '/api/oauth/microsoft/authorize', payload: {} });
    expect(started.statusCode, started.body).toBe(200);
    const back = await standIn.consent(started.json().authorization.authorizationUrl, opal.email);
    // the consent answer opened in a browser without the session (someone else's) connects nothing
    expectProblem(await callback(back), 400, 'oauth_state_invalid');

    const again = await person.request({ method: 'POST', url: '/api/oauth/microsoft/authorize', payload: {} });
    const answer = await standIn.consent(again.json().authorization.authorizationUrl, opal.email);
    const finished = await t.app.inject({
      method: 'GET',
      url: `${answer.pathname}${answer.search}`,
      headers: { cookie: person.cookie },
    });
    expect(finished.statusCode, finished.body).toBe(303);
    const opalId = new URL(finished.headers.location as string).pathname.split('/').pop()!;
    await remember(opalId);
    expect((await person.request({ method: 'GET', url: `/api/mailboxes/${opalId}` })).statusCode).toBe(200);
    await call(t.workspace, { method: 'DELETE', url: `/api/mailboxes/${opalId}` });
  });

  it('a flow started with an API key connects only when a signed-in member of its workspace confirms', async () => {
    const count = async () => (await t.database.db.selectFrom('mailboxes').select('id').execute()).length;
    const before = await count();
    // the attacker starts with their key and sends the consent link to the victim, who consents;
    // the victim's browser (no session of this workspace) reaches the callback
    const back = await standIn.consent(await authorize(t.workspace), opal.email);
    const landed = await callback(back);
    expect(landed.statusCode, landed.body).toBe(303);
    const page = new URL(landed.headers.location as string);
    expect(page.origin + page.pathname).toBe(`${publicUrl}/oauth/confirm`);
    const flow = page.searchParams.get('flow')!;
    expect(flow).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await count()).toBe(before);
    // the waiting tokens are stored encrypted only
    const waiting = await t.database.db.selectFrom('oauth_confirmations').selectAll().execute();
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ workspace_id: t.workspace.id, email: opal.email });
    expect(waiting[0]!.tokens_encrypted).not.toMatch(/refresh|access/i);

    const confirm = `/api/oauth/flows/${flow}/confirm`;
    // nobody signed in, the API key that started it, a member of another workspace, a viewer
    expectProblem(await t.app.inject({ method: 'POST', url: confirm }), 401, 'unauthorized');
    expectProblem(await call(t.workspace, { method: 'POST', url: confirm }), 403, 'forbidden');
    expectProblem(await call(t.workspace, { method: 'GET', url: `/api/oauth/flows/${flow}` }), 403, 'forbidden');
    const stranger = await createPerson(t, (await t.createWorkspace('attacker')).id, 'admin');
    expectProblem(await stranger.request({ method: 'POST', url: confirm }), 404, 'not_found');
    expectProblem(await stranger.request({ method: 'GET', url: `/api/oauth/flows/${flow}` }), 404, 'not_found');
    const viewer = await createPerson(t, t.workspace.id, 'viewer');
    expectProblem(await viewer.request({ method: 'POST', url: confirm }), 403, 'forbidden');
    // the session's CSRF token is needed like for any change
    const member = await createPerson(t, t.workspace.id, 'member');
    expectProblem(
      await t.app.inject({ method: 'POST', url: confirm, headers: { cookie: member.cookie } }),
      403,
      'csrf_failed',
    );
    expect(await count()).toBe(before);

    // a member of the workspace sees what they confirm, and confirms once
    const shown = await member.request({ method: 'GET', url: `/api/oauth/flows/${flow}` });
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.json().connection).toMatchObject({
      email: opal.email,
      provider: 'microsoft',
      providerName: 'Microsoft',
      workspace: { id: t.workspace.id, name: expect.any(String) as string },
      mailboxId: null,
    });
    const confirmed = await member.request({ method: 'POST', url: confirm });
    responses.push(`${JSON.stringify(confirmed.headers)}\n${confirmed.body}`);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const opalId = confirmed.json().mailbox.id as string;
    expect(confirmed.json().mailbox).toMatchObject({ email: opal.email, connectionType: 'oauth2', status: 'active' });
    await remember(opalId);
    expect(await count()).toBe(before + 1);
    expectProblem(await member.request({ method: 'POST', url: confirm }), 404, 'not_found');
    expect(await t.database.db.selectFrom('oauth_confirmations').selectAll().execute()).toEqual([]);
    await call(t.workspace, { method: 'DELETE', url: `/api/mailboxes/${opalId}` });

    // an account the mail servers refuse: the confirmation says so and stores nothing
    const refused = new URL(
      (await callback(await standIn.consent(await authorize(t.workspace), 'stranger@oauth-one.test'))).headers
        .location as string,
    ).searchParams.get('flow')!;
    const failed = await member.request({ method: 'POST', url: `/api/oauth/flows/${refused}/confirm` });
    expectProblem(failed, 422, 'connection_failed');
    expect(failed.json().detail).toMatch(/IMAP/);
    expect(await count()).toBe(before);

    // cancelled: the tokens are discarded and nothing connects
    const cancelled = new URL(
      (await callback(await standIn.consent(await authorize(t.workspace), opal.email))).headers.location as string,
    ).searchParams.get('flow')!;
    expect((await member.request({ method: 'DELETE', url: `/api/oauth/flows/${cancelled}` })).statusCode).toBe(204);
    expectProblem(
      await member.request({ method: 'POST', url: `/api/oauth/flows/${cancelled}/confirm` }),
      404,
      'not_found',
    );

    // expired: a confirmation after ten minutes finds nothing
    const late = new URL(
      (await callback(await standIn.consent(await authorize(t.workspace), opal.email))).headers.location as string,
    ).searchParams.get('flow')!;
    clock.advance(11 * 60_000);
    expectProblem(await member.request({ method: 'POST', url: `/api/oauth/flows/${late}/confirm` }), 404, 'not_found');
    expect(await count()).toBe(before);
  });

  it('sends the browser back with the reason when the mail servers refuse the signed-in account', async () => {
    const before = await t.database.db.selectFrom('mailboxes').select('id').execute();
    // the provider knows this account, the mail stack does not: no login gets through
    const landed = await connect(t.workspace, 'stranger@oauth-one.test');
    expect(landed.pathname).toBe('/mailboxes/new');
    expect(landed.searchParams.get('oauth_error')).toMatch(/IMAP/);
    expect(await t.database.db.selectFrom('mailboxes').select('id').execute()).toHaveLength(before.length);
  });

  it('refuses a password or server change on an OAuth mailbox', async () => {
    const res = await call(t.workspace, {
      method: 'PATCH',
      url: `/api/mailboxes/${olgaId}`,
      payload: { password: 'not-used-here' },
    });
    expectProblem(res, 400, 'validation_error');
    expect(res.json().detail).toMatch(/reconnect/);
  });

  it('the engine proves, sends and reads with tokens only', { timeout: 90_000 }, async () => {
    for (let i = 0; i < 6; i += 1) {
      const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      clock.advance(60_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    for (const id of [olgaId, ottoId]) {
      const m = await mailbox(id);
      expect(m.pool.member, JSON.stringify(m.pool)).toBe(true);
      expect(m.status).toBe('active');
    }
    const sent = await t.database.db
      .selectFrom('warmup_messages')
      .select(['status', 'found_at'])
      .where('status', '=', 'sent')
      .execute();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.some((row) => row.found_at !== null)).toBe(true);
  });

  it('renews an access token before it expires, mid-day, and keeps working', { timeout: 60_000 }, async () => {
    const before = await tokensOf(olgaId);
    // an hour later the stored token is within the renewal margin
    clock.set(new Date(Date.parse(before.expiresAt) - REFRESH_MARGIN_MS + 1_000));
    const { imap, smtp } = await t.services.mailboxes.getCredentials(olgaId);
    await verifyImap(imap, { timeoutMs: 10_000 });
    const after = await remember(olgaId);
    expect(after.access).not.toBe(before.access);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.parse(before.expiresAt));
    await verifySmtp(smtp, { timeoutMs: 10_000 });
    // the renewed token is used until it nears its own expiry
    expect((await tokensOf(olgaId)).access).toBe(after.access);
    const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
    expect(summary.errors).toEqual([]);
    expect((await mailbox(olgaId)).status).toBe('active');
  });

  it('renews once more when the server refuses a token that should still work', async () => {
    const before = await tokensOf(ottoId);
    await standIn.revoke(before.access);
    expect((await standIn.introspect(before.access)).active).toBe(false);
    const { imap, smtp } = await t.services.mailboxes.getCredentials(ottoId);
    await verifyImap(imap, { timeoutMs: 10_000 });
    const after = await remember(ottoId);
    expect(after.access).not.toBe(before.access);
    await verifySmtp(smtp, { timeoutMs: 10_000 });
  });

  it('a provider that is down during a renewal is a temporary failure, healed when it is back', async () => {
    const before = await tokensOf(ottoId);
    clock.set(new Date(Date.parse(before.expiresAt) + 60_000));
    await standIn.stop();
    try {
      const { imap } = await t.services.mailboxes.getCredentials(ottoId);
      const failure = await verifyImap(imap, { timeoutMs: 10_000 }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ kind: 'connection', code: 'OAUTH_UNAVAILABLE' });
      expect(String((failure as Error).message)).toMatch(/cannot renew access/);
      // the engine counts it as temporary: the mailbox stays active and backs off
      await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
      const during = await mailbox(ottoId);
      expect(during.status).toBe('active');
    } finally {
      await standIn.start();
    }
    const { imap } = await t.services.mailboxes.getCredentials(ottoId);
    await verifyImap(imap, { timeoutMs: 10_000 });
    await remember(ottoId);
    expect((await mailbox(ottoId)).status).toBe('active');
  });

  it('a revoked refresh token stops the mailbox with "reconnect"; reconnecting restores it with its history', async () => {
    const before = await tokensOf(olgaId);
    const history = await t.database.db
      .selectFrom('interactions')
      .select('id')
      .where('mailbox_id', '=', olgaId)
      .execute();
    expect(history.length).toBeGreaterThan(0);
    await standIn.revoke(before.refresh);
    clock.set(new Date(Date.parse(before.expiresAt) + 60_000));
    const { smtp } = await t.services.mailboxes.getCredentials(olgaId);
    const failure = await verifySmtp(smtp, { timeoutMs: 10_000 }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ kind: 'auth', code: 'OAUTH_REVOKED' });
    const stopped = await mailbox(olgaId);
    expect(stopped.status).toBe('error');
    expect(stopped.lastError).toMatch(/Reconnect the mailbox/);

    // reconnect: the same flow for this mailbox; signing in as someone else is refused
    const wrong = await connect(t.workspace, otto.email, { mailboxId: olgaId });
    expect(wrong.pathname).toBe(`/mailboxes/${olgaId}`);
    expect(wrong.searchParams.get('oauth_error')).toMatch(/sign in as olga@oauth-one\.test/);
    expect((await mailbox(olgaId)).status).toBe('error');

    const landed = await connect(t.workspace, olga.email, { mailboxId: olgaId });
    expect(landed.pathname).toBe(`/mailboxes/${olgaId}`);
    expect(landed.searchParams.get('oauth')).toBe('connected');
    const restored = await mailbox(olgaId);
    expect(restored).toMatchObject({ id: olgaId, status: 'active', lastError: null });
    const kept = await t.database.db.selectFrom('interactions').select('id').where('mailbox_id', '=', olgaId).execute();
    expect(kept.length).toBe(history.length);
    await remember(olgaId);
    const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
    expect(summary.errors).toEqual([]);
    expect((await mailbox(olgaId)).status).toBe('active');
  });

  it('no token appears in any response, log line or export', async () => {
    const exported = await call(t.workspace, { method: 'GET', url: '/api/stats/export?format=csv&period=7d' });
    expect(exported.statusCode).toBe(200);
    const json = await call(t.workspace, { method: 'GET', url: '/api/stats/export?format=json&period=7d' });
    expect(json.statusCode).toBe(200);
    const everything = [...responses, ...logLines].join('\n');
    expect(seenTokens.size).toBeGreaterThanOrEqual(8);
    for (const token of seenTokens) expect(everything).not.toContain(token);
    // the authorization code and state of the callbacks are not logged either
    expect(logLines.join('\n')).not.toMatch(/[?&]code=/);
  });
});
