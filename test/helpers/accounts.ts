import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Role } from '../../src/http/access.js';
import { hashToken } from '../../src/http/auth.js';
import type { TestApp } from './test-app.js';

export const TEST_PASSWORD = 'correct horse battery';

export interface TestPerson {
  userId: string;
  email: string;
  workspaceId: string;
  /** app.inject as this person: a session cookie, and the session's CSRF token on every request. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  cookie: string;
  csrfToken: string;
}

let counter = 0;

/** A person with `role` in the workspace, made the way `warmup user create` makes one. */
export async function createPerson(
  t: TestApp,
  workspaceId: string,
  role: Role,
  email = `person-${++counter}-${randomBytes(3).toString('hex')}@example.com`,
): Promise<TestPerson> {
  const { userId } = await t.services.accounts.createUser({
    name: `${role} person`,
    email,
    password: TEST_PASSWORD,
    role,
    workspaceId,
  });
  const session = await openSession(t, userId, workspaceId);
  return { userId, email, workspaceId, ...session };
}

/**
 * A fresh session for the user, written straight into the table (no password hashing: the route
 * table test needs hundreds of them). Sign-in itself is tested through the route.
 */
export async function openSession(
  t: TestApp,
  userId: string,
  workspaceId: string | null,
): Promise<Pick<TestPerson, 'request' | 'cookie' | 'csrfToken'>> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const now = t.clock.now();
  await t.database.db
    .insertInto('sessions')
    .values({
      id: `ses_${randomBytes(8).toString('hex')}`,
      token_hash: hashToken(token),
      user_id: userId,
      workspace_id: workspaceId,
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 60 * 60 * 1000).toISOString(),
    })
    .execute();
  const cookie = `warmup_session=${token}`;
  return {
    cookie,
    csrfToken,
    request: (opts) =>
      t.app.inject({ ...opts, headers: { cookie, 'x-csrf-token': csrfToken, ...(opts.headers ?? {}) } }),
  };
}

/** The `warmup_session=…` pair of a Set-Cookie answer, to send back as a Cookie header. */
export function sessionCookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const line = (Array.isArray(header) ? header : [header ?? '']).find((l) => l.startsWith('warmup_session='));
  if (!line) throw new Error(`no session cookie in ${response.statusCode} ${response.body}`);
  return line.split(';')[0]!;
}
