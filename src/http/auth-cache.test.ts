import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import type { AuthenticatedKey } from './auth.js';
import { changesKeyAccess, createAuthenticationCache } from './auth-cache.js';

describe('createAuthenticationCache', () => {
  function counting() {
    const lookups: string[] = [];
    const valid = new Map<string, AuthenticatedKey>([
      ['key-a', { workspaceId: 'ws_a', keyId: 'key_a', role: 'admin' }],
      ['key-b', { workspaceId: 'ws_b', keyId: 'key_b', role: 'viewer' }],
    ]);
    return {
      lookups,
      valid,
      authenticate: (key: string) => {
        lookups.push(key);
        return Promise.resolve(valid.get(key));
      },
    };
  }

  it('answers a valid key from memory until its time is up, then looks it up again', async () => {
    const source = counting();
    let now = 1_000;
    const cache = createAuthenticationCache(source.authenticate, { ttlMs: 2_000, now: () => now });
    expect(await cache.authenticate('key-a')).toEqual({ workspaceId: 'ws_a', keyId: 'key_a', role: 'admin' });
    now += 1_999;
    expect(await cache.authenticate('key-a')).toEqual({ workspaceId: 'ws_a', keyId: 'key_a', role: 'admin' });
    expect(source.lookups).toEqual(['key-a']);
    // revoked meanwhile: the next look-up after the time is up says so
    source.valid.delete('key-a');
    now += 1;
    expect(await cache.authenticate('key-a')).toBeUndefined();
    expect(source.lookups).toEqual(['key-a', 'key-a']);
  });

  it('never remembers a wrong key, so each wrong guess is looked up (and counted by the caller)', async () => {
    const source = counting();
    const cache = createAuthenticationCache(source.authenticate, { ttlMs: 60_000 });
    expect(await cache.authenticate('wrong')).toBeUndefined();
    expect(await cache.authenticate('wrong')).toBeUndefined();
    expect(source.lookups).toEqual(['wrong', 'wrong']);
  });

  it('holds at most maxEntries keys, forgetting the oldest, and forgets all on clear', async () => {
    const source = counting();
    const cache = createAuthenticationCache(source.authenticate, { ttlMs: 60_000, maxEntries: 1 });
    await cache.authenticate('key-a');
    await cache.authenticate('key-b');
    await cache.authenticate('key-b');
    await cache.authenticate('key-a');
    expect(source.lookups).toEqual(['key-a', 'key-b', 'key-a']);
    cache.clear();
    await cache.authenticate('key-a');
    expect(source.lookups).toEqual(['key-a', 'key-b', 'key-a', 'key-a']);
  });
});

describe('API key cache in the app (WARMUP_AUTH_CACHE_MS)', () => {
  const TTL_MS = 400;
  let testApp: TestApp;
  let replicaA: Awaited<ReturnType<typeof buildApp>>;
  let replicaB: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    testApp = await createTestApp();
    const replica = () =>
      buildApp({ services: testApp.services, rateLimit: 0, authCacheMs: TTL_MS, healthCheck: async () => {} });
    replicaA = await replica();
    replicaB = await replica();
  });

  afterAll(async () => {
    await replicaA.close();
    await replicaB.close();
    await testApp.close();
  });

  const call = (app: typeof replicaA, key: string, method: 'GET' | 'DELETE' = 'GET', url = '/api/workspace') =>
    app.inject({ method, url, headers: { authorization: `Bearer ${key}` } });

  it('a key revoked through one replica is refused there at once and on another within the cache time', async () => {
    const { key, apiKey } = await testApp.services.workspaces.createApiKey(testApp.workspace.id, 'laptop');
    expect((await call(replicaA, apiKey)).statusCode).toBe(200);
    expect((await call(replicaB, apiKey)).statusCode).toBe(200);

    expect((await call(replicaA, testApp.workspace.apiKey, 'DELETE', `/api/keys/${key.id}`)).statusCode).toBe(204);
    const revokedAt = Date.now();
    expect((await call(replicaA, apiKey)).statusCode).toBe(401);
    // the other replica remembers the key for at most TTL_MS
    const onB = await call(replicaB, apiKey);
    if (Date.now() - revokedAt < TTL_MS) expect(onB.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 50));
    expect((await call(replicaB, apiKey)).statusCode).toBe(401);
  });
});

describe('changesKeyAccess', () => {
  it('clears the cache after what revokes a key or lowers its role, and after nothing else', () => {
    expect(changesKeyAccess('DELETE', '/api/keys/key_1')).toBe(true);
    expect(changesKeyAccess('POST', '/api/keys/key_1/reissue')).toBe(true);
    expect(changesKeyAccess('DELETE', '/api/workspace/members/usr_1')).toBe(true);
    expect(changesKeyAccess('PATCH', '/api/workspace/members/usr_1?x=1')).toBe(true);
    expect(changesKeyAccess('POST', '/api/keys')).toBe(false);
    expect(changesKeyAccess('GET', '/api/workspace/members/usr_1/access')).toBe(false);
    expect(changesKeyAccess('POST', '/api/templates')).toBe(false);
  });
});
