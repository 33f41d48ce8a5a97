import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql, type Migration } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { fixedClock } from '../../src/clock.js';
import { ConfigError, loadConfig, type Limits } from '../../src/config.js';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { recordInteraction } from '../../src/interactions/interactions.repository.js';
import { loadSecretKey } from '../../src/secrets/secrets.js';
import { createServices, type Services } from '../../src/services.js';
import { hashApiKey } from '../../src/workspaces/api-keys.js';
import { DEFAULT_WORKSPACE_ID } from '../../src/workspaces/workspaces.service.js';
import { expectProblem } from '../helpers/problem.js';
import { runWarmup } from '../helpers/processes.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/test-database.js';

/*
 * A tenant (or anyone on the network) who attacks the service through its own API, its exports
 * and its files: issue 12, attacks 5 (authentication), 6 (workspace limits) and 7 (CSV cells,
 * file modes, migrations). Each test here failed on the code before the fix.
 */

const clock = fixedClock('2026-03-16T10:00:00Z');
const BOOTSTRAP_KEY = 'old-bootstrap-key-0123456789abcdefghij';
const ATTACKER = '203.0.113.7';

let database: TestDatabase;

/** One API process over the shared database, as `warmup serve --no-engine` builds it. */
async function replica(
  options: { authFailureLimit?: number; trustProxy?: boolean; limits?: Partial<Limits> } = {},
  wrap: (services: Services) => void = () => {},
): Promise<{ app: FastifyInstance; services: Services }> {
  const services = createServices({
    db: database.db,
    clock,
    dataDir: database.dataDir,
    secretKey: TEST_SECRET_KEY,
    limits: options.limits,
  });
  wrap(services);
  const app = await buildApp({
    services,
    rateLimit: 0,
    authFailureLimit: options.authFailureLimit ?? 0,
    trustProxy: options.trustProxy,
    healthCheck: async () => {},
  });
  await app.ready();
  return { app, services };
}

const apps: FastifyInstance[] = [];
async function replicaApp(...args: Parameters<typeof replica>) {
  const built = await replica(...args);
  apps.push(built.app);
  return built;
}

function call(
  app: FastifyInstance,
  key: string | undefined,
  options: { method?: 'GET' | 'POST' | 'DELETE'; url?: string; payload?: unknown; ip?: string; headers?: object } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: options.method ?? 'GET',
    url: options.url ?? '/api/workspace',
    remoteAddress: options.ip ?? ATTACKER,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(options.headers ?? {}) },
    ...(options.payload === undefined ? {} : { payload: options.payload as object }),
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

afterAll(async () => {
  await database?.close();
});

describe('attack 5: authentication', () => {
  it('answers 429 with Retry-After once an address has presented too many wrong keys, before any key lookup', async () => {
    let lookups = 0;
    const { app, services } = await replicaApp({ authFailureLimit: 3 }, (s) => {
      const authenticate = s.workspaces.authenticate;
      s.workspaces.authenticate = (key) => {
        lookups += 1;
        return authenticate(key);
      };
    });
    const { apiKey } = await services.workspaces.createWorkspace('victim');

    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await call(app, `wk_guess_${i}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    expect(lookups).toBe(3);

    // Guessing right does not help: the address is refused before its key is looked at.
    const lucky = await call(app, apiKey);
    expectProblem(lucky, 429, 'rate_limited');
    expect(Number(lucky.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(lucky.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(lookups).toBe(3);

    // Another address is not affected.
    expect((await call(app, apiKey, { ip: '198.51.100.1' })).statusCode).toBe(200);
  });

  it('does not let X-Forwarded-For pick the counted address unless WARMUP_TRUST_PROXY is set', async () => {
    const direct = await replicaApp({ authFailureLimit: 2 });
    const spoofed = [];
    for (let i = 0; i < 4; i++) {
      spoofed.push((await call(direct.app, 'wk_wrong', { headers: { 'x-forwarded-for': `10.0.0.${i}` } })).statusCode);
    }
    expect(spoofed).toEqual([401, 401, 429, 429]);

    // Behind a proxy that sets it, the forwarded address is the client: each is counted apart.
    const proxied = await replicaApp({ authFailureLimit: 2, trustProxy: true });
    const clients = [];
    for (let i = 0; i < 4; i++) {
      clients.push((await call(proxied.app, 'wk_wrong', { headers: { 'x-forwarded-for': `10.0.0.${i}` } })).statusCode);
    }
    expect(clients).toEqual([401, 401, 401, 401]);
  });

  it('refuses a WARMUP_API_KEY shorter than 32 characters, and the service does not start with it', async () => {
    expect(() => loadConfig({ WARMUP_API_KEY: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ WARMUP_API_KEY: 'short' })).toThrow(/at least 32 characters/);

    const result = await runWarmup(['serve', '--no-engine'], {
      ...database.env,
      PORT: '0',
      WARMUP_SECRET_KEY: 'c'.repeat(64),
      WARMUP_API_KEY: 'short',
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      'warmup: WARMUP_API_KEY must be at least 32 characters (it has 5); make one with: openssl rand -hex 32',
    );
  }, 60_000);

  it('revokes the previous bootstrap key when WARMUP_API_KEY changes', async () => {
    const { app, services } = await replicaApp();
    await services.workspaces.bootstrap(BOOTSTRAP_KEY);
    expect((await call(app, BOOTSTRAP_KEY)).statusCode).toBe(200);

    const newKey = 'new-bootstrap-key-0123456789abcdefghij';
    expect(await services.workspaces.bootstrap(newKey)).toEqual({ revokedKeys: 1 });
    expectProblem(await call(app, BOOTSTRAP_KEY), 401, 'unauthorized');
    expect((await call(app, newKey)).statusCode).toBe(200);

    // Starting again with the same setting changes nothing.
    expect(await services.workspaces.bootstrap(newKey)).toEqual({ revokedKeys: 0 });
    const keys = await services.workspaces.listApiKeys(DEFAULT_WORKSPACE_ID);
    expect(keys.filter((key) => key.origin === 'bootstrap').map((key) => key.prefix)).toEqual([newKey.slice(0, 8)]);
  });

  describe('/api/keys', () => {
    let owner: string;

    beforeAll(async () => {
      const { services } = await replicaApp();
      owner = (await services.workspaces.createWorkspace('key owner')).apiKey;
    });

    it('lists name, prefix, maker, created and last used, and never a key or its hash', async () => {
      const { app } = await replicaApp();
      const created = await call(app, owner, { method: 'POST', url: '/api/keys', payload: { name: 'CI deploys' } });
      expect(created.statusCode, created.body).toBe(201);
      const { key, apiKey } = created.json<{ key: { id: string; name: string; prefix: string }; apiKey: string }>();
      expect(apiKey).toMatch(/^wk_[A-Za-z0-9_-]{43}$/);
      expect(created.headers.location).toBe(`/api/keys/${key.id}`);
      expect(key).toMatchObject({ name: 'CI deploys', prefix: apiKey.slice(0, 8), origin: 'issued', lastUsedAt: null });

      const listed = await call(app, owner, { url: '/api/keys' });
      expect(listed.statusCode).toBe(200);
      const { keys } = listed.json<{ keys: Array<Record<string, unknown>> }>();
      expect(keys.map((k) => [k.name, k.current])).toEqual([
        ['default', true],
        ['CI deploys', false],
      ]);
      for (const k of keys) {
        expect(Object.keys(k).sort()).toEqual([
          'createdAt',
          'createdBy',
          'current',
          'id',
          'lastUsedAt',
          'name',
          'origin',
          'prefix',
          'role',
        ]);
      }
      for (const secret of [owner, apiKey, hashApiKey(owner), hashApiKey(apiKey)]) {
        expect(listed.body).not.toContain(secret);
      }
    });

    it('rejects a blank or unknown-field body with the field named, and stores nothing', async () => {
      const { app, services } = await replicaApp();
      const before = await services.workspaces.listApiKeys((await whoAmI(app, owner)).id);
      const blank = expectProblem(
        await call(app, owner, { method: 'POST', url: '/api/keys', payload: { name: '   ' } }),
        400,
        'validation_error',
      );
      expect(blank.detail).toMatch(/^name /);
      const extra = await call(app, owner, { method: 'POST', url: '/api/keys', payload: { name: 'x', key: 'mine' } });
      expect(extra.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path)).toEqual(['/body/key']);
      expect(await services.workspaces.listApiKeys((await whoAmI(app, owner)).id)).toEqual(before);
    });

    it('a revoked key gets 401 at once, on this replica and on another one', async () => {
      const first = await replicaApp();
      const second = await replicaApp();
      const created = await call(first.app, owner, { method: 'POST', url: '/api/keys', payload: { name: 'laptop' } });
      const { key, apiKey } = created.json<{ key: { id: string }; apiKey: string }>();
      expect((await call(second.app, apiKey)).statusCode).toBe(200);

      const revoked = await call(first.app, owner, { method: 'DELETE', url: `/api/keys/${key.id}` });
      expect(revoked.statusCode).toBe(204);
      expectProblem(await call(first.app, apiKey), 401, 'unauthorized');
      expectProblem(await call(second.app, apiKey), 401, 'unauthorized');
      expectProblem(await call(first.app, owner, { method: 'DELETE', url: `/api/keys/${key.id}` }), 404, 'not_found');
    });

    it("answers 404 for another workspace's key, exactly as for a key that does not exist, and keeps it", async () => {
      const { app, services } = await replicaApp();
      const stranger = await services.workspaces.createWorkspace('stranger');
      const [strangerKey] = await services.workspaces.listApiKeys(stranger.workspace.id);
      const foreign = await call(app, owner, { method: 'DELETE', url: `/api/keys/${strangerKey?.id}` });
      const missing = await call(app, owner, { method: 'DELETE', url: '/api/keys/key_doesnotexist' });
      expectProblem(foreign, 404, 'not_found');
      expect(foreign.json<{ detail: string }>().detail).toBe(`API key ${strangerKey?.id} not found`);
      expectProblem(missing, 404, 'not_found');
      expect((await call(app, stranger.apiKey)).statusCode).toBe(200);
    });

    it('keeps the last key of a workspace (409) so nobody locks a workspace out', async () => {
      const { app, services } = await replicaApp();
      const lonely = await services.workspaces.createWorkspace('lonely');
      const [only] = await services.workspaces.listApiKeys(lonely.workspace.id);
      expectProblem(
        await call(app, lonely.apiKey, { method: 'DELETE', url: `/api/keys/${only?.id}` }),
        409,
        'conflict',
      );
      expect((await call(app, lonely.apiKey)).statusCode).toBe(200);
    });

    it('writes last used at most once a minute per key, not once per request', async () => {
      const { app, services } = await replicaApp();
      const busy = await services.workspaces.createWorkspace('busy');
      const writes: string[] = [];
      const row = () =>
        database.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('workspace_id', '=', busy.workspace.id)
          .executeTakeFirstOrThrow();
      for (let i = 0; i < 5; i++) {
        expect((await call(app, busy.apiKey)).statusCode).toBe(200);
        writes.push(String((await row()).last_used_at));
        clock.advance(10_000);
      }
      expect(new Set(writes).size).toBe(1);
      clock.advance(20_000);
      await call(app, busy.apiKey);
      expect((await row()).last_used_at).toBe(clock.now().toISOString());
      const listed = await call(app, busy.apiKey, { url: '/api/keys' });
      expect(listed.json<{ keys: Array<{ lastUsedAt: string }> }>().keys[0]?.lastUsedAt).toBe(
        clock.now().toISOString(),
      );
    });
  });

  it('warmup key list, create and revoke manage the keys of a workspace from the command line', async () => {
    const { services, app } = await replicaApp();
    const team = await services.workspaces.createWorkspace('cli team');
    const env = { ...database.env, WARMUP_SECRET_KEY: 'c'.repeat(64) };

    const created = await runWarmup(['key', 'create', 'backup job', '--workspace', team.workspace.id], env);
    expect(created.code, created.stderr).toBe(0);
    const { key, apiKey } = JSON.parse(created.stdout) as { key: { id: string; name: string }; apiKey: string };
    expect(key.name).toBe('backup job');
    expect((await call(app, apiKey)).statusCode).toBe(200);

    const listed = await runWarmup(['key', 'list', '--workspace', team.workspace.id], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { keys: Array<{ name: string }> }).keys.map((k) => k.name)).toEqual([
      'default',
      'backup job',
    ]);
    expect(listed.stdout).not.toContain(apiKey);

    const revoked = await runWarmup(['key', 'revoke', key.id, '--workspace', team.workspace.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: key.id });
    expectProblem(await call(app, apiKey), 401, 'unauthorized');

    const again = await runWarmup(['key', 'revoke', key.id, '--workspace', team.workspace.id], env);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(`warmup: API key ${key.id} not found`);
  }, 120_000);
});

async function whoAmI(app: FastifyInstance, key: string): Promise<{ id: string }> {
  return (await call(app, key)).json<{ workspace: { id: string } }>().workspace;
}

describe('attack 6: workspace limits', () => {
  // A new workspace starts with its default templates; the quota leaves room for a few more.
  const MAX_TEMPLATES = 80;
  let t: TestApp;
  let ws: TestWorkspace;
  let defaults: number;

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      limits: { maxMailboxes: 2, maxTemplates: MAX_TEMPLATES, maxImportBytes: 64 * 1024 },
    });
    ws = t.workspace;
    defaults = (await ws.request({ method: 'GET', url: '/api/templates?limit=1' })).json<{
      pagination: { total: number };
    }>().pagination.total;
  });

  afterAll(async () => {
    await t?.close();
  });

  function mailbox(email: string) {
    return ws.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { email, password: 'app password', provider: 'gmail', connectionType: 'imap', verify: false },
    });
  }

  async function templateCount(): Promise<number> {
    const res = await ws.request({ method: 'GET', url: '/api/templates?limit=1' });
    return res.json<{ pagination: { total: number } }>().pagination.total;
  }

  const template = (n: number) => ({
    name: `Extra ${n}`,
    type: 'initial',
    language: 'en',
    subject: 'Hello',
    body: 'A short note.',
  });

  it('stops a workspace at WARMUP_MAX_MAILBOXES with 409 mailbox_limit_reached, storing nothing', async () => {
    expect((await mailbox('one@quota.test')).statusCode).toBe(201);
    expect((await mailbox('two@quota.test')).statusCode).toBe(201);
    const third = expectProblem(await mailbox('three@quota.test'), 409, 'mailbox_limit_reached');
    expect(third.detail).toMatch(/limit of 2 mailboxes/);
    const list = await ws.request({ method: 'GET', url: '/api/mailboxes' });
    expect(list.json<{ pagination: { total: number } }>().pagination.total).toBe(2);

    // The quota is per workspace: another one still connects its own.
    const other = await t.createWorkspace('other');
    const theirs = await other.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { email: 'three@quota.test', password: 'pw', provider: 'gmail', connectionType: 'imap', verify: false },
    });
    expect(theirs.statusCode).toBe(201);
  });

  it('stops create, duplicate and import at WARMUP_MAX_TEMPLATES with 409 template_limit_reached', async () => {
    const room = MAX_TEMPLATES - defaults;
    expect(room).toBeGreaterThan(2);
    const filled = await ws.request({
      method: 'POST',
      url: '/api/templates/import',
      payload: { templates: Array.from({ length: room - 1 }, (_, i) => template(i)) },
    });
    expect(filled.statusCode, filled.body).toBe(201);

    // One place left: an import of two is refused whole.
    expectProblem(
      await ws.request({
        method: 'POST',
        url: '/api/templates/import',
        payload: { templates: [template(100), template(101)] },
      }),
      409,
      'template_limit_reached',
    );
    expect(await templateCount()).toBe(MAX_TEMPLATES - 1);

    const last = await ws.request({ method: 'POST', url: '/api/templates', payload: template(200) });
    expect(last.statusCode).toBe(201);
    expectProblem(
      await ws.request({ method: 'POST', url: '/api/templates', payload: template(201) }),
      409,
      'template_limit_reached',
    );
    const id = last.json<{ template: { id: string } }>().template.id;
    expectProblem(
      await ws.request({ method: 'POST', url: `/api/templates/${id}/duplicate` }),
      409,
      'template_limit_reached',
    );
    expect(await templateCount()).toBe(MAX_TEMPLATES);
  });

  it('refuses a 21 KB preview request that would answer megabytes, with 422 preview_too_large', async () => {
    const payload = {
      subject: 'Hi',
      body: '{topic} '.repeat(2500),
      variables: { topic: 'x'.repeat(1000) },
    };
    expect(JSON.stringify(payload).length).toBeLessThan(22_000);
    const res = await ws.request({ method: 'POST', url: '/api/templates/preview', payload });
    const problem = expectProblem(res, 422, 'preview_too_large');
    expect(problem.detail).toMatch(/over the limit of 256 KiB/);
    expect(res.body.length).toBeLessThan(1000);

    // An ordinary preview is unaffected.
    const fine = await ws.request({
      method: 'POST',
      url: '/api/templates/preview',
      payload: { subject: 'Hi', body: 'About {topic}.', variables: { topic: 'the numbers' } },
    });
    expect(fine.statusCode).toBe(200);
  });

  it('refuses an import body over WARMUP_MAX_IMPORT_BYTES with 413 payload_too_large, storing nothing', async () => {
    const other = await t.createWorkspace('importer');
    const before = (await other.request({ method: 'GET', url: '/api/templates?limit=1' })).json<{
      pagination: { total: number };
    }>().pagination.total;
    const res = await other.request({
      method: 'POST',
      url: '/api/templates/import',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ templates: [{ ...template(1), body: 'b'.repeat(70 * 1024) }] }),
    });
    const problem = expectProblem(res, 413, 'payload_too_large');
    expect(problem.detail).toBe('a template import may be at most 64 KiB (WARMUP_MAX_IMPORT_BYTES)');
    const after = (await other.request({ method: 'GET', url: '/api/templates?limit=1' })).json<{
      pagination: { total: number };
    }>().pagination.total;
    expect(after).toBe(before);
  });
});

describe('attack 7: exports, files and upgrades', () => {
  it('exports an address that starts with "=" as text, never as a formula', async () => {
    const t = await createTestApp({ clock });
    try {
      const email = "=cmd|'/Ccalc'!A0@x.io";
      const created = await t.workspace.request({
        method: 'POST',
        url: '/api/mailboxes',
        payload: { email, password: 'pw', provider: 'gmail', connectionType: 'imap', verify: false },
      });
      expect(created.statusCode, created.body).toBe(201);
      const mailboxId = created.json<{ mailbox: { id: string } }>().mailbox.id;
      await recordInteraction(t.database.db, {
        mailboxId,
        type: 'sent',
        senderMailboxId: mailboxId,
        counterpartMailboxId: null,
        counterpartEmail: 'peer@example.test',
        subject: 'Numbers',
        messageId: '<formula@x.io>',
        threadId: '<formula@x.io>',
        placement: null,
        occurredAt: clock.now(),
      });

      const res = await t.workspace.request({
        method: 'GET',
        url: '/api/stats/export?format=csv&startDate=2026-03-16&endDate=2026-03-16',
      });
      expect(res.statusCode).toBe(200);
      const [, row] = res.body.split('\r\n');
      expect(row).toBe(`2026-03-16,${mailboxId},"'=cmd|'/Ccalc'!A0@x.io",1,0,0,0,0,0,0,,0,joining`);
      for (const cell of row?.split(',') ?? []) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    } finally {
      await t.close();
    }
  });

  // SQLite's own files, whichever database the rest of the suite runs on.
  it('keeps the data folder 0700 and the database, WAL and shared-memory files 0600', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-modes-'));
    const previousMask = process.umask(0o022);
    try {
      const dataDir = path.join(parent, 'data');
      const handle = openDatabase({ dataDir });
      await migrateToLatest(handle.db, handle.dialect);
      loadSecretKey({ secretKey: undefined, dataDir });
      const mode = (file: string) => fs.statSync(path.join(dataDir, file)).mode & 0o777;
      expect(mode('.')).toBe(0o700);
      for (const file of ['warmup.db', 'warmup.db-wal', 'warmup.db-shm', 'secret.key']) {
        expect([file, mode(file)]).toEqual([file, 0o600]);
      }
      await handle.close();

      // A folder and files an older release left world-readable are narrowed on the next start.
      fs.chmodSync(dataDir, 0o755);
      fs.chmodSync(path.join(dataDir, 'warmup.db'), 0o644);
      const again = openDatabase({ dataDir });
      expect(mode('.')).toBe(0o700);
      expect(mode('warmup.db')).toBe(0o600);
      await again.close();
    } finally {
      process.umask(previousMask);
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  it('leaves the previous schema and migration table when a migration fails halfway', async () => {
    const fresh = await createTestDatabase();
    try {
      // PostgreSQL lists the tables of every schema; this database is one schema of its own.
      const schema =
        testDialect === 'postgres'
          ? (await sql<{ name: string }>`select current_schema() as name`.execute(fresh.db)).rows[0]?.name
          : undefined;
      const tables = async () =>
        (await fresh.db.introspection.getTables({ withInternalKyselyTables: true }))
          .filter((table) => table.schema === schema)
          .map((table) => `${table.name}(${table.columns.map((c) => c.name).join(',')})`)
          .sort();
      const applied = async () =>
        (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(fresh.db)).rows.map(
          (r) => r.name,
        );
      const schemaBefore = await tables();
      const appliedBefore = await applied();

      const halfway: Migration = {
        async up(db) {
          await db.schema.createTable('half_done').addColumn('id', 'text').execute();
          await db.schema.alterTable('workspaces').addColumn('half_column', 'text').execute();
          throw new Error('killed halfway');
        },
      };
      const provider = {
        getMigrations: async () => ({ ...(await migrationProvider.getMigrations()), '999-halfway': halfway }),
      };
      await expect(migrateToLatest(fresh.db, fresh.dialect, provider)).rejects.toThrow(/killed halfway/);

      expect(await tables()).toEqual(schemaBefore);
      expect(await applied()).toEqual(appliedBefore);
      // And the next start migrates as if nothing had happened.
      expect(await migrateToLatest(fresh.db, fresh.dialect)).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});
