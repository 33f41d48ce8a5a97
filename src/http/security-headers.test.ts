// The security headers every response carries, whatever answered it: a route, an error, the 404
// handler, the dashboard's static files, a 304. /docs keeps Swagger UI's own CSP.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../test/dashboard/browser.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { helmetHeaders, SECURITY_HEADERS } from './security-headers.js';

const APP_CSP =
  "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';" +
  "img-src 'self' data: blob:;object-src 'none';script-src 'self';script-src-attr 'none';" +
  "style-src 'self' https: 'unsafe-inline';connect-src 'self'";

const SWAGGER_UI_CSP =
  "default-src 'self'; base-uri 'self'; font-src 'self' https: data:; frame-ancestors 'self'; " +
  "img-src 'self' data: validator.swagger.io; object-src 'none'; script-src 'self' ; script-src-attr 'none'; " +
  "style-src 'self' https: ; upgrade-insecure-requests;";

const EXPECTED = {
  'content-security-policy': APP_CSP,
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

function securityHeadersOf(response: LightMyRequestResponse): Record<string, unknown> {
  return Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, response.headers[name]]));
}

describe('security headers', () => {
  let t: TestApp;

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp({ rateLimit: 5, metricsToken: 'm'.repeat(32) });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('are the ones helmet sets for the app’s options, worked out once', () => {
    expect(SECURITY_HEADERS).toEqual(EXPECTED);
    expect(Object.isFrozen(SECURITY_HEADERS)).toBe(true);
    expect(helmetHeaders({ xFrameOptions: { action: 'deny' }, xXssProtection: false })).toMatchObject({
      'x-frame-options': 'DENY',
    });
    expect(helmetHeaders({ xXssProtection: false })).not.toHaveProperty('x-xss-protection');
  });

  const answers: Array<[string, (t: TestApp) => Promise<LightMyRequestResponse>, number]> = [
    ['GET /health', (t) => t.app.inject({ method: 'GET', url: '/health' }), 200],
    ['HEAD /health', (t) => t.app.inject({ method: 'HEAD', url: '/health' }), 200],
    ['an API route', (t) => t.workspace.request({ method: 'GET', url: '/api/templates' }), 200],
    ['a missing API key (401)', (t) => t.app.inject({ method: 'GET', url: '/api/templates' }), 401],
    ['an unknown API route (404)', (t) => t.workspace.request({ method: 'GET', url: '/api/no-such-thing' }), 404],
    ['an unknown route outside the API (404)', (t) => t.app.inject({ method: 'POST', url: '/no-such-thing' }), 404],
    [
      'a body that is not JSON (400)',
      (t) =>
        t.workspace.request({
          method: 'POST',
          url: '/api/templates',
          headers: { 'content-type': 'application/json' },
          payload: '{',
        }),
      400,
    ],
    [
      'a body of another type (415)',
      (t) =>
        t.workspace.request({
          method: 'POST',
          url: '/api/templates',
          headers: { 'content-type': 'text/plain' },
          payload: 'x',
        }),
      415,
    ],
    ['GET /metrics without its token (401)', (t) => t.app.inject({ method: 'GET', url: '/metrics' }), 401],
    ['GET /openapi.json', (t) => t.app.inject({ method: 'GET', url: '/openapi.json' }), 200],
    ['the dashboard page', (t) => t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } }), 200],
    [
      'the dashboard page not modified (304)',
      async (t) => {
        const first = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
        return t.app.inject({
          method: 'GET',
          url: '/',
          headers: { accept: 'text/html', 'if-none-match': String(first.headers.etag) },
        });
      },
      304,
    ],
  ];

  it.each(answers)('are on %s', async (_name, send, status) => {
    const response = await send(t);
    expect(response.statusCode, response.body).toBe(status);
    expect(securityHeadersOf(response)).toEqual(EXPECTED);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('are on /docs with Swagger UI’s own CSP in place of the app’s', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(securityHeadersOf(response)).toEqual({ ...EXPECTED, 'content-security-policy': SWAGGER_UI_CSP });
  });

  it('come before X-Request-Id and the route’s own headers, as helmet set them', async () => {
    const response = await t.workspace.request({ method: 'GET', url: '/api/templates' });
    const names = Object.keys(response.headers);
    expect(names.slice(0, Object.keys(EXPECTED).length + 1)).toEqual([...Object.keys(EXPECTED), 'x-request-id']);
  });
});
