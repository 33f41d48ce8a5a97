// Failed sign-ins are limited across API processes: two apps over one database (SQLite, or
// PostgreSQL with WARMUP_TEST_DB=postgres), as two replicas behind a load balancer are, share the
// limits per account and per client address, the window, and the pruning of ended windows.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { fixedClock } from '../clock.js';
import { createServices } from '../services.js';
import { createPerson, TEST_PASSWORD } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../../test/helpers/test-app.js';

const LIMITS = { perAccount: 3, perAddress: 5, windowMs: 60_000 };
const start = new Date('2026-03-02T10:00:00.000Z');
const clock = fixedClock(start);
let t: TestApp;
/** The second replica: its own services and Fastify, the same database. */
let replica: FastifyInstance;

beforeAll(async () => {
  t = await createTestApp({ clock, loginLimits: LIMITS });
  const services = createServices({
    db: t.database.db,
    clock,
    dataDir: t.database.dataDir,
    secretKey: TEST_SECRET_KEY,
    loginLimits: LIMITS,
  });
  replica = await buildApp({ services, rateLimit: 0, authFailureLimit: 0, healthCheck: async () => {} });
  await replica.ready();
});

afterAll(async () => {
  await replica?.close();
  await t?.close();
});

const signIn = (app: FastifyInstance, email: string, password: string, remoteAddress: string) =>
  app.inject({ method: 'POST', url: '/api/session', remoteAddress, payload: { email, password } });

async function storedFailures(key: string): Promise<number | undefined> {
  const row = await t.database.db
    .selectFrom('sign_in_failures')
    .select('failures')
    .where('key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.failures);
}

describe('sign-in limits shared by API processes', () => {
  it('counts an account’s failures on either replica against one limit', async () => {
    const victim = await createPerson(t, t.workspace.id, 'viewer');
    // three failures, spread over both replicas and three addresses: each replica saw fewer than three
    const apps = [t.app, replica, t.app];
    for (const [i, app] of apps.entries()) {
      expect((await signIn(app, victim.email, 'wrong password', `10.1.0.${i + 1}`)).statusCode).toBe(401);
    }
    for (const app of [t.app, replica]) {
      const limited = expectProblem(await signIn(app, victim.email, TEST_PASSWORD, '10.1.0.9'), 429, 'rate_limited');
      expect(limited.detail).toMatch(/retry in \d+ s/);
    }
    const retry = Number((await signIn(replica, victim.email, TEST_PASSWORD, '10.1.0.9')).headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);

    // the window ends for both replicas at once
    clock.set(new Date(start.getTime() + LIMITS.windowMs + 1_000));
    expect((await signIn(replica, victim.email, TEST_PASSWORD, '10.1.0.9')).statusCode).toBe(201);
  }, 90_000);

  it('counts one address’s failures over many accounts on either replica against one limit', async () => {
    for (let i = 0; i < LIMITS.perAddress; i++) {
      const app = i % 2 === 0 ? t.app : replica;
      expect((await signIn(app, `nobody${i}@example.com`, 'wrong password', '10.2.2.2')).statusCode).toBe(401);
    }
    const other = await createPerson(t, t.workspace.id, 'viewer');
    expectProblem(await signIn(t.app, other.email, TEST_PASSWORD, '10.2.2.2'), 429, 'rate_limited');
    expectProblem(await signIn(replica, other.email, TEST_PASSWORD, '10.2.2.2'), 429, 'rate_limited');
    expect((await signIn(replica, other.email, TEST_PASSWORD, '10.2.2.3')).statusCode).toBe(201);
  }, 90_000);

  it('loses no failure when both replicas count at once, and prunes ended windows', async () => {
    const email = 'raced@example.com';
    const attempts = Array.from({ length: 6 }, (_, i) =>
      signIn(i % 2 === 0 ? t.app : replica, email, 'wrong password', `10.3.0.${i + 1}`),
    );
    const answers = await Promise.all(attempts);
    // checked before counted: some may be refused as limited, none gets in, each failure is counted
    for (const answer of answers) expect([401, 429]).toContain(answer.statusCode);
    const counted = answers.filter((a) => a.statusCode === 401).length;
    expect(await storedFailures(`account:${email}`)).toBe(counted);
    expect(counted).toBeGreaterThanOrEqual(LIMITS.perAccount);

    // a window that has ended is forgotten at the next failure, whichever replica sees it
    const before = await storedFailures('address:10.3.0.1');
    expect(before).toBe(1);
    clock.set(new Date(clock.now().getTime() + LIMITS.windowMs + 1_000));
    expect((await signIn(replica, 'someone@example.com', 'wrong password', '10.4.0.1')).statusCode).toBe(401);
    const left = await t.database.db.selectFrom('sign_in_failures').select('key').orderBy('key').execute();
    expect(left.map((row) => row.key)).toEqual(['account:someone@example.com', 'address:10.4.0.1']);
  }, 90_000);
});
