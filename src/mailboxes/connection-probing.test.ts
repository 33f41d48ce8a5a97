import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { closedPort, silentServer } from '../../test/helpers/ports.js';
import { MailConnectionError } from '../mail/errors.js';
import { createConnectionGuard } from './connection-guard.js';

/*
 * A tenant who uses the connection check of POST /api/mailboxes to map the operator's network
 * (issue 28, item 6): on internal hosts the operator lets tenants reach, a closed port, an address
 * with no route and a server that accepts but never says a word must all give the same answer as a
 * host the policy refuses, in the same window of time, whatever spelling of the address is used.
 * (A name that does not resolve says so, issue 31; a name that resolves only to refused addresses
 * says the same, in connection-causes.test.ts.)
 */

const FLOOR_MS = 1_500;
const LOGIN_TIMEOUT_MS = 1_000;

describe('connection failures on allowed hosts tell a prober nothing', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let closed: number;

  beforeAll(async () => {
    silent = await silentServer();
    closed = await closedPort();
    t = await createTestApp({
      // the operator lets tenants reach loopback and a documentation range nothing routes to
      mailPolicy: { allowedHosts: ['127.0.0.1', '192.0.2.0/24'], plaintextHosts: [] },
      verifyTimeoutMs: LOGIN_TIMEOUT_MS,
      connectionChecks: { failureFloorMs: FLOOR_MS },
    });
    // the route's first request compiles its schemas: not a cost any probe should carry
    await t.app.inject({
      method: 'POST',
      url: '/api/mailboxes',
      headers: { authorization: `Bearer ${t.workspace.apiKey}` },
      payload: {},
    });
  });

  afterAll(async () => {
    await t?.close();
    await silent?.close();
  });

  async function probe(host: string, port: number): Promise<{ res: LightMyRequestResponse; ms: number }> {
    const started = performance.now();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mailboxes',
      headers: { authorization: `Bearer ${t.workspace.apiKey}` },
      payload: {
        email: `probe-${port}@example.com`,
        connectionType: 'imap',
        password: 'guess',
        provider: 'custom',
        imap: { host, port, secure: true },
        smtp: { host, port, secure: true },
      },
    });
    return { res, ms: performance.now() - started };
  }

  /** The answer with the target itself (which the tenant typed) taken out. */
  function withoutTarget(res: LightMyRequestResponse, host: string, port: number): unknown {
    const problem = expectProblem(res, 422, 'connection_failed');
    return JSON.parse(JSON.stringify(problem).split(`${host}:${port}`).join('<target>'));
  }

  it('a closed port, a silent server, no route and a refused host answer alike, in one window', async () => {
    const targets: Array<[string, number]> = [
      ['127.0.0.1', closed],
      ['127.0.0.1', silent.port],
      ['192.0.2.1', 993],
      // internal and not allowed: the policy refuses it before any packet leaves
      ['10.1.2.3', 993],
    ];
    const answers: Array<{ host: string; port: number; ms: number; body: unknown }> = [];
    for (const [host, port] of targets) {
      const { res, ms } = await probe(host, port);
      answers.push({ host, port, ms, body: withoutTarget(res, host, port) });
    }
    console.log(
      'TIMES',
      answers.map((a) => Math.round(a.ms)),
    );
    const bodies = answers.map((a) => a.body);
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({
      failures: [
        { side: 'imap', problem: 'host_unreachable' },
        { side: 'smtp', problem: 'host_unreachable' },
      ],
    });
    const times = answers.map((a) => a.ms);
    expect(Math.min(...times), JSON.stringify(answers)).toBeGreaterThanOrEqual(FLOOR_MS);
    expect(Math.max(...times) - Math.min(...times), JSON.stringify(answers)).toBeLessThan(FLOOR_MS / 3);
  });

  it('127.1, 2130706433 and 0x7f.1 are judged as the address they reach: the answer of 127.0.0.1', async () => {
    const reference = withoutTarget((await probe('127.0.0.1', closed)).res, '127.0.0.1', closed);
    for (const alias of ['127.1', '2130706433', '0x7f.1', '[::ffff:127.0.0.1]']) {
      const { res, ms } = await probe(alias, closed);
      expect(withoutTarget(res, alias, closed), alias).toEqual(reference);
      expect(ms, alias).toBeGreaterThanOrEqual(FLOOR_MS);
    }
  });
});

describe('connection checks at once, across all workspaces', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof silentServer>>;

  beforeAll(async () => {
    silent = await silentServer();
    t = await createTestApp({
      mailPolicy: { allowedHosts: ['127.0.0.1'], plaintextHosts: [] },
      verifyTimeoutMs: LOGIN_TIMEOUT_MS,
      connectionChecks: { failureFloorMs: FLOOR_MS, maxChecks: 1, queueMs: 200 },
    });
  });

  afterAll(async () => {
    await t?.close();
    await silent?.close();
  });

  const check = (apiKey: string, n: number) =>
    t.app.inject({
      method: 'POST',
      url: '/api/mailboxes',
      headers: { authorization: `Bearer ${apiKey}` },
      payload: {
        email: `stall-${n}@example.com`,
        connectionType: 'imap',
        password: 'guess',
        provider: 'custom',
        imap: { host: '127.0.0.1', port: silent.port, secure: true },
        smtp: { host: '127.0.0.1', port: silent.port, secure: true },
      },
    });

  it('past the cap a check waits briefly, then is a 503 with Retry-After, whichever workspace asks', async () => {
    const other = await t.createWorkspace('Other tenant');
    const answers = await Promise.all([check(t.workspace.apiKey, 1), check(other.apiKey, 2), check(other.apiKey, 3)]);
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([422, 503, 503]);
    for (const res of answers.filter((r) => r.statusCode === 503)) {
      expectProblem(res, 503, 'connection_checks_busy');
      expect(res.headers['retry-after']).toBe('2');
    }
    // each check held the two connections of one place, never more
    expect(silent.connections()).toBe(2);
  });
});

describe('the cap (createConnectionGuard)', () => {
  it('checks past the cap wait their turn and run in the order they came', async () => {
    const guard = createConnectionGuard({ failureFloorMs: 0, maxChecks: 1, queueMs: 5_000 });
    const order: string[] = [];
    let finishFirst: (() => void) | undefined;
    const first = guard.settle([() => new Promise<void>((resolve) => (finishFirst = resolve))]);
    const second = guard.settle([async () => void order.push('second')]);
    const third = guard.settle([async () => void order.push('third')]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    finishFirst?.();
    await Promise.all([first, second, third]);
    expect(order).toEqual(['second', 'third']);
  });

  it('a login the server refused is passed on as it is, at once', async () => {
    const guard = createConnectionGuard({ failureFloorMs: 5_000 });
    const refused = new MailConnectionError({
      side: 'imap',
      kind: 'auth',
      message: 'IMAP login refused: [AUTHENTICATIONFAILED] Authentication failed.',
      host: 'mail.example.com',
      port: 993,
    });
    const started = performance.now();
    const [result] = await guard.settle([() => Promise.reject(refused)]);
    expect(result).toEqual({ status: 'rejected', reason: refused });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
