import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runWarmup, startWarmup, type RunningProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let database: TestDatabase;
let server: RunningProcess | undefined;
let baseUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    ...database.env,
    PORT: String(port),
    WARMUP_SECRET_KEY: 'b'.repeat(64),
    WARMUP_API_KEY: 'bootstrap-key-for-tests-0123456789abcdef',
  };
  server = await startWarmup(['serve', '--no-engine'], env, /Warmup is serving/);
}, 60_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await database?.close();
});

async function get(path: string, key?: string) {
  const res = await fetch(`${baseUrl}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, body: await res.json() };
}

describe('warmup CLI', () => {
  it('serve answers with the dashboard, found from the built server as from the sources', async () => {
    const res = await fetch(`${baseUrl}/`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<div id="app"></div>');
    // the built bundle, not the source page
    expect(page).not.toContain('main.tsx');
    const script = page.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${baseUrl}${script}`)).status).toBe(200);
  });

  it('serve makes WARMUP_API_KEY valid for the default workspace', async () => {
    const res = await get('/api/workspace', 'bootstrap-key-for-tests-0123456789abcdef');
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: 'ws_default', name: 'default' });
  });

  it('workspace create works while the server runs on the same data, and prints the key once as JSON', async () => {
    const result = await runWarmup(['workspace', 'create', 'Acme Marketing'], env);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed.workspace).toMatchObject({ name: 'Acme Marketing' });
    expect(printed.apiKey).toMatch(/^wk_[A-Za-z0-9_-]{40,}$/);

    const res = await get('/api/workspace', printed.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.workspace.id).toBe(printed.workspace.id);

    const keys = await database.db.selectFrom('api_keys').select('key_hash').execute();
    expect(keys.map((k) => k.key_hash)).not.toContain(printed.apiKey);
  });

  it('serve on a non-loopback address prints a setup token, and setup needs it', async () => {
    const fresh = await createTestDatabase();
    const port = await freePort();
    const open = await startWarmup(
      ['serve', '--no-engine'],
      { ...fresh.env, PORT: String(port), HOST: '0.0.0.0', WARMUP_SECRET_KEY: 'c'.repeat(64) },
      /setup token [A-Za-z0-9_-]{32}/,
    );
    try {
      const token = /#setup-token=([A-Za-z0-9_-]{32})/.exec(open.output())?.[1];
      expect(token, open.output()).toBeDefined();
      const url = `http://127.0.0.1:${port}/api/setup`;
      expect(await (await fetch(url)).json()).toEqual({ setupRequired: true, setupTokenRequired: true });
      const owner = { name: 'Ops', email: 'ops@example.com', password: 'a long password', workspaceName: 'Ops' };
      const setUp = (body: object) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await setUp(owner)).status).toBe(403);
      expect((await setUp({ ...owner, setupToken: token })).status).toBe(201);
    } finally {
      open.child.kill('SIGKILL');
      await open.exited;
      await fresh.close();
    }
  }, 60_000);

  it('user create --owner makes the first owner for a headless install; the owner signs in', async () => {
    expect((await get('/api/setup')).body).toEqual({ setupRequired: true, setupTokenRequired: false });
    const result = await runWarmup(
      ['user', 'create', '--owner', '--email', 'ops@example.com', '--name', 'Ops', '--password-stdin'],
      env,
      60_000,
      {},
      'a headless password\n',
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual({ userId: expect.stringMatching(/^usr_/), workspaceId: expect.stringMatching(/^ws_/) });
    expect((await get('/api/setup')).body).toEqual({ setupRequired: false, setupTokenRequired: false });

    const signIn = await fetch(`${baseUrl}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'OPS@example.com', password: 'a headless password' }),
    });
    expect(signIn.status).toBe(201);
    expect(await signIn.json()).toMatchObject({ role: 'owner', workspace: { id: printed.workspaceId } });

    const short = await runWarmup(
      ['user', 'create', '--email', 'x@example.com', '--name', 'X', '--password-stdin'],
      env,
      60_000,
      {},
      'short\n',
    );
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/^warmup: the password must be 10\.\.256 characters/);
  });

  it('rejects an empty workspace name', async () => {
    const result = await runWarmup(['workspace', 'create', '  '], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('1..200');
  });

  it('names a bad setting in one line instead of a stack trace', async () => {
    const result = await runWarmup(['workspace', 'create', 'x'], { ...env, WARMUP_SECRET_KEY: 'not-a-key' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^warmup: WARMUP_SECRET_KEY must be/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('migrate is idempotent', async () => {
    const result = await runWarmup(['migrate'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ migrated: true });
  });

  it('finishes an in-flight request on SIGTERM, then exits cleanly', async () => {
    const running = server!;
    // A request whose body is still arriving when the signal comes must complete. The signal comes once
    // the server has read its headers (its 100 Continue says so), not after a guessed delay: on a busy
    // machine the headers may still wait in the socket, and a connection with no request yet is
    // rightly closed at shutdown.
    const body = JSON.stringify({ subject: 'Hello {recipient_first_name}', body: 'See you {day_of_week}.' });
    // A client that keeps its connection open after the answer, as a browser does, and one that
    // connects and says nothing, as a load balancer's spare connection: the stop waits for neither.
    const agent = new http.Agent({ keepAlive: true, timeout: 60_000 });
    const silent = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
    await new Promise((resolve, reject) => silent.once('connect', resolve).once('error', reject));
    silent.on('error', () => undefined);
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${baseUrl}/api/templates/preview`,
        {
          agent,
          method: 'POST',
          headers: {
            authorization: 'Bearer bootstrap-key-for-tests-0123456789abcdef',
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            expect: '100-continue',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.slice(0, 10));
        running.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      });
      req.flushHeaders();
    });
    expect(await inFlight).toBe(200);
    // 1 would mean the stop outlasted its bound and the process gave up
    expect(await running.exited, running.output()).toEqual({ code: 0, signal: null });
    agent.destroy();
    silent.destroy();
    await expect(fetch(`${baseUrl}/health`)).rejects.toThrow();
  });
});
