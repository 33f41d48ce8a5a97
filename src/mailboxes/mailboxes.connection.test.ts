// Mailbox routes that log in: every check runs against the real Postfix + Dovecot of the test run.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, LOG_REDACT_PATHS } from '../app.js';
import { systemClock } from '../clock.js';
import { verifyImap } from '../mail/imap.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../../test/helpers/test-app.js';
import { testDialect } from '../../test/helpers/test-database.js';
import {
  describeWithMailStack,
  requireMailStack,
  stackMailPolicy,
  type MailStack,
} from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../../test/mailstack/users.js';
import { loadSecretKey } from '../secrets/secrets.js';
import { createMailboxesService } from './mailboxes.service.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { closedPort, silentServer } from '../../test/helpers/ports.js';
import { recordingMailClients } from '../../test/helpers/recording-mail-clients.js';

const [alice, amy, bob, bella, carol, chris] = MAIL_USERS.mailboxes;
const WRONG_PASSWORD = 'Wr0ng-Passw0rd-Marker-7731';

const FAILED_STATE = {
  failure_count: 1,
  sync_failures: 2,
  send_retries: 4,
  sync_retries: 5,
  next_send_at: '2030-01-01T00:00:00.000Z',
  next_sync_at: '2030-01-01T00:00:00.000Z',
};
const CLEAN_STATE = {
  failure_count: 0,
  sync_failures: 0,
  send_retries: 0,
  sync_retries: 0,
  next_send_at: null,
  next_sync_at: null,
};

describeWithMailStack('mailboxes against the real mail stack', () => {
  let stack: MailStack;
  let t: TestApp;
  const logLines: string[] = [];
  const responses: string[] = [];

  function customBody(user: MailUser, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      email: user.email,
      password: user.password,
      provider: 'custom',
      connectionType: 'imap',
      imap: { host: stack.host, port: stack.imapPort, secure: false },
      smtp: { host: stack.host, port: stack.submissionPort, secure: false },
      ...overrides,
    };
  }

  /** Every response is kept, so the last test can prove no password ever left in one. */
  async function stateColumns(id: string) {
    const row = await t.database.db
      .selectFrom('mailboxes')
      .select(['failure_count', 'sync_failures', 'send_retries', 'sync_retries', 'next_send_at', 'next_sync_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return {
      ...row,
      failure_count: Number(row.failure_count),
      sync_failures: Number(row.sync_failures),
      send_retries: Number(row.send_retries),
      sync_retries: Number(row.sync_retries),
    };
  }

  async function call(opts: Parameters<TestApp['workspace']['request']>[0]): Promise<LightMyRequestResponse> {
    const res = await t.workspace.request(opts);
    responses.push(`${JSON.stringify(res.headers)}\n${res.body}`);
    return res;
  }

  async function create(body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    return call({ method: 'POST', url: '/api/mailboxes', payload: body });
  }

  /** The same database and workspace behind a second app whose mailboxes service differs in `options`. */
  async function appWith(
    options: Pick<Parameters<typeof createMailboxesService>[0], 'verifyTimeoutMs' | 'mailPolicy' | 'mailClients'>,
  ): Promise<FastifyInstance> {
    const secretKey = loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: t.database.dataDir });
    const mailboxes = createMailboxesService({ db: t.database.db, clock: systemClock, secretKey, ...options });
    return buildApp({ services: { ...t.services, mailboxes }, rateLimit: 0, healthCheck: async () => {} });
  }

  async function mailboxCount(): Promise<number> {
    const { n } = await t.database.db
      .selectFrom('mailboxes')
      .select(sql<number>`cast(count(*) as integer)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  beforeAll(async () => {
    stack = requireMailStack();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'trace', redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, sink);
    t = await createTestApp({ logger });
  });

  afterAll(async () => {
    await t.close();
  });

  afterEach(async () => {
    await t.database.db.deleteFrom('mailboxes').execute();
  });

  describe('create', () => {
    it('logs in to IMAP and SMTP, stores the mailbox as active and answers 201 with a Location', async () => {
      const res = await create(customBody(alice, { name: 'Alice Archer' }));
      expect(res.statusCode, res.body).toBe(201);
      const { mailbox } = res.json();
      expect(res.headers.location).toBe(`/api/mailboxes/${mailbox.id}`);
      expect(mailbox).toMatchObject({
        email: alice.email,
        name: 'Alice Archer',
        provider: 'custom',
        connectionType: 'imap',
        status: 'active',
        imap: {
          host: stack.host,
          port: stack.imapPort,
          secure: false,
          username: alice.email,
        },
        smtp: {
          host: stack.host,
          port: stack.submissionPort,
          secure: false,
          username: alice.email,
        },
        lastError: null,
        lastSyncAt: null,
      });
      expect(mailbox).not.toHaveProperty('password');

      const again = await call({ method: 'GET', url: res.headers.location as string });
      expect(again.statusCode).toBe(200);
      expect(again.json().mailbox).toEqual(mailbox);
    });

    it('works over implicit TLS too (IMAPS 993-style and SMTPS 465-style ports)', async () => {
      const res = await create(
        customBody(amy, {
          imap: { host: stack.host, port: stack.imapsPort, secure: true },
          smtp: { host: stack.host, port: stack.submissionsPort, secure: true },
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
    });

    it('removes the spaces of a pasted app password before logging in', async () => {
      const spaced = `${alice.password.slice(0, 4)} ${alice.password.slice(4, 8)} ${alice.password.slice(8)}`;
      const res = await create(customBody(alice, { password: spaced }));
      expect(res.statusCode, res.body).toBe(201);
      const credentials = await t.services.mailboxes.getCredentials(res.json().mailbox.id);
      expect(credentials.imap.password).toBe(alice.password);
    });

    it('two creates of one address racing through the login: one 201, one 409 from the unique constraint', async () => {
      // both pass the duplicate pre-check before either has finished logging in and inserted
      const [first, second] = await Promise.all([
        create(customBody(amy)),
        create(customBody(amy, { email: amy.email.toUpperCase() })),
      ]);
      expect([first.statusCode, second.statusCode].sort()).toEqual([201, 409]);
      expectProblem(first.statusCode === 409 ? first : second, 409, 'conflict');
      expect(await mailboxCount()).toBe(1);
    });

    it('a wrong password is a 422 naming IMAP with the server answer, and nothing is stored', async () => {
      const res = await create(customBody(bob, { password: WRONG_PASSWORD }));
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.detail).toMatch(/IMAP/);
      expect(problem.detail).toMatch(/AUTHENTICATIONFAILED|Authentication failed/i);
      // the same password is refused by SMTP as well, and the detail says so
      expect(problem.detail).toMatch(/SMTP/);
      expect(problem.detail).toMatch(/535/);
      expect(problem.detail).not.toContain(WRONG_PASSWORD);
      expect(problem.failures).toEqual([
        expect.objectContaining({ side: 'imap', problem: 'wrong_password', title: 'Wrong password or user name' }),
        expect.objectContaining({ side: 'smtp', problem: 'wrong_password', fix: expect.stringMatching(/password/) }),
      ]);
      expect(await mailboxCount()).toBe(0);
    });

    it('SSL/TLS on the STARTTLS ports is a tls_mode_mismatch whose fix says to turn SSL/TLS off, without OpenSSL text', async () => {
      const res = await create(
        customBody(carol, {
          imap: { host: stack.host, port: stack.imapPort, secure: true },
          smtp: { host: stack.host, port: stack.submissionPort, secure: true },
        }),
      );
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.failures?.map((f) => [f.side, f.problem])).toEqual([
        ['imap', 'tls_mode_mismatch'],
        ['smtp', 'tls_mode_mismatch'],
      ]);
      for (const failure of problem.failures ?? []) expect(failure.fix).toMatch(/turn SSL\/TLS off/);
      expect(res.body).not.toMatch(/SSL routines|wrong version number|0A00010B/);
    });

    it('a closed port is host_unreachable, with the same words whatever the port', async () => {
      const port = await closedPort();
      const res = await create(customBody(carol, { smtp: { host: '127.0.0.1', port, secure: false } }));
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.failures).toEqual([
        {
          side: 'smtp',
          problem: 'host_unreachable',
          title: 'SMTP server not reachable',
          fix: expect.stringMatching(/^Check the SMTP host name and port/),
        },
      ]);
    });

    it('SMTP refusing the login (IMAP fine) is a 422 that names SMTP only', async () => {
      // bob's login name with bella's password: IMAP logs bella in, SMTP refuses bob
      const res = await create(
        customBody(bella, {
          smtp: {
            host: stack.host,
            port: stack.submissionPort,
            secure: false,
            username: bob.email,
          },
        }),
      );
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.detail).toMatch(/^SMTP/);
      expect(problem.detail).not.toMatch(/IMAP/);
      expect(problem.detail).toMatch(/535/);
      expect(await mailboxCount()).toBe(0);
    });

    it('SMTP on a closed port (IMAP fine) is a 422 that names SMTP only', async () => {
      const port = await closedPort();
      const res = await create(customBody(carol, { smtp: { host: '127.0.0.1', port, secure: false } }));
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.detail).toBe(`Could not connect to an SMTP server at 127.0.0.1:${port}`);
    });

    it('IMAP on a closed port (SMTP fine) is a 422 that names IMAP only', async () => {
      const port = await closedPort();
      const res = await create(customBody(carol, { imap: { host: '127.0.0.1', port, secure: false } }));
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.detail).toMatch(/IMAP/);
      expect(problem.detail).not.toMatch(/SMTP/);
    });

    it('an unreachable host fails fast with a 422 on both sides', async () => {
      const port = await closedPort();
      const started = Date.now();
      const res = await create(
        customBody(chris, {
          imap: { host: '127.0.0.1', port, secure: false },
          smtp: { host: '127.0.0.1', port, secure: false },
        }),
      );
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.detail).toMatch(/IMAP/);
      expect(problem.detail).toMatch(/SMTP/);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await mailboxCount()).toBe(0);
    });

    it('verify: false stores the mailbox without contacting any server', async () => {
      const silent = await silentServer();
      try {
        const res = await create(
          customBody(chris, {
            password: WRONG_PASSWORD,
            verify: false,
            imap: { host: '127.0.0.1', port: silent.port, secure: false },
            smtp: { host: '127.0.0.1', port: silent.port, secure: false },
          }),
        );
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json().mailbox.status).toBe('active');
        expect(silent.connections()).toBe(0);
      } finally {
        await silent.close();
      }
    });
  });

  describe('a server that accepts the connection and never answers', () => {
    let timeoutApp: FastifyInstance | undefined;
    const checkTimeouts: Array<[string, number | undefined]> = [];

    beforeAll(async () => {
      // The same database and workspace behind a second app whose only difference is the one
      // knob a test turns: a 1 s login check instead of 10 s.
      timeoutApp = await appWith({
        verifyTimeoutMs: 1_000,
        mailPolicy: stackMailPolicy(requireMailStack()),
        mailClients: recordingMailClients(checkTimeouts),
      });
    });

    afterAll(async () => {
      await timeoutApp?.close();
    });

    const createWithShortCheck = (payload: Record<string, unknown>) =>
      timeoutApp!.inject({
        method: 'POST',
        headers: { authorization: `Bearer ${t.workspace.apiKey}` },
        url: '/api/mailboxes',
        payload,
      });

    it('is a 422 within the login timeout, naming both sides', async () => {
      checkTimeouts.length = 0;
      const silent = await silentServer();
      try {
        const started = Date.now();
        const res = await createWithShortCheck(
          customBody(chris, {
            imap: { host: '127.0.0.1', port: silent.port, secure: false },
            smtp: { host: '127.0.0.1', port: silent.port, secure: false },
          }),
        );
        const elapsed = Date.now() - started;
        const problem = expectProblem(res, 422, 'connection_failed');
        // a silent port answers like a closed one: nothing about the port's state
        expect(problem.detail).toBe(
          `Both IMAP and SMTP failed. Could not connect to an IMAP server at 127.0.0.1:${silent.port}` +
            ` — Could not connect to an SMTP server at 127.0.0.1:${silent.port}`,
        );
        expect(silent.connections()).toBeGreaterThanOrEqual(2);
        expect(elapsed).toBeGreaterThanOrEqual(900);
        // each side waited the 1 s login check, not the 10 s default (told by the clients, not by a
        // wall clock, which a loaded machine stretches: CI measured 10 s here)
        expect([...checkTimeouts].sort()).toEqual([
          ['IMAP', 1_000],
          ['SMTP', 1_000],
        ]);
        expect(await mailboxCount()).toBe(0);
      } finally {
        await silent.close();
      }
    });

    it('an SMTP server that greets and then stalls during login is a timeout, not host_unreachable', async () => {
      // SMTP says 220 and nothing more (EHLO and STARTTLS never answered); IMAP, at a closed
      // port beside it, is still the generic answer
      const stalled = await silentServer({ greeting: '220 mail.stalled.test ESMTP\r\n' });
      const imapPort = await closedPort();
      try {
        const started = Date.now();
        const res = await createWithShortCheck(
          customBody(chris, {
            imap: { host: '127.0.0.1', port: imapPort, secure: false },
            smtp: { host: '127.0.0.1', port: stalled.port, secure: false },
          }),
        );
        const elapsed = Date.now() - started;
        const problem = expectProblem(res, 422, 'connection_failed');
        expect(problem.detail).toBe(
          `Both IMAP and SMTP failed. Could not connect to an IMAP server at 127.0.0.1:${imapPort}` +
            ` — SMTP server 127.0.0.1:${stalled.port} did not answer within 1 s`,
        );
        expect(problem.failures).toEqual([
          expect.objectContaining({ side: 'imap', problem: 'host_unreachable' }),
          {
            side: 'smtp',
            problem: 'timeout',
            title: 'SMTP server did not answer in time',
            fix: expect.stringMatching(/try again in a few minutes/),
          },
        ]);
        expect(stalled.connections()).toBeGreaterThanOrEqual(1);
        expect(elapsed).toBeLessThan(8_000);
        expect(await mailboxCount()).toBe(0);
      } finally {
        await stalled.close();
      }
    });
  });

  describe('a server whose certificate no trusted CA signed', () => {
    let untrustingApp: FastifyInstance | undefined;

    beforeAll(async () => {
      // The stack's certificate is self-signed: without the operator's CA file it is not trusted.
      untrustingApp = await appWith({ mailPolicy: { allowedHosts: [requireMailStack().host], plaintextHosts: [] } });
    });

    afterAll(async () => {
      await untrustingApp?.close();
    });

    it.each([
      ['STARTTLS', false],
      ['implicit TLS', true],
    ])('over %s is untrusted_certificate, pointing at the CA setting', async (_mode, secure) => {
      const res = await untrustingApp!.inject({
        method: 'POST',
        headers: { authorization: `Bearer ${t.workspace.apiKey}` },
        url: '/api/mailboxes',
        payload: customBody(chris, {
          imap: { host: stack.host, port: secure ? stack.imapsPort : stack.imapPort, secure },
          smtp: { host: stack.host, port: secure ? stack.submissionsPort : stack.submissionPort, secure },
        }),
      });
      const problem = expectProblem(res, 422, 'connection_failed');
      expect(problem.failures?.map((f) => [f.side, f.problem, f.title])).toEqual([
        ['imap', 'untrusted_certificate', 'Server certificate not trusted'],
        ['smtp', 'untrusted_certificate', 'Server certificate not trusted'],
      ]);
      for (const failure of problem.failures ?? []) expect(failure.fix).toMatch(/WARMUP_MAIL_CA_FILE/);
      expect(res.body).not.toMatch(/DEPTH_ZERO|self-signed certificate|SSL routines/);
      expect(await mailboxCount()).toBe(0);
    });
  });

  describe('pause and resume', () => {
    it('pause is idempotent; resume re-verifies and a refusal keeps the mailbox paused', async () => {
      const created = await create(customBody(alice, { password: WRONG_PASSWORD, verify: false }));
      expect(created.statusCode).toBe(201);
      const { id } = created.json().mailbox;

      const paused = await call({ method: 'POST', url: `/api/mailboxes/${id}/pause` });
      expect(paused.statusCode).toBe(200);
      expect(paused.json().mailbox.status).toBe('paused');
      const pausedAgain = await call({ method: 'POST', url: `/api/mailboxes/${id}/pause` });
      expect(pausedAgain.statusCode).toBe(200);
      expect(pausedAgain.json().mailbox.status).toBe('paused');

      const refused = await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      const problem = expectProblem(refused, 422, 'connection_failed');
      expect(problem.detail).toMatch(/IMAP/);
      expect((await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox.status).toBe('paused');

      // the right password (verified) and the resume goes through
      const fixed = await call({ method: 'PATCH', url: `/api/mailboxes/${id}`, payload: { password: alice.password } });
      expect(fixed.statusCode, fixed.body).toBe(200);
      expect(fixed.json().mailbox.status).toBe('paused');
      const resumed = await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      expect(resumed.statusCode, resumed.body).toBe(200);
      expect(resumed.json().mailbox.status).toBe('active');
    });

    it('resume of an active, proven mailbox answers 200 without logging in', async () => {
      // stored unverified with a wrong password (a login would be refused), and marked proven
      const created = await create(customBody(amy, { password: WRONG_PASSWORD, verify: false }));
      const { id } = created.json().mailbox;
      await t.database.db
        .updateTable('mailboxes')
        .set({ proven_at: '2026-01-01T00:00:00.000Z', proof_note: null })
        .where('id', '=', id)
        .execute();
      const res = await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().mailbox).toMatchObject({ status: 'active', pool: { member: true } });
    });

    it('resume of an active mailbox that is not proven logs in first: a refusal is a 422 and it stays out', async () => {
      const created = await create(customBody(amy, { password: WRONG_PASSWORD, verify: false }));
      const { id } = created.json().mailbox;
      expectProblem(await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` }), 422, 'connection_failed');
      const mailbox = (await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
      expect(mailbox).toMatchObject({ status: 'active', pool: { member: false, provenAt: null } });
    });

    it('resume brings an error mailbox back to active and forgets the failures of both sides', async () => {
      const created = await create(customBody(bob));
      const { id } = created.json().mailbox;
      // two IMAP failures carried over must not stop the resumed mailbox at its next one
      await t.database.db
        .updateTable('mailboxes')
        .set({ ...FAILED_STATE, status: 'error', last_error: 'SMTP login refused' })
        .where('id', '=', id)
        .execute();

      const res = await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().mailbox).toMatchObject({ status: 'active', lastError: null });
      expect(await stateColumns(id)).toEqual(CLEAN_STATE);
    });

    it('resume of an error mailbox whose login still fails is a 422 and it stays in error', async () => {
      const created = await create(customBody(bella, { password: WRONG_PASSWORD, verify: false }));
      const { id } = created.json().mailbox;
      await t.database.db
        .updateTable('mailboxes')
        .set({ status: 'error', last_error: 'IMAP login refused' })
        .where('id', '=', id)
        .execute();

      expectProblem(await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` }), 422, 'connection_failed');
      const mailbox = (await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
      expect(mailbox).toMatchObject({ status: 'error', lastError: 'IMAP login refused' });
    });

    it('pause of an error mailbox pauses it', async () => {
      const created = await create(customBody(carol, { verify: false }));
      const { id } = created.json().mailbox;
      await t.database.db
        .updateTable('mailboxes')
        .set({ status: 'error', last_error: 'x' })
        .where('id', '=', id)
        .execute();
      const res = await call({ method: 'POST', url: `/api/mailboxes/${id}/pause` });
      expect(res.statusCode).toBe(200);
      expect(res.json().mailbox.status).toBe('paused');
    });
  });

  describe('update', () => {
    it('a password change is verified first; a refused one is a 422 and the old password stays', async () => {
      const created = await create(customBody(alice));
      const { id } = created.json().mailbox;
      await call({ method: 'POST', url: `/api/mailboxes/${id}/pause` });

      const refused = await call({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { password: WRONG_PASSWORD, name: 'Renamed' },
      });
      const problem = expectProblem(refused, 422, 'connection_failed');
      expect(problem.detail).not.toContain(WRONG_PASSWORD);
      const after = (await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
      expect(after.name).toBeNull(); // nothing of the request was applied

      // the old password still works: resume logs in with it
      const resumed = await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      expect(resumed.statusCode, resumed.body).toBe(200);
      expect(resumed.json().mailbox.status).toBe('active');
      expect((await t.services.mailboxes.getCredentials(id)).smtp.password).toBe(alice.password);
    });

    it('new hosts are verified first; a refusal keeps the old hosts', async () => {
      const created = await create(customBody(amy));
      const { id, imap } = created.json().mailbox;
      const port = await closedPort();
      const refused = await call({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { imap: { port }, password: amy.password },
      });
      const problem = expectProblem(refused, 422, 'connection_failed');
      expect(problem.detail).toMatch(/IMAP/);
      expect((await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox.imap).toEqual(imap);
    });

    it('a verified change brings an error mailbox back to active and clears lastError', async () => {
      const created = await create(customBody(bob, { password: WRONG_PASSWORD, verify: false }));
      const { id } = created.json().mailbox;
      await t.database.db
        .updateTable('mailboxes')
        .set({ ...FAILED_STATE, status: 'error', last_error: 'IMAP login refused' })
        .where('id', '=', id)
        .execute();

      const res = await call({ method: 'PATCH', url: `/api/mailboxes/${id}`, payload: { password: bob.password } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().mailbox).toMatchObject({ status: 'active', lastError: null });
      expect(await stateColumns(id)).toEqual(CLEAN_STATE);
    });

    it('switching from a preset provider to custom hosts is verified against the new hosts', async () => {
      const created = await create({
        email: bella.email,
        password: bella.password,
        provider: 'gmail',
        connectionType: 'imap',
        verify: false,
      });
      expect(created.json().mailbox.imap.host).toBe('imap.gmail.com');
      const { id } = created.json().mailbox;
      const body = customBody(bella);
      const res = await call({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { provider: 'custom', imap: body.imap, smtp: body.smtp, password: bella.password },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().mailbox).toMatchObject({
        provider: 'custom',
        imap: { host: stack.host, port: stack.imapPort, username: bella.email },
      });
    });

    it('name and warmup changes do not log in', async () => {
      const created = await create(customBody(carol, { password: WRONG_PASSWORD, verify: false }));
      const { id } = created.json().mailbox;
      const res = await call({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { name: 'Carol', warmup: { dailyLimit: 25 } },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().mailbox).toMatchObject({ name: 'Carol', warmup: { dailyLimit: 25 } });
    });
  });

  describe('credentials for the engine', () => {
    it('getCredentials returns both servers with the decrypted password, good for a real login', async () => {
      const created = await create(customBody(chris));
      const credentials = await t.services.mailboxes.getCredentials(created.json().mailbox.id);
      expect(credentials.imap).toEqual({
        host: stack.host,
        port: stack.imapPort,
        secure: false,
        username: chris.email,
        password: chris.password,
        // the operator's rules travel with the credentials, so the engine connects under them too
        policy: stackMailPolicy(stack),
      });
      expect(credentials.smtp).toMatchObject({ port: stack.submissionPort, password: chris.password });
      await expect(verifyImap(credentials.imap, { timeoutMs: 5_000 })).resolves.toBeUndefined();
    });

    it('getCredentials works across workspaces (the engine is not a tenant)', async () => {
      const other = await t.createWorkspace('other');
      const created = await other.request({
        method: 'POST',
        url: '/api/mailboxes',
        payload: customBody(alice, { verify: false }),
      });
      expect(created.statusCode).toBe(201);
      const credentials = await t.services.mailboxes.getCredentials(created.json().mailbox.id);
      expect(credentials.imap.username).toBe(alice.email);
      await expect(t.services.mailboxes.getCredentials('mbx_missing')).rejects.toMatchObject({ status: 404 });
    });
  });

  // Runs last: every response of this file, the whole log and the database file must be free of
  // every password used above.
  describe('secrecy', () => {
    it('no password appears in any response, in the trace-level log, or in plain text in the database files', async () => {
      // one more full round so this test holds on its own too
      const created = await create(customBody(alice, { name: 'Secret Keeper' }));
      const { id } = created.json().mailbox;
      await call({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { password: `${alice.password.slice(0, 5)} ${alice.password.slice(5)}` },
      });
      await call({ method: 'PATCH', url: `/api/mailboxes/${id}`, payload: { password: WRONG_PASSWORD } });
      await call({ method: 'GET', url: '/api/mailboxes' });
      await call({ method: 'POST', url: `/api/mailboxes/${id}/pause` });
      await call({ method: 'POST', url: `/api/mailboxes/${id}/resume` });
      await create(customBody(alice, { password: WRONG_PASSWORD }));
      await create(customBody(bob, { password: WRONG_PASSWORD }));
      await create({ ...customBody(bob), warmup: { dailyLimit: 0 } });

      const passwords = [WRONG_PASSWORD, ...MAIL_USERS.mailboxes.map((u) => u.password)];
      expect(responses.length).toBeGreaterThan(20);
      expect(logLines.length).toBeGreaterThan(20);
      expect(
        logLines.some(
          (line) => line.includes('"level":10') || line.includes('"level":20') || line.includes('"level":30'),
        ),
      ).toBe(true);
      const log = logLines.join('');
      const bodies = responses.join('\n');
      for (const password of passwords) {
        expect(bodies).not.toContain(password);
        expect(log).not.toContain(password);
      }

      if (testDialect === 'sqlite') {
        const files = fs.readdirSync(t.database.dataDir).filter((f) => f.startsWith('warmup.db'));
        expect(files).toContain('warmup.db');
        expect(files).toContain('warmup.db-wal');
        const bytes = Buffer.concat(files.map((f) => fs.readFileSync(path.join(t.database.dataDir, f))));
        expect(bytes.includes(Buffer.from(alice.email))).toBe(true); // the search really reads the rows
        for (const password of passwords) expect(bytes.includes(Buffer.from(password))).toBe(false);
      }
      const stored = await t.database.db.selectFrom('mailboxes').select('password_encrypted').execute();
      for (const row of stored) {
        expect(row.password_encrypted).toMatch(/^v1:/);
        for (const password of passwords) expect(row.password_encrypted).not.toContain(password);
      }
    });
  });
});
