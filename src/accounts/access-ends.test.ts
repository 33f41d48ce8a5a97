// Access ends when membership ends, and only the operator's choice of people make workspaces:
// through the HTTP API, on SQLite (and PostgreSQL with TEST_DATABASE_URL). The app remembers valid
// keys for a minute here, so a removal or demotion must reach the cache too, not only the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { createAccountsRepository } from './accounts.repository.js';

let t: TestApp;
let owner: TestPerson;

beforeAll(async () => {
  t = await createTestApp({ authCacheMs: 60_000, workspaceCreation: { maxPerPerson: 3 } });
  // the first owner the CLI makes is the installation's owner
  owner = await createPerson(t, t.workspace.id, 'owner');
});

afterAll(async () => {
  await t?.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const withKey = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
const template = { name: 'By key', type: 'initial', language: 'en', subject: 'Hi', body: 'Hello there' };

async function makeKey(by: TestPerson, name: string, role = 'admin'): Promise<{ id: string; apiKey: string }> {
  const created = await by.request({ method: 'POST', url: '/api/keys', payload: { name, role } });
  expect(created.statusCode, created.body).toBe(201);
  return { id: created.json().key.id, apiKey: created.json().apiKey };
}

async function makeInvite(by: TestPerson, role: string): Promise<{ id: string; token: string }> {
  const created = await by.request({ method: 'POST', url: '/api/workspace/invites', payload: { role } });
  expect(created.statusCode, created.body).toBe(201);
  return { id: created.json().invite.id, token: created.json().token };
}

describe('who may make workspaces', () => {
  it('refuses everyone but the installation owner by default, 40 tries at once included', async () => {
    const viewer = await createPerson(t, t.workspace.id, 'viewer');
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const tries = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? viewer : admin).request({ method: 'POST', url: '/api/workspaces', payload: { name: `Spam ${i}` } }),
      ),
    );
    for (const answer of tries) expectProblem(answer, 403, 'workspace_creation_closed');
    const made = await t.database.db.selectFrom('workspaces').select('id').where('name', 'like', 'Spam %').execute();
    expect(made).toEqual([]);

    const mine = await owner.request({ method: 'POST', url: '/api/workspaces', payload: { name: 'Owner made' } });
    expect(mine.statusCode, mine.body).toBe(201);
    await owner.request({ method: 'PUT', url: '/api/session/workspace', payload: { workspaceId: t.workspace.id } });
  });

  it('holds each person to the cap when opened to everyone, however many requests race', async () => {
    const open = await createTestApp({ workspaceCreation: { open: true, maxPerPerson: 3 } });
    try {
      const viewer = await createPerson(open, open.workspace.id, 'viewer');
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          viewer.request({ method: 'POST', url: '/api/workspaces', payload: { name: `Mine ${i}` } }),
        ),
      );
      const codes = answers.map((answer) => answer.statusCode);
      expect(codes.filter((code) => code === 201)).toHaveLength(3);
      for (const answer of answers.filter((a) => a.statusCode !== 201)) {
        expectProblem(answer, 409, 'workspace_limit_reached');
      }
      const other = await createPerson(open, open.workspace.id, 'viewer');
      expect(
        (await other.request({ method: 'POST', url: '/api/workspaces', payload: { name: 'Theirs' } })).statusCode,
      ).toBe(201);
    } finally {
      await open.close();
    }
  });
});

describe('access ends when membership ends', () => {
  it('names who made each key and invite, and tells the owner what a removal revokes', async () => {
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const key = await makeKey(admin, 'listed');
    const invite = await makeInvite(admin, 'member');

    const keys = (await owner.request({ method: 'GET', url: '/api/keys' })).json().keys;
    expect(keys.find((k: { id: string }) => k.id === key.id).createdBy).toEqual({
      id: admin.userId,
      name: 'admin person',
      email: admin.email,
    });
    // the workspace's own key was made by the CLI: nobody
    expect(keys.find((k: { name: string }) => k.name === 'default').createdBy).toBeNull();
    const invites = (await owner.request({ method: 'GET', url: '/api/workspace/invites' })).json().invites;
    expect(invites.find((i: { id: string }) => i.id === invite.id).createdBy).toMatchObject({ id: admin.userId });

    const access = await owner.request({ method: 'GET', url: `/api/workspace/members/${admin.userId}/access` });
    expect(access.statusCode, access.body).toBe(200);
    expect(access.json().keys.map((k: { id: string }) => k.id)).toEqual([key.id]);
    expect(access.json().invites.map((i: { id: string }) => i.id)).toEqual([invite.id]);
    expectProblem(
      await owner.request({ method: 'GET', url: `/api/workspace/members/usr_nobody/access` }),
      404,
      'not_found',
    );
  });

  it('revokes the keys and open invites of a removed admin at once, keeping a key the owner re-issued', async () => {
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const leaving = await makeKey(admin, 'made by the leaver');
    const integration = await makeKey(admin, 'crm sync', 'member');
    const invite = await makeInvite(admin, 'admin');
    // a key made with a key is the same person's: it goes with them
    const grandchild = (await withKey(leaving.apiKey, 'POST', '/api/keys', { name: 'made by a key' })).json();
    expect(grandchild.key.createdBy).toMatchObject({ id: admin.userId });
    // each key is used (and cached) before the removal
    for (const k of [leaving.apiKey, integration.apiKey, grandchild.apiKey]) {
      expect((await withKey(k, 'GET', '/api/workspace')).statusCode).toBe(200);
    }

    const reissued = await owner.request({ method: 'POST', url: `/api/keys/${integration.id}/reissue` });
    expect(reissued.statusCode, reissued.body).toBe(201);
    expect(reissued.json().key).toMatchObject({ name: 'crm sync', role: 'member', createdBy: { id: owner.userId } });
    expectProblem(await withKey(integration.apiKey, 'GET', '/api/workspace'), 401, 'unauthorized');

    const removed = await owner.request({ method: 'DELETE', url: `/api/workspace/members/${admin.userId}` });
    expect(removed.statusCode, removed.body).toBe(204);

    expectProblem(await withKey(leaving.apiKey, 'GET', '/api/workspace'), 401, 'unauthorized');
    expectProblem(await withKey(grandchild.apiKey, 'GET', '/api/workspace'), 401, 'unauthorized');
    expect((await withKey(reissued.json().apiKey, 'GET', '/api/workspace')).statusCode).toBe(200);
    // the link they made earlier no longer lets them back in as admin
    expectProblem(await t.app.inject({ method: 'GET', url: `/api/invites/${invite.token}` }), 404, 'not_found');
    const rejoin = await t.app.inject({
      method: 'POST',
      url: `/api/invites/${invite.token}/accept`,
      payload: { email: admin.email, password: 'correct horse battery' },
    });
    expectProblem(rejoin, 404, 'not_found');
    expect(
      await t.database.db
        .selectFrom('memberships')
        .select('role')
        .where('user_id', '=', admin.userId)
        .where('workspace_id', '=', t.workspace.id)
        .executeTakeFirst(),
    ).toBeUndefined();
  });

  it('caps the keys and open invites of a demoted admin at the new role', async () => {
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const key = await makeKey(admin, 'admin key');
    const viewerKey = await makeKey(admin, 'reports', 'viewer');
    const invite = await makeInvite(admin, 'admin');
    expect((await withKey(key.apiKey, 'GET', '/api/keys')).statusCode).toBe(200);

    const demoted = await owner.request({
      method: 'PATCH',
      url: `/api/workspace/members/${admin.userId}`,
      payload: { role: 'viewer' },
    });
    expect(demoted.statusCode, demoted.body).toBe(200);

    expectProblem(await withKey(key.apiKey, 'GET', '/api/keys'), 403, 'forbidden');
    expectProblem(await withKey(key.apiKey, 'POST', '/api/templates', template), 403, 'forbidden');
    expect((await withKey(key.apiKey, 'GET', '/api/workspace')).json().role).toBe('viewer');
    const keys = (await owner.request({ method: 'GET', url: '/api/keys' })).json().keys;
    expect(keys.find((k: { id: string }) => k.id === key.id).role).toBe('viewer');
    expect(keys.find((k: { id: string }) => k.id === viewerKey.id).role).toBe('viewer');

    const listed = (await owner.request({ method: 'GET', url: '/api/workspace/invites' })).json().invites;
    expect(listed.find((i: { id: string }) => i.id === invite.id).role).toBe('viewer');
    const joined = await t.app.inject({
      method: 'POST',
      url: `/api/invites/${invite.token}/accept`,
      payload: { email: 'newcomer@example.com', password: 'a long new password', name: 'Newcomer' },
    });
    expect(joined.statusCode, joined.body).toBe(201);
    expect(joined.json().role).toBe('viewer');

    // promoting again does not raise what was capped
    await owner.request({ method: 'PATCH', url: `/api/workspace/members/${admin.userId}`, payload: { role: 'admin' } });
    expectProblem(await withKey(key.apiKey, 'GET', '/api/keys'), 403, 'forbidden');
  });
});

describe('who administers which workspace', () => {
  it('names the owners and admins of each workspace asked about, never its members or viewers', async () => {
    const other = await t.createWorkspace('other');
    const admin = await createPerson(t, other.id, 'admin');
    await createPerson(t, other.id, 'member');
    const both = await createPerson(t, other.id, 'owner');
    await t.database.db
      .insertInto('memberships')
      .values({
        user_id: both.userId,
        workspace_id: t.workspace.id,
        role: 'admin',
        created_at: new Date().toISOString(),
      })
      .execute();
    const rows = await createAccountsRepository(t.database.db).administratorsOf([other.id, t.workspace.id]);
    const ofOther = rows.filter((row) => row.workspaceId === other.id);
    expect(ofOther.map((row) => [row.userId, row.role]).sort()).toEqual(
      [
        [admin.userId, 'admin'],
        [both.userId, 'owner'],
      ].sort(),
    );
    expect(rows).toContainEqual({ workspaceId: t.workspace.id, userId: both.userId, role: 'admin' });
    expect(rows).toContainEqual({ workspaceId: t.workspace.id, userId: owner.userId, role: 'owner' });
    expect(await createAccountsRepository(t.database.db).administratorsOf([])).toEqual([]);
  });
});
