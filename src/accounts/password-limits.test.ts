// Password checks are bounded: a wrong current password counts like a failed sign-in, every hash
// waits in one bounded queue (429 with Retry-After past it), a stranger's wrong guesses cannot lock
// the owner's known browser out, and first-run setup on a reachable server needs the log's token.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTokenRequired } from '../main.js';
import { createPerson, sessionCookieOf, TEST_PASSWORD } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { DEVICE_COOKIE } from './known-devices.js';

const LIMITS = { perAccount: 3, perAddress: 50, windowMs: 60_000 };
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ loginLimits: LIMITS });
});

afterAll(async () => {
  await t?.close();
});

const signIn = (email: string, password: string, remoteAddress: string, cookie?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/session',
    remoteAddress,
    payload: { email, password },
    ...(cookie ? { headers: { cookie } } : {}),
  });

/** The `warmup_device=…` pair a successful sign-in sets. */
function deviceCookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const line = (Array.isArray(header) ? header : [header ?? '']).find((l) => l.startsWith(`${DEVICE_COOKIE}=`));
  if (!line) throw new Error(`no device cookie in ${response.statusCode} ${response.body}`);
  expect(line).toMatch(/Path=\/api;.*HttpOnly; SameSite=Lax/);
  return line.split(';')[0]!;
}

describe('wrong current passwords', () => {
  it('count against the account’s limit: past it, 429 before any hash, and unknown browsers wait too', async () => {
    const person = await createPerson(t, t.workspace.id, 'viewer');
    const change = (currentPassword: string) =>
      person.request({
        method: 'POST',
        url: '/api/account/password',
        payload: { currentPassword, newPassword: 'a brand new password' },
      });
    for (let i = 0; i < LIMITS.perAccount; i++) {
      expectProblem(await change('not my password'), 400, 'validation_error', '/body/currentPassword');
    }
    const limited = expectProblem(await change(TEST_PASSWORD), 429, 'rate_limited');
    expect(limited.detail).toMatch(/retry in \d+ s/);
    expectProblem(await signIn(person.email, TEST_PASSWORD, '10.20.0.1'), 429, 'rate_limited');
  });
});

describe('the lockout', () => {
  it('locks unknown browsers only: the owner’s known browser still signs in with the right password', async () => {
    const person = await createPerson(t, t.workspace.id, 'owner');
    const first = await signIn(person.email, TEST_PASSWORD, '10.30.0.1');
    expect(first.statusCode, first.body).toBe(201);
    const device = deviceCookieOf(first);

    // a stranger guesses from several addresses until the account is locked
    for (let i = 0; i < LIMITS.perAccount; i++) {
      expect((await signIn(person.email, 'a wrong guess', `10.31.0.${i + 1}`)).statusCode).toBe(401);
    }
    expectProblem(await signIn(person.email, TEST_PASSWORD, '10.31.0.9'), 429, 'rate_limited');

    // the owner's browser, even on the stranger's address, is not locked out
    const known = await signIn(person.email, TEST_PASSWORD, '10.31.0.1', device);
    expect(known.statusCode, known.body).toBe(201);
    // a device cookie of another account, or a forged one, is an unknown browser
    const other = await createPerson(t, t.workspace.id, 'viewer');
    const otherDevice = deviceCookieOf(await signIn(other.email, TEST_PASSWORD, '10.32.0.1'));
    expectProblem(await signIn(person.email, TEST_PASSWORD, '10.32.0.1', otherDevice), 429, 'rate_limited');
    expectProblem(
      await signIn(person.email, TEST_PASSWORD, '10.32.0.1', `${device.slice(0, -4)}AAAA`),
      429,
      'rate_limited',
    );

    // the known browser has a limit of its own: guessing from it is limited just the same
    for (let i = 0; i < LIMITS.perAccount; i++) {
      expect((await signIn(person.email, 'a wrong guess', '10.30.0.1', device)).statusCode).toBe(401);
    }
    expectProblem(await signIn(person.email, TEST_PASSWORD, '10.30.0.1', device), 429, 'rate_limited');
  });
});

describe('the password queue', () => {
  it('answers a flood of one viewer with 429 and Retry-After, so another person’s sign-in is not held up', async () => {
    const flood = await createTestApp({ loginLimits: { perAccount: 1000, perAddress: 1000 } });
    try {
      const viewer = await createPerson(flood, flood.workspace.id, 'viewer');
      const other = await createPerson(flood, flood.workspace.id, 'member');
      const started = performance.now();
      const quiet = await flood.app.inject({
        method: 'POST',
        url: '/api/session',
        remoteAddress: '10.40.0.2',
        payload: { email: other.email, password: TEST_PASSWORD },
      });
      const quietMs = performance.now() - started;
      expect(quiet.statusCode).toBe(201);

      const tries = Array.from({ length: 32 }, () =>
        viewer.request({
          method: 'POST',
          url: '/api/account/password',
          remoteAddress: '10.40.0.1',
          payload: { currentPassword: 'not my password', newPassword: 'a brand new password' },
        }),
      );
      // the flood is under way (its hashes queued) when the other person signs in
      await sleep(100);
      const during = performance.now();
      const signedIn = await flood.app.inject({
        method: 'POST',
        url: '/api/session',
        remoteAddress: '10.40.0.2',
        payload: { email: other.email, password: TEST_PASSWORD },
      });
      const duringMs = performance.now() - during;
      const answers = await Promise.all(tries);
      expect(signedIn.statusCode, signedIn.body).toBe(201);

      const busy = answers.filter((answer) => answer.statusCode === 429);
      // one caller holds at most 3 places in the queue: the other 29 are turned away at once
      expect(busy.length).toBeGreaterThanOrEqual(29);
      for (const answer of busy) {
        expectProblem(answer, 429, 'rate_limited');
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // the sign-in waited behind at most the viewer's 3 hashes, not 32 (unbounded: 0.34 s became 5.9 s
      // here); a generous bound, as the test machine's cores are shared
      expect(duringMs).toBeLessThan(quietMs * 5 + 1_000);
      console.log(
        `sign-in alone ${Math.round(quietMs)} ms, during 32 wrong password changes ${Math.round(duringMs)} ms`,
      );
    } finally {
      await flood.close();
    }
  }, 60_000);
});

describe('first-run setup on a reachable server', () => {
  it('is needed off loopback and behind a proxy', () => {
    expect(setupTokenRequired({ host: '127.0.0.1', trustProxy: false })).toBe(false);
    expect(setupTokenRequired({ host: '::1', trustProxy: false })).toBe(false);
    expect(setupTokenRequired({ host: 'localhost', trustProxy: false })).toBe(false);
    expect(setupTokenRequired({ host: '0.0.0.0', trustProxy: false })).toBe(true);
    expect(setupTokenRequired({ host: '::', trustProxy: false })).toBe(true);
    expect(setupTokenRequired({ host: '192.168.1.10', trustProxy: false })).toBe(true);
    expect(setupTokenRequired({ host: '127.0.0.1', trustProxy: true })).toBe(true);
  });

  it('takes the setup token from the log, and nothing else', async () => {
    const open = await createTestApp({ requireSetupToken: true });
    try {
      const status = await open.app.inject({ method: 'GET', url: '/api/setup' });
      expect(status.json()).toEqual({ setupRequired: true, setupTokenRequired: true });
      const owner = {
        name: 'Olive',
        email: 'olive@example.com',
        password: 'a long owner password',
        workspaceName: 'A',
      };
      const setUp = (extra: object) =>
        open.app.inject({ method: 'POST', url: '/api/setup', payload: { ...owner, ...extra } });
      expectProblem(await setUp({}), 403, 'setup_token_invalid', '/body/setupToken');
      expectProblem(await setUp({ setupToken: 'a guess of the right length, nearly' }), 403, 'setup_token_invalid');
      const token = open.services.accounts.setupToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const created = await setUp({ setupToken: token });
      expect(created.statusCode, created.body).toBe(201);
      sessionCookieOf(created);
      expect((await open.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({
        setupRequired: false,
        setupTokenRequired: false,
      });
      expectProblem(await setUp({ setupToken: token, email: 'second@example.com' }), 409, 'conflict');
    } finally {
      await open.close();
    }
  });
});
