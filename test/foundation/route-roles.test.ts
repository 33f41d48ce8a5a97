import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRole, ROLES, type Access, type Role } from '../../src/http/access.js';
import { createPerson, openSession } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { testDialect } from '../helpers/test-database.js';

/*
 * Every operation of /openapi.json, called by every role: through a browser session (owner, admin,
 * member, viewer) and through an API key (admin, member, viewer: keys are never owners). A route
 * must be allowed exactly for the roles its row below names, and answer every other caller 403
 * problem+json. A route missing from this table fails the test: every route has a role decision.
 * A route whose only documented security is the session cookie refuses every API key.
 */
/** Signed by a peer installation's key (RFC 9421): no session or API key opens it; every caller here gets 401. */
type PeerSignature = 'peer-signature';

const EXPECTED: Record<string, Access | PeerSignature> = {
  'GET /api/setup': 'public',
  'POST /api/setup': 'public',
  'POST /api/session': 'public',
  'GET /api/session/oidc': 'public',
  'GET /api/session/oidc/start': 'public',
  'GET /api/session/oidc/callback': 'public',
  'GET /api/invites/{token}': 'public',
  'POST /api/invites/{token}/accept': 'public',
  'GET /oauth/callback': 'public',

  'POST /peer/v1/hello': 'peer-signature',
  'GET /peer/v1/offer': 'peer-signature',
  'POST /peer/v1/messages': 'peer-signature',
  'POST /peer/v1/evidence': 'peer-signature',

  'GET /api/session': 'signed-in',
  'DELETE /api/session': 'signed-in',
  'POST /api/session/sign-out-everywhere': 'signed-in',
  'PUT /api/session/workspace': 'signed-in',
  'POST /api/account/password': 'signed-in',
  'POST /api/workspaces': 'signed-in',

  // the person who set the installation up: here the owner session, the first owner made
  'GET /api/peers': 'installation-owner',
  'POST /api/peers': 'installation-owner',
  'GET /api/peers/identity': 'installation-owner',
  'POST /api/peers/{id}/pause': 'installation-owner',
  'POST /api/peers/{id}/resume': 'installation-owner',
  'DELETE /api/peers/{id}': 'installation-owner',

  'GET /api/workspace': 'viewer',
  'GET /api/workspace/settings': 'viewer',
  'GET /api/workspace/onboarding': 'viewer',
  'GET /api/templates': 'viewer',
  'GET /api/templates/export': 'viewer',
  'GET /api/templates/{id}': 'viewer',
  'GET /api/mailboxes': 'viewer',
  'GET /api/mailboxes/providers': 'viewer',
  'GET /api/mailboxes/{id}': 'viewer',
  'GET /api/mailboxes/{id}/interactions': 'viewer',
  'GET /api/mailboxes/{id}/replies': 'viewer',
  'GET /api/mailboxes/{id}/stats': 'viewer',
  'GET /api/mailboxes/dns-status': 'viewer',
  'GET /api/mailboxes/{id}/checks': 'viewer',
  'GET /api/mailboxes/{id}/blocklists': 'viewer',
  'GET /api/mailboxes/{id}/verdicts': 'viewer',
  'GET /api/placement-tests': 'viewer',
  'GET /api/placement-tests/{id}': 'viewer',
  'POST /api/placement-tests': 'member',
  'GET /api/oauth/providers': 'viewer',
  'GET /api/stats/dashboard': 'viewer',
  'GET /api/stats/analytics': 'viewer',
  'GET /api/stats/reputation': 'viewer',
  'GET /api/stats/placement': 'viewer',
  'GET /api/stats/engagement': 'viewer',
  'GET /api/stats/export': 'viewer',
  'GET /api/stats/daily-summary': 'viewer',
  // Previews render without saving anything.
  'POST /api/templates/preview': 'viewer',
  'POST /api/templates/{id}/preview': 'viewer',

  'POST /api/templates': 'member',
  'POST /api/templates/import': 'member',
  'PATCH /api/templates/{id}': 'member',
  'PUT /api/templates/{id}': 'member',
  'DELETE /api/templates/{id}': 'member',
  'POST /api/templates/{id}/duplicate': 'member',
  'POST /api/mailboxes': 'member',
  'POST /api/mailboxes/import': 'member',
  'PATCH /api/mailboxes/{id}': 'member',
  'PUT /api/mailboxes/{id}/dkim-selector': 'member',
  'DELETE /api/mailboxes/{id}': 'member',
  'POST /api/mailboxes/{id}/pause': 'member',
  'POST /api/mailboxes/{id}/resume': 'member',
  'POST /api/oauth/{provider}/authorize': 'member',
  // Session only (an API key gets 403): confirming a consent is a person's decision.
  'GET /api/oauth/flows/{id}': 'member',
  'POST /api/oauth/flows/{id}/confirm': 'member',
  'DELETE /api/oauth/flows/{id}': 'member',

  'GET /api/keys': 'admin',
  'PATCH /api/workspace/settings': 'admin',
  'POST /api/keys': 'admin',
  'DELETE /api/keys/{id}': 'admin',
  'POST /api/keys/{id}/reissue': 'admin',
  'GET /api/webhooks': 'admin',
  'POST /api/webhooks': 'admin',
  'GET /api/webhooks/{id}': 'admin',
  'PATCH /api/webhooks/{id}': 'admin',
  'DELETE /api/webhooks/{id}': 'admin',
  'POST /api/webhooks/{id}/rotate-secret': 'admin',
  'POST /api/webhooks/{id}/test': 'admin',
  'GET /api/webhooks/{id}/deliveries': 'admin',
  'GET /api/alerts': 'viewer',
  'PUT /api/alerts/email': 'admin',
  'POST /api/alerts/email/test': 'admin',
  'GET /api/dmarc/source': 'viewer',
  'PUT /api/dmarc/source': 'admin',
  'DELETE /api/dmarc/source': 'admin',
  'GET /api/dmarc/domains': 'viewer',
  'GET /api/dmarc/domains/{domain}': 'viewer',
  'GET /api/feeds/snds': 'viewer',
  'PUT /api/feeds/snds': 'admin',
  'DELETE /api/feeds/snds': 'admin',
  'GET /api/feeds/postmaster': 'viewer',
  'PUT /api/feeds/postmaster': 'admin',
  // Session only (an API key gets 403): Google's consent comes back to the browser that started it.
  'POST /api/feeds/postmaster/authorize': 'admin',
  'DELETE /api/feeds/postmaster': 'admin',
  'GET /api/feeds/domains/{domain}': 'viewer',
  'GET /api/workspace/members': 'admin',
  'GET /api/workspace/members/{userId}/access': 'admin',
  'PATCH /api/workspace/members/{userId}': 'admin',
  'DELETE /api/workspace/members/{userId}': 'admin',
  'POST /api/workspace/invites': 'admin',
  'GET /api/workspace/invites': 'admin',
  'DELETE /api/workspace/invites/{id}': 'admin',
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
// Fits every path parameter's pattern (ids, invite tokens) and names nothing that exists.
const NO_SUCH_THING = 'zzzzzzzzzzzzzzzzzzzzzzzzzzzz';

interface Caller {
  name: string;
  /** The role the caller acts with; undefined for no credentials. */
  role?: Role;
  kind: 'session' | 'key' | 'anonymous';
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

function allowed(access: Access | PeerSignature, caller: Caller, sessionOnly: boolean): boolean {
  if (access === 'peer-signature') return false;
  if (access === 'public') return true;
  if (caller.kind === 'anonymous') return false;
  if (sessionOnly && caller.kind !== 'session') return false;
  if (access === 'signed-in') return caller.kind === 'session';
  if (access === 'installation-owner') return caller.kind === 'session' && caller.name === INSTALLATION_OWNER;
  return hasRole(caller.role!, access);
}

const INSTALLATION_OWNER = 'owner session';

let t: TestApp;
let operations: { method: string; path: string; access?: string; sessionOnly: boolean }[];
const callers: Caller[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { 'x-required-access'?: string; security?: Record<string, unknown>[] }>>;
  }>();
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        access: operation['x-required-access'],
        sessionOnly: JSON.stringify(operation.security) === JSON.stringify([{ session: [] }]),
      })),
  );

  for (const role of ROLES) {
    const person = await createPerson(t, t.workspace.id, role);
    callers.push({
      name: `${role} session`,
      role,
      kind: 'session',
      // A fresh session for every call: sign-out routes end the one they are called with.
      request: async (options) => (await openSession(t, person.userId, t.workspace.id)).request(options),
    });
  }
  const owner = callers.find((caller) => caller.name === INSTALLATION_OWNER)!;
  const installationOwner = await t.services.accounts.installationOwner();
  expect((await owner.request({ method: 'GET', url: '/api/session' })).json<{ user: { id: string } }>().user.id).toBe(
    installationOwner,
  );
  for (const role of ['viewer', 'member', 'admin'] as const) {
    const { apiKey } = await t.services.workspaces.createApiKey(t.workspace.id, `${role} key`, role);
    callers.push({
      name: `${role} key`,
      role,
      kind: 'key',
      request: (options) =>
        t.app.inject({ ...options, headers: { authorization: `Bearer ${apiKey}`, ...(options.headers ?? {}) } }),
    });
  }
  callers.push({ name: 'no credentials', kind: 'anonymous', request: (options) => t.app.inject(options) });
});

afterAll(async () => {
  await t.close();
});

describe(`every route × every role (${testDialect})`, () => {
  it('has a role decision for every operation of /openapi.json, and documents it', () => {
    const found = operations.map((o) => `${o.method} ${o.path}`).sort();
    const undecided = found.filter((route) => !(route in EXPECTED));
    expect(undecided, 'routes with no row in the role table').toEqual([]);
    expect(
      Object.keys(EXPECTED).filter((route) => !found.includes(route)),
      'rows for routes that are gone',
    ).toEqual([]);
    for (const operation of operations.filter((o) => o.path.startsWith('/api/'))) {
      expect(operation.access, `${operation.method} ${operation.path}`).toBe(
        EXPECTED[`${operation.method} ${operation.path}`],
      );
    }
  });

  it('allows exactly the roles of each route and answers every other caller 403 problem+json', async () => {
    const wrong: string[] = [];
    for (const { method, path, sessionOnly } of operations) {
      const access = EXPECTED[`${method} ${path}`];
      if (!access) continue; // reported by the test above
      const url = path.replace(/\{[^}]+\}/g, NO_SUCH_THING);
      for (const caller of callers) {
        const response = await caller.request({ method: method as InjectOptions['method'], url });
        const expectAllowed = allowed(access, caller, sessionOnly);
        const refusal = caller.kind === 'anonymous' || access === 'peer-signature' ? 401 : 403;
        const refused = response.statusCode === 401 || response.statusCode === 403;
        if (expectAllowed && refused) {
          wrong.push(
            `${method} ${path} as ${caller.name}: ${response.statusCode} (should be allowed) ${response.body}`,
          );
        } else if (!expectAllowed) {
          const problem = response.headers['content-type']?.toString().startsWith('application/problem+json');
          if (response.statusCode !== refusal || !problem) {
            wrong.push(`${method} ${path} as ${caller.name}: ${response.statusCode}, expected ${refusal} problem+json`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 240_000);
});
