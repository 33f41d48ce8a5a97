import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { expectProblem } from '../helpers/problem.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ rateLimit: 5 });
});
afterAll(() => t?.close());

describe('service endpoints', () => {
  it('GET /health answers ok without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /openapi.json describes an OpenAPI 3.1 document with bearer security', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Problem).toBeDefined();
  });

  it('GET /docs renders the API documentation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('Swagger UI');
  });

  it('puts an X-Request-Id on every response, keeping a sane one the client sent', async () => {
    const generated = await t.app.inject({ method: 'GET', url: '/health' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers['x-request-id']).toBe('trace-123');
    const replaced = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id\u0001' } });
    expect(replaced.headers['x-request-id']).not.toBe('bad id\u0001');
    const notFound = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(notFound.headers['x-request-id']).toBeTruthy();
  });
});

describe('workspace', () => {
  it('tells which workspace a key belongs to', async () => {
    const res = await t.workspace.request({ method: 'GET', url: '/api/workspace' });
    expect(res.statusCode).toBe(200);
    expect(res.json().workspace).toMatchObject({ id: t.workspace.id, name: 'test' });
  });
});

describe('error model', () => {
  it('answers an unknown route with a problem+json 404', async () => {
    const body = expectProblem(
      await t.workspace.request({ method: 'GET', url: '/api/nothing-here' }),
      404,
      'not_found',
    );
    expect(body.detail).toContain('/api/nothing-here');
  });

  it('requires a bearer key on /api routes (401, WWW-Authenticate)', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/nothing-here' });
    expectProblem(missing, 401, 'unauthorized');
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/api/nothing-here', headers: { authorization: 'Bearer wrong' } }),
      401,
      'unauthorized',
    );
    expectProblem(
      await t.app.inject({
        method: 'GET',
        url: '/api/nothing-here',
        headers: { authorization: `Basic ${t.workspace.apiKey}` },
      }),
      401,
      'unauthorized',
    );
  });

  it('rate-limits per key with 429 and Retry-After', async () => {
    const other = await t.createWorkspace('rate-limited');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 7; i++) {
      last = await other.request({ method: 'GET', url: '/api/workspace' });
      statuses.push(last.statusCode);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expectProblem(last!, 429, 'rate_limited');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    // another key has its own budget
    const fresh = await t.createWorkspace('fresh');
    expect((await fresh.request({ method: 'GET', url: '/api/workspace' })).statusCode).toBe(200);
  });
});
