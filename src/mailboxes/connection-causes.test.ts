// What a connection check says when it reaches no mail server (issue 31). On a public host the
// answer says what happened; on the operator's network it stays the one uniform answer. The
// loopback listeners below stand in for public hosts: the operator lists 127.0.0.1 in
// explainedHosts, which makes it answer as a public address would.
import net from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { closedPort, silentServer } from '../../test/helpers/ports.js';

const LOGIN_TIMEOUT_MS = 1_000;

/** A TCP server that greets like something else entirely (an SSH server's banner). */
async function foreignServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.write('SSH-2.0-OpenSSH_9.6\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function check(t: TestApp, host: string, port: number, secure = false): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/mailboxes',
    headers: { authorization: `Bearer ${t.workspace.apiKey}` },
    payload: {
      email: `cause-${port}@example.com`,
      connectionType: 'imap',
      password: 'guess',
      provider: 'custom',
      imap: { host, port, secure },
      smtp: { host, port, secure },
    },
  });
}

function causes(res: LightMyRequestResponse): Array<[string, string]> {
  const problem = expectProblem(res, 422, 'connection_failed');
  return (problem.failures ?? []).map((f) => [f.side, f.problem]);
}

describe('a connection check on a public host says what happened', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      mailPolicy: { allowedHosts: ['127.0.0.1'], plaintextHosts: [], explainedHosts: ['127.0.0.1'] },
      verifyTimeoutMs: LOGIN_TIMEOUT_MS,
      connectionChecks: { failureFloorMs: 0 },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a closed port: "connection refused", on each side', async () => {
    const port = await closedPort();
    const res = await check(t, '127.0.0.1', port);
    expect(causes(res)).toEqual([
      ['imap', 'connection_refused'],
      ['smtp', 'connection_refused'],
    ]);
    expect(res.json().detail).toBe(
      `Both IMAP and SMTP failed. Could not connect to an IMAP server at 127.0.0.1:${port}: connection refused (nothing listens on that port)` +
        ` — Could not connect to an SMTP server at 127.0.0.1:${port}: connection refused (nothing listens on that port)`,
    );
    expect(res.json().failures[0]).toMatchObject({ title: 'IMAP server refused the connection' });
  });

  it('a listener that never answers: "no answer within 1 s", within a bounded time', async () => {
    const silent = await silentServer();
    try {
      const started = performance.now();
      const res = await check(t, '127.0.0.1', silent.port);
      const elapsed = performance.now() - started;
      expect(causes(res)).toEqual([
        ['imap', 'no_answer'],
        ['smtp', 'no_answer'],
      ]);
      expect(res.json().detail).toBe(
        `Both IMAP and SMTP failed. Could not connect to an IMAP server at 127.0.0.1:${silent.port}: no answer within 1 s` +
          ` — Could not connect to an SMTP server at 127.0.0.1:${silent.port}: no answer within 1 s`,
      );
      expect(elapsed).toBeGreaterThanOrEqual(LOGIN_TIMEOUT_MS - 50);
      // generous for a loaded machine: what matters is that the deadline, not the default 10 s, ends it
      expect(elapsed).toBeLessThan(6_000);
    } finally {
      await silent.close();
    }
  });

  it('a listener that speaks something else: "not a mail server", without its banner', async () => {
    const foreign = await foreignServer();
    try {
      const res = await check(t, '127.0.0.1', foreign.port);
      expect(causes(res)).toEqual([
        ['imap', 'not_mail_server'],
        ['smtp', 'not_mail_server'],
      ]);
      expect(res.json().detail).toContain(
        `Could not connect to an IMAP server at 127.0.0.1:${foreign.port}: not a mail server (something answered, but not as an IMAP server)`,
      );
      expect(res.json().failures[1]).toMatchObject({ title: 'Not an SMTP server' });
      expect(res.body).not.toMatch(/SSH|OpenSSH/);
    } finally {
      await foreign.close();
    }
  });

  it('SSL/TLS towards a plain-text listener: the TLS handshake failed, and the fix says which switch', async () => {
    const foreign = await foreignServer();
    try {
      const res = await check(t, '127.0.0.1', foreign.port, true);
      expect(causes(res)).toEqual([
        ['imap', 'tls_mode_mismatch'],
        ['smtp', 'tls_mode_mismatch'],
      ]);
      expect(res.json().detail).toContain(
        `Could not connect to an IMAP server at 127.0.0.1:${foreign.port}: the TLS handshake failed (the port does not start with TLS)`,
      );
      expect(res.body).not.toMatch(/SSL routines|wrong version number|OpenSSH/);
    } finally {
      await foreign.close();
    }
  });

  it('a name that does not resolve: "no such host name"', async () => {
    const res = await check(t, 'no-such-host.invalid', 993, true);
    expect(causes(res)).toEqual([
      ['imap', 'no_such_host'],
      ['smtp', 'no_such_host'],
    ]);
    expect(res.json().detail).toContain(
      'Could not connect to an IMAP server at no-such-host.invalid:993: no such host name (it has no public address)',
    );
    expect(res.json().failures[0]).toMatchObject({
      title: 'IMAP host name not found',
      fix: expect.stringMatching(/^Check the spelling of the IMAP host name/),
    });
  });

  it('an address the policy refuses keeps the uniform answer, with no cause in it', async () => {
    const res = await check(t, '10.1.2.3', 993, true);
    expect(causes(res)).toEqual([
      ['imap', 'host_unreachable'],
      ['smtp', 'host_unreachable'],
    ]);
    expect(res.json().detail).toBe(
      'Both IMAP and SMTP failed. Could not connect to an IMAP server at 10.1.2.3:993' +
        ' — Could not connect to an SMTP server at 10.1.2.3:993',
    );
  });
});

describe('on the operator network the answer stays uniform', () => {
  let t: TestApp;

  beforeAll(async () => {
    // loopback allowed (a mail server on the operator's LAN) but not listed in explainedHosts
    t = await createTestApp({
      mailPolicy: { allowedHosts: ['127.0.0.1'], plaintextHosts: [] },
      verifyTimeoutMs: LOGIN_TIMEOUT_MS,
      connectionChecks: { failureFloorMs: 0 },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a closed port, a silent listener and a foreign banner all answer alike', async () => {
    const closed = await closedPort();
    const silent = await silentServer();
    const foreign = await foreignServer();
    try {
      const answers: unknown[] = [];
      for (const port of [closed, silent.port, foreign.port]) {
        const res = await check(t, '127.0.0.1', port);
        expect(causes(res)).toEqual([
          ['imap', 'host_unreachable'],
          ['smtp', 'host_unreachable'],
        ]);
        answers.push(JSON.parse(res.body.split(`127.0.0.1:${port}`).join('<target>')));
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
    } finally {
      await silent.close();
      await foreign.close();
    }
  });

  it('a name that resolves only to refused addresses answers as a name that does not exist', async () => {
    // localhost is loopback only; with nothing allowed the policy refuses it, and saying so
    // would tell which internal names exist
    const strict = await createTestApp({
      mailPolicy: { allowedHosts: [], plaintextHosts: [] },
      verifyTimeoutMs: LOGIN_TIMEOUT_MS,
      connectionChecks: { failureFloorMs: 0 },
    });
    try {
      const internal = await check(strict, 'localhost', 993, true);
      const missing = await check(strict, 'no-such-host.invalid', 993, true);
      const strip = (res: LightMyRequestResponse, host: string) =>
        JSON.parse(res.body.split(host).join('<name>')) as Record<string, unknown>;
      expect(causes(internal)).toEqual([
        ['imap', 'no_such_host'],
        ['smtp', 'no_such_host'],
      ]);
      expect(strip(internal, 'localhost')).toEqual(strip(missing, 'no-such-host.invalid'));
    } finally {
      await strict.close();
    }
  });
});
