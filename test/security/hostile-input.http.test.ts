import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createPerson } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { testDialect } from '../helpers/test-database.js';

/*
 * Issue 28, part 5 and the header half of part 6: input the schemas used to let through. A NUL in
 * a path, a query or a JSON string was a 500 on PostgreSQL (it cannot store one), `page=1e300` a
 * 500 on both databases, a malformed URL Fastify's own error body, and the answers that carry a
 * key or the CSRF token could be kept by a cache. Each test here failed before the fix.
 */

interface Parameter {
  name: string;
  in: string;
  schema: { type?: string | string[]; maximum?: number; minimum?: number; enum?: unknown[]; format?: string };
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, { type?: unknown }> } }> };
  security?: Record<string, unknown>[];
  'x-required-access'?: string;
}
type Document = { paths: Record<string, Record<string, Operation>> };

const TEMPLATE = { name: 'Lines', type: 'initial', language: 'en', subject: 'Hello', body: 'Hi' };

let t: TestApp;
let spec: Document;
let operations: Array<{ path: string; method: string; operation: Operation }>;

beforeAll(async () => {
  t = await createTestApp();
  spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<Document>();
  operations = Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
});

afterAll(async () => {
  await t?.close();
});

function expectFieldProblem(res: LightMyRequestResponse, pointer: string, label: string): void {
  expect(res.statusCode, `${label} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBe(400);
  expect(res.headers['content-type'], label).toMatch(/^application\/problem\+json/);
  const body = res.json<{ code: string; errors?: { path: string; message: string }[] }>();
  expect(body.code, label).toBe('validation_error');
  expect(body.errors, label).toContainEqual({ path: pointer, message: 'must not contain control characters' });
}

function fill(path: string, id: string): string {
  return path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
}

describe(`control characters (${testDialect})`, () => {
  it('refuses a NUL in a JSON string with 400 naming the field, on the public sign-in too', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session',
      payload: { email: 'nobody\u0000@example.com', password: 'pass\u0000word' },
    });
    expectFieldProblem(res, '/body/email', 'POST /api/session');
    expect(res.json<{ errors: { path: string }[] }>().errors.map((e) => e.path)).toContain('/body/password');
  });

  it('refuses a NUL in every path parameter of every operation with 400', async () => {
    const withId = operations.filter(({ path }) => path.includes('{'));
    expect(withId.length).toBeGreaterThan(20);
    // a route for signed-in people refuses a key before it reads anything: ask it as an admin; one
    // for the installation's owner refuses everyone else first: ask it, on an installation of its
    // own (this one must stay not set up), as the person who set that one up
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const other = await createTestApp();
    onTestFinished(() => other.close());
    const installationOwner = await createPerson(other, other.workspace.id, 'owner');
    for (const { path, method, operation } of withId) {
      const name = /\{([^}]+)\}/.exec(path)![1]!;
      const sessionOnly = JSON.stringify(operation.security) === JSON.stringify([{ session: [] }]);
      const caller =
        operation['x-required-access'] === 'installation-owner' ? installationOwner : sessionOnly ? admin : t.workspace;
      const res = await caller.request({
        method: method as 'GET',
        url: fill(path, 'abc\u0000def'),
        ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
      });
      expectFieldProblem(res, `/params/${name}`, `${method} ${path}`);
    }
  });

  it('refuses a NUL in every string query parameter of every operation with 400', async () => {
    let seen = 0;
    for (const { path, method, operation } of operations) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'query') continue;
        seen += 1;
        const res = await t.workspace.request({
          method: method as 'GET',
          url: `${fill(path, 'x')}?${parameter.name}=a%00b`,
        });
        const label = `${method} ${path}?${parameter.name}`;
        // a path with an id of another workspace may be a 404 first; the NUL must never get further
        if (res.statusCode === 404) continue;
        expectFieldProblem(res, `/query/${parameter.name}`, label);
      }
    }
    expect(seen).toBeGreaterThan(10);
  });

  it('refuses a NUL in any string of every request body with 400 naming it, nested fields and keys too', async () => {
    for (const { path, method, operation } of operations) {
      const properties = operation.requestBody?.content['application/json']?.schema.properties;
      if (!properties || path.includes('{')) continue;
      const field = Object.keys(properties)[0]!;
      const res = await t.workspace.request({ method: method as 'POST', url: path, payload: { [field]: 'a\u0000' } });
      // a route for a signed-in person answers an API key 403 before it reads the body
      if (res.statusCode === 403) continue;
      expectFieldProblem(res, `/body/${field}`, `${method} ${path}`);
    }
    const nested = await t.workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { email: 'a@example.com', password: 'p', provider: 'custom', imap: { host: 'x\u0007y', port: 993 } },
    });
    expectFieldProblem(nested, '/body/imap/host', 'nested');
    const key = await t.workspace.request({ method: 'POST', url: '/api/templates', payload: { 'na\u0000me': 'n' } });
    expect(key.statusCode).toBe(400);
    expect(key.json<{ errors: { message: string }[] }>().errors[0]!.message).toBe(
      'must not contain control characters',
    );
  });

  it('keeps tabs and line breaks in text, and refuses the other C0 characters, DEL and lone surrogates', async () => {
    const kept = await t.workspace.request({
      method: 'POST',
      url: '/api/templates',
      payload: { ...TEMPLATE, body: 'Hi,\r\n\tthere\nbye' },
    });
    expect(kept.statusCode, kept.body).toBe(201);
    for (const bad of ['\u0001', '\u001b[31m', '\u007f', '\ud800', 'x\udfffy']) {
      const res = await t.workspace.request({
        method: 'POST',
        url: '/api/templates',
        payload: { ...TEMPLATE, subject: `s${bad}` },
      });
      expectFieldProblem(res, '/body/subject', JSON.stringify(bad));
    }
  });
});

describe(`numbers in the query (${testDialect})`, () => {
  it('bounds every numeric query parameter of the OpenAPI document', () => {
    const unbounded: string[] = [];
    for (const { path, method, operation } of operations) {
      for (const parameter of operation.parameters ?? []) {
        const type = parameter.schema.type;
        const numeric = type === 'integer' || type === 'number';
        if (numeric && (parameter.schema.maximum === undefined || parameter.schema.minimum === undefined))
          unbounded.push(`${method} ${path} ${parameter.in} ${parameter.name}`);
      }
    }
    expect(unbounded).toEqual([]);
  });

  it('answers page=1e300, a negative or a huge page with 400, never a 500', async () => {
    const paged = operations.filter(({ operation }) => operation.parameters?.some((p) => p.name === 'page'));
    expect(paged.length).toBeGreaterThan(3);
    for (const { path, method } of paged) {
      for (const page of ['1e300', '-1', '99999999999', '1e21', 'Infinity']) {
        const res = await t.workspace.request({ method: method as 'GET', url: `${fill(path, 'x')}?page=${page}` });
        const label = `${method} ${path}?page=${page} → ${res.statusCode} ${res.body.slice(0, 200)}`;
        if (res.statusCode === 404) continue;
        expect(res.statusCode, label).toBe(400);
        expect(res.headers['content-type'], label).toMatch(/^application\/problem\+json/);
      }
    }
  });
});

describe('malformed URLs', () => {
  it('answers a malformed percent-encoding with a problem+json 400, not the framework body', async () => {
    for (const url of ['/api/templates/%E0%A4%A', '/api/mailboxes/%zz', '/api/templates/%']) {
      const res = await t.workspace.request({ method: 'GET', url });
      expect(res.statusCode, `${url} ${res.body}`).toBe(400);
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      expect(res.json(), url).toMatchObject({ status: 400, code: 'bad_url', type: 'about:blank' });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('answers a request Node cannot parse with problem+json on the socket, not the framework body', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /api/templates HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
      );
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toMatchObject({ status: 400, code: 'bad_request' });
  });
});

describe(`answers that carry a secret (${testDialect})`, () => {
  it('sends Cache-Control: no-store with a new API key and with the session that carries the CSRF token', async () => {
    const key = await t.workspace.request({ method: 'POST', url: '/api/keys', payload: { name: 'ci' } });
    expect(key.statusCode, key.body).toBe(201);
    expect(key.headers['cache-control']).toBe('no-store');

    const owner = { name: 'Olive', email: 'olive@example.com', password: 'a long passphrase 1', workspaceName: 'A' };
    const setup = await t.app.inject({ method: 'POST', url: '/api/setup', payload: owner });
    expect(setup.statusCode, setup.body).toBe(201);
    expect(setup.headers['cache-control']).toBe('no-store');
    const cookie = String(setup.headers['set-cookie']).split(';')[0]!;
    const session = await t.app.inject({ method: 'GET', url: '/api/session', headers: { cookie } });
    expect(session.statusCode, session.body).toBe(200);
    expect(session.json()).toHaveProperty('csrfToken');
    expect(session.headers['cache-control']).toBe('no-store');
  });
});
