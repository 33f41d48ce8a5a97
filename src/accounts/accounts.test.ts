import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { createPerson, sessionCookieOf, TEST_PASSWORD, type TestPerson } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';

const clock = fixedClock(new Date());
let t: TestApp;

const OWNER = {
  name: 'Olive Owner',
  email: 'Olive@Example.com',
  password: 'a long owner password',
  workspaceName: 'Acme',
};

/** A request with the cookie and CSRF token of a session answer (setup, sign-in, invite). */
function asSession(response: LightMyRequestResponse) {
  const cookie = sessionCookieOf(response);
  const { csrfToken } = response.json<{ csrfToken: string }>();
  return {
    cookie,
    csrfToken,
    request: (opts: InjectOptions) =>
      t.app.inject({ ...opts, headers: { cookie, 'x-csrf-token': csrfToken, ...(opts.headers ?? {}) } }),
  };
}

beforeAll(async () => {
  // workspace creation open to everyone here; who may make workspaces is proven in access-ends.test.ts
  t = await createTestApp({
    clock,
    trustProxy: true,
    loginLimits: { perAccount: 3, perAddress: 6, windowMs: 60_000 },
    workspaceCreation: { open: true },
  });
});

afterAll(async () => {
  await t.close();
});

describe('first-run setup', () => {
  it('creates the owner and the first workspace once, and signs the owner in', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({
      setupRequired: true,
      setupTokenRequired: false,
    });

    const created = await t.app.inject({ method: 'POST', url: '/api/setup', payload: OWNER });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({
      user: { email: 'Olive@Example.com', name: 'Olive Owner' },
      workspace: { name: 'Acme' },
      role: 'owner',
    });
    expect(body.workspaces).toEqual([{ id: body.workspace.id, name: 'Acme', role: 'owner' }]);
    const setCookie = String(created.headers['set-cookie']);
    expect(setCookie).toMatch(/^warmup_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).not.toContain('Secure');
    expect(JSON.stringify(body)).not.toContain(OWNER.password);

    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({
      setupRequired: false,
      setupTokenRequired: false,
    });
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/setup',
      payload: { ...OWNER, email: 'x@example.com' },
    });
    expectProblem(again, 409, 'conflict');

    // The first workspace has the default templates, like one made by `warmup workspace create`.
    const owner = asSession(created);
    const templates = await owner.request({ method: 'GET', url: '/api/templates' });
    expect(templates.statusCode).toBe(200);
    expect(templates.json().templates.length).toBeGreaterThan(0);
  });

  it('stores a memory-hard hash, never the password', async () => {
    const row = await t.database.db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$65536\$8\$2\$/);
    expect(row.password_hash).not.toContain(OWNER.password);
    expect(row.email_normalized).toBe('olive@example.com');
  });

  it('lets two racing browsers create exactly one owner', async () => {
    const race = await createTestApp();
    try {
      const answers = await Promise.all(
        [1, 2, 3, 4].map((i) =>
          race.app.inject({
            method: 'POST',
            url: '/api/setup',
            remoteAddress: `10.9.0.${i}`,
            payload: { ...OWNER, email: `owner${i}@example.com`, workspaceName: `Race ${i}` },
          }),
        ),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409, 409]);
      const users = await race.database.db.selectFrom('users').select('email').execute();
      expect(users).toHaveLength(1);
      const owners = await race.database.db.selectFrom('memberships').selectAll().execute();
      expect(owners).toHaveLength(1);
      const workspaces = await race.database.db
        .selectFrom('workspaces')
        .select('name')
        .where('name', 'like', 'Race %')
        .execute();
      expect(workspaces).toHaveLength(1);
    } finally {
      await race.close();
    }
  });

  it('answers an empty setup form in plain words naming each field, never a raw pattern', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/setup',
      payload: { name: ' ', email: 'not an address', password: TEST_PASSWORD, workspaceName: ' ' },
    });
    const problem = expectProblem(res, 400, 'validation_error', '/body/email');
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { path: '/body/name', message: 'must not be empty' },
        { path: '/body/email', message: 'must be an email address, like name@example.com' },
        { path: '/body/workspaceName', message: 'must not be empty' },
      ]),
    );
    expect(res.body).not.toMatch(/pattern|format|\\S|\^\[/);
  });
});

describe('sign-in and sessions', () => {
  it('signs in with the email in any case, sets a Secure cookie over HTTPS, and answers the session', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/session',
      headers: { 'x-forwarded-proto': 'https' },
      payload: { email: 'OLIVE@example.COM', password: OWNER.password },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(String(response.headers['set-cookie'])).toMatch(/; Secure/);
    const session = asSession(response);
    const me = await session.request({ method: 'GET', url: '/api/session' });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      user: { email: 'Olive@Example.com' },
      role: 'owner',
      csrfToken: session.csrfToken,
    });
    // The session token is stored hashed.
    const stored = await t.database.db.selectFrom('sessions').select('token_hash').execute();
    const token = session.cookie.split('=')[1]!;
    expect(stored.map((s) => s.token_hash)).not.toContain(token);
  });

  it('refuses a wrong password with 401, and a state change by cookie without the CSRF token with 403', async () => {
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/session',
        payload: { email: OWNER.email, password: 'wrong password' },
      }),
      401,
      'unauthorized',
    );
    const signedIn = await t.app.inject({
      method: 'POST',
      url: '/api/session',
      payload: { email: OWNER.email, password: OWNER.password },
    });
    const session = asSession(signedIn);
    const template = { name: 'By cookie', type: 'initial', language: 'en', subject: 'Hi', body: 'Hello there' };
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/templates',
        headers: { cookie: session.cookie },
        payload: template,
      }),
      403,
      'csrf_failed',
    );
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/api/templates',
        headers: { cookie: session.cookie, 'x-csrf-token': 'not-the-token' },
        payload: template,
      }),
      403,
      'csrf_failed',
    );
    const created = await session.request({ method: 'POST', url: '/api/templates', payload: template });
    expect(created.statusCode, created.body).toBe(201);
    // Reading needs no CSRF token; an API key needs none for anything.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/templates', headers: { cookie: session.cookie } })).statusCode,
    ).toBe(200);
  });

  it('ends a session on sign-out, every session on sign-out everywhere, and an expired one by itself', async () => {
    const sign = () =>
      t.app.inject({ method: 'POST', url: '/api/session', payload: { email: OWNER.email, password: OWNER.password } });
    const first = asSession(await sign());
    const second = asSession(await sign());
    const out = await first.request({ method: 'DELETE', url: '/api/session' });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^warmup_session=; .*Max-Age=0/);
    expectProblem(await first.request({ method: 'GET', url: '/api/session' }), 401, 'unauthorized');
    expect((await second.request({ method: 'GET', url: '/api/session' })).statusCode).toBe(200);

    const third = asSession(await sign());
    expect((await third.request({ method: 'POST', url: '/api/session/sign-out-everywhere' })).statusCode).toBe(204);
    expectProblem(await second.request({ method: 'GET', url: '/api/session' }), 401, 'unauthorized');
    expectProblem(await third.request({ method: 'GET', url: '/api/session' }), 401, 'unauthorized');

    const fourth = asSession(await sign());
    clock.advance(15 * 24 * 60 * 60 * 1000);
    try {
      expectProblem(await fourth.request({ method: 'GET', url: '/api/session' }), 401, 'unauthorized');
    } finally {
      clock.advance(-15 * 24 * 60 * 60 * 1000);
    }
  });

  it('changes the password: the old one stops working, other sessions end, this one stays', async () => {
    const person = await createPerson(t, t.workspace.id, 'member');
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/session',
      payload: { email: person.email, password: TEST_PASSWORD },
    });
    const otherSession = asSession(other);
    expectProblem(
      await person.request({
        method: 'POST',
        url: '/api/account/password',
        payload: { currentPassword: 'not it at all', newPassword: 'a brand new password' },
      }),
      400,
      'validation_error',
      '/body/currentPassword',
    );
    const changed = await person.request({
      method: 'POST',
      url: '/api/account/password',
      payload: { currentPassword: TEST_PASSWORD, newPassword: 'a brand new password' },
    });
    expect(changed.statusCode, changed.body).toBe(204);
    expect((await person.request({ method: 'GET', url: '/api/session' })).statusCode).toBe(200);
    expectProblem(await otherSession.request({ method: 'GET', url: '/api/session' }), 401, 'unauthorized');
    const signIn = (password: string) =>
      t.app.inject({ method: 'POST', url: '/api/session', payload: { email: person.email, password } });
    expect((await signIn(TEST_PASSWORD)).statusCode).toBe(401);
    expect((await signIn('a brand new password')).statusCode).toBe(201);
  });

  it('limits failed sign-ins per account and per client address', async () => {
    const victim = await createPerson(t, t.workspace.id, 'viewer');
    const attempt = (email: string, password: string, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/api/session', remoteAddress, payload: { email, password } });
    for (let i = 0; i < 3; i++)
      expect((await attempt(victim.email, 'wrong password', `10.0.0.${i + 1}`)).statusCode).toBe(401);
    // Three failures from three addresses: the account now waits, even with its right password.
    const limited = expectProblem(await attempt(victim.email, TEST_PASSWORD, '10.0.0.9'), 429, 'rate_limited');
    expect(limited.detail).toMatch(/retry in \d+ s/);

    // One address trying many accounts: past six failures it waits, whichever account it names.
    for (let i = 0; i < 6; i++) {
      expect((await attempt(`nobody${i}@example.com`, 'wrong password', '10.9.9.9')).statusCode).toBe(401);
    }
    const other = await createPerson(t, t.workspace.id, 'viewer');
    expectProblem(await attempt(other.email, TEST_PASSWORD, '10.9.9.9'), 429, 'rate_limited');
    expect((await attempt(other.email, TEST_PASSWORD, '10.9.9.10')).statusCode).toBe(201);
  }, 90_000);
});

describe('roles, members and invites', () => {
  let owner: TestPerson;
  let admin: TestPerson;

  beforeAll(async () => {
    owner = await createPerson(t, t.workspace.id, 'owner');
    admin = await createPerson(t, t.workspace.id, 'admin');
  });

  it('invites by a single-use link; the new viewer reads but cannot write (403 problem+json)', async () => {
    const invited = await admin.request({
      method: 'POST',
      url: '/api/workspace/invites',
      payload: { role: 'viewer', email: 'vera@example.com' },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const { token, path, invite } = invited.json();
    expect(path).toBe(`/invite/${token}`);
    const stored = await t.database.db
      .selectFrom('invites')
      .select('token_hash')
      .where('id', '=', invite.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toBe(token);

    const listed = await admin.request({ method: 'GET', url: '/api/workspace/invites' });
    expect(listed.json().invites.map((i: { id: string }) => i.id)).toContain(invite.id);
    expect(listed.body).not.toContain(token);

    const preview = await t.app.inject({ method: 'GET', url: `/api/invites/${token}` });
    expect(preview.json()).toMatchObject({ workspace: { name: 'test' }, role: 'viewer', email: 'vera@example.com' });

    const accepted = await t.app.inject({
      method: 'POST',
      url: `/api/invites/${token}/accept`,
      payload: { email: 'vera@example.com', name: 'Vera Viewer', password: 'vera password 1' },
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.json()).toMatchObject({ role: 'viewer', workspace: { id: t.workspace.id } });
    const viewer = asSession(accepted);

    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: `/api/invites/${token}/accept`,
        payload: { email: 'someone@example.com', name: 'Someone', password: 'someone password' },
      }),
      404,
      'not_found',
    );
    expectProblem(await t.app.inject({ method: 'GET', url: `/api/invites/${token}` }), 404, 'not_found');

    expect((await viewer.request({ method: 'GET', url: '/api/mailboxes' })).statusCode).toBe(200);
    const refused = expectProblem(
      await viewer.request({
        method: 'POST',
        url: '/api/templates',
        payload: { name: 'No', type: 'initial', subject: 'x', body: 'y' },
      }),
      403,
      'forbidden',
    );
    expect(refused.detail).toContain('member');
    expectProblem(
      await viewer.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'viewer' } }),
      403,
      'forbidden',
    );
  });

  it('lets one of two racing accepts of the same link through', async () => {
    const { token } = (
      await owner.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'viewer' } })
    ).json();
    const answers = await Promise.all(
      ['racer1@example.com', 'racer2@example.com'].map((email) =>
        t.app.inject({
          method: 'POST',
          url: `/api/invites/${token}/accept`,
          payload: { email, name: 'Racer', password: 'racer password 1' },
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 404]);
    const racers = await t.database.db.selectFrom('users').select('email').where('email', 'like', 'racer%').execute();
    expect(racers).toHaveLength(1);
  });

  it('an invite addressed to someone is accepted only as that address, new account or existing', async () => {
    const invite = (
      await owner.request({
        method: 'POST',
        url: '/api/workspace/invites',
        payload: { role: 'admin', email: 'Nadia.New@Example.com' },
      })
    ).json();
    const accept = (payload: Record<string, string>) =>
      t.app.inject({ method: 'POST', url: `/api/invites/${invite.token}/accept`, payload });

    // whoever holds the link: a new account under another address...
    const stranger = expectProblem(
      await accept({ email: 'mallory@example.com', name: 'Mallory', password: 'mallory password' }),
      403,
      'invite_email_mismatch',
      '/body/email',
    );
    expect(stranger.detail).toContain('Nadia.New@Example.com');
    // ...or an existing account proving itself with its own password
    const elsewhere = await t.createWorkspace('mallory corp');
    const mallory = await createPerson(t, elsewhere.id, 'owner');
    expectProblem(
      await accept({ email: mallory.email, password: TEST_PASSWORD }),
      403,
      'invite_email_mismatch',
      '/body/email',
    );
    const madeBy = (email: string) =>
      t.database.db.selectFrom('users').select('id').where('email_normalized', '=', email).execute();
    expect(await madeBy('mallory@example.com')).toEqual([]);
    const malloryRole = await t.database.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('memberships.role')
      .where('users.email_normalized', '=', mallory.email.toLowerCase())
      .where('memberships.workspace_id', '=', t.workspace.id)
      .execute();
    expect(malloryRole).toEqual([]);

    // the invited address, written another way, takes it; the link still worked for her
    const accepted = await accept({ email: 'nadia.new@EXAMPLE.com', name: 'Nadia New', password: 'nadia password 1' });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.json()).toMatchObject({ role: 'admin', workspace: { id: t.workspace.id } });
  });

  it('lets an existing account accept with its password; an expired link is refused', async () => {
    const elsewhere = await t.createWorkspace('elsewhere');
    const person = await createPerson(t, elsewhere.id, 'owner');
    const invite = (
      await owner.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'member' } })
    ).json();
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: `/api/invites/${invite.token}/accept`,
        payload: { email: person.email, password: 'not the password' },
      }),
      401,
      'unauthorized',
    );
    const accepted = await t.app.inject({
      method: 'POST',
      url: `/api/invites/${invite.token}/accept`,
      payload: { email: person.email, password: TEST_PASSWORD },
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(
      accepted
        .json()
        .workspaces.map((w: { name: string }) => w.name)
        .sort(),
    ).toEqual(['elsewhere', 'test']);

    const late = (
      await owner.request({
        method: 'POST',
        url: '/api/workspace/invites',
        payload: { role: 'member', expiresInDays: 1 },
      })
    ).json();
    clock.advance(25 * 60 * 60 * 1000);
    try {
      expectProblem(await t.app.inject({ method: 'GET', url: `/api/invites/${late.token}` }), 404, 'not_found');
    } finally {
      clock.advance(-25 * 60 * 60 * 1000);
    }
  });

  it('keeps the owner role to owners, keeps the last owner, and ends a removed member’s sessions', async () => {
    const member = await createPerson(t, t.workspace.id, 'member');
    expectProblem(
      await admin.request({
        method: 'PATCH',
        url: `/api/workspace/members/${member.userId}`,
        payload: { role: 'owner' },
      }),
      403,
      'forbidden',
    );
    expectProblem(
      await admin.request({ method: 'DELETE', url: `/api/workspace/members/${owner.userId}` }),
      403,
      'forbidden',
    );
    expectProblem(
      await admin.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'owner' } }),
      403,
      'forbidden',
    );
    const promoted = await admin.request({
      method: 'PATCH',
      url: `/api/workspace/members/${member.userId}`,
      payload: { role: 'admin' },
    });
    expect(promoted.json()).toMatchObject({ userId: member.userId, role: 'admin' });

    // The owner of a workspace with one owner cannot step down.
    const solo = await t.createWorkspace('solo');
    const soloOwner = await createPerson(t, solo.id, 'owner');
    expectProblem(
      await soloOwner.request({
        method: 'PATCH',
        url: `/api/workspace/members/${soloOwner.userId}`,
        payload: { role: 'admin' },
      }),
      409,
      'conflict',
    );

    const members = await admin.request({ method: 'GET', url: '/api/workspace/members' });
    expect(members.json().members.map((m: { userId: string }) => m.userId)).toContain(member.userId);
    expect((await member.request({ method: 'GET', url: '/api/mailboxes' })).statusCode).toBe(200);
    expect((await admin.request({ method: 'DELETE', url: `/api/workspace/members/${member.userId}` })).statusCode).toBe(
      204,
    );
    expectProblem(await member.request({ method: 'GET', url: '/api/mailboxes' }), 401, 'unauthorized');
  });

  it('lets a signed-in person create a workspace they own (when open to everyone) and switch between workspaces', async () => {
    const created = await admin.request({ method: 'POST', url: '/api/workspaces', payload: { name: 'Side project' } });
    expect(created.statusCode, created.body).toBe(201);
    const workspaceId = created.json().workspace.id;
    const session = (await admin.request({ method: 'GET', url: '/api/session' })).json();
    expect(session).toMatchObject({ workspace: { id: workspaceId }, role: 'owner' });
    const templates = await admin.request({ method: 'GET', url: '/api/templates' });
    expect(templates.json().templates.length).toBeGreaterThan(0);

    const back = await admin.request({
      method: 'PUT',
      url: '/api/session/workspace',
      payload: { workspaceId: t.workspace.id },
    });
    expect(back.json()).toMatchObject({ workspace: { id: t.workspace.id }, role: 'admin' });
    const foreign = await t.createWorkspace('foreign');
    expectProblem(
      await admin.request({ method: 'PUT', url: '/api/session/workspace', payload: { workspaceId: foreign.id } }),
      404,
      'not_found',
    );
  });

  it('revokes the last API key of a workspace people sign in to', async () => {
    const keyed = await t.createWorkspace('keyed');
    const lastKey = async () => (await keyed.request({ method: 'GET', url: '/api/keys' })).json().keys[0].id as string;
    expectProblem(await keyed.request({ method: 'DELETE', url: `/api/keys/${await lastKey()}` }), 409, 'conflict');
    const person = await createPerson(t, keyed.id, 'admin');
    expect((await person.request({ method: 'DELETE', url: `/api/keys/${await lastKey()}` })).statusCode).toBe(204);
    expect((await person.request({ method: 'GET', url: '/api/keys' })).json().keys).toEqual([]);
  });

  it('gives API keys a role: a viewer key reads, cannot write, and cannot use the session routes', async () => {
    const created = await t.workspace.request({
      method: 'POST',
      url: '/api/keys',
      payload: { name: 'reports', role: 'viewer' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().key.role).toBe('viewer');
    const viewerKey = created.json().apiKey;
    const as = (opts: { method: 'GET' | 'POST'; url: string; payload?: object }) =>
      t.app.inject({ ...opts, headers: { authorization: `Bearer ${viewerKey}` } });
    expect((await as({ method: 'GET', url: '/api/stats/dashboard' })).statusCode).toBe(200);
    expectProblem(
      await as({
        method: 'POST',
        url: '/api/templates',
        payload: { name: 'x', type: 'initial', subject: 'x', body: 'x' },
      }),
      403,
      'forbidden',
    );
    expectProblem(await as({ method: 'GET', url: '/api/keys' }), 403, 'forbidden');
    expectProblem(await as({ method: 'GET', url: '/api/session' }), 403, 'forbidden');
    const keys = (await t.workspace.request({ method: 'GET', url: '/api/keys' })).json().keys;
    expect(keys.find((k: { current: boolean }) => k.current).role).toBe('admin');
  });
});
