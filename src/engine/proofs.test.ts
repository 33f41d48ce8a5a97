// Proving mailboxes: the round trip when the owner connects one, and the engine's scheduled tries,
// against the real Postfix + Dovecot of the test run.
import type { LightMyRequestResponse } from 'fastify';
import { ImapFlow } from 'imapflow';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { testEngineDeps } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { describeWithMailStack, requireMailStack, type MailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../../test/mailstack/users.js';
import { MAX_PROOF_ATTEMPTS } from '../mailboxes/mailbox-proof.js';
import { proveDueMailboxes } from './proofs.js';

const [alice, amy, bob, bella, carol, chris] = MAIL_USERS.mailboxes;
const WRONG_PASSWORD = 'Wr0ng-Passw0rd-Marker-7731';

describeWithMailStack('proofs against the real mail stack', () => {
  let stack: MailStack;
  let t: TestApp;

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

  function call(opts: Parameters<TestApp['workspace']['request']>[0]): Promise<LightMyRequestResponse> {
    return t.workspace.request(opts);
  }

  function create(body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    return call({ method: 'POST', url: '/api/mailboxes', payload: body });
  }

  /** One engine prove step at `at`, waiting as long for the test message as the app does. */
  function prove(at: Date) {
    return proveDueMailboxes(testEngineDeps(t, { settings: { proofWaitMs: 2_000 } }), at);
  }

  beforeAll(async () => {
    stack = requireMailStack();
    t = await createTestApp({ roundTripWaitMs: 2_000 });
  });

  afterAll(async () => {
    await t.close();
  });

  afterEach(async () => {
    await t.database.db.deleteFrom('mailboxes').execute();
  });

  /** The round trip's messages (from the address to itself) in one folder of a stack user, over plain IMAP. */
  async function checkMessagesIn(user: MailUser, folder: string): Promise<number> {
    const client = new ImapFlow({
      host: stack.host,
      port: stack.imapPort,
      secure: false,
      auth: { user: user.email, pass: user.password },
      tls: { rejectUnauthorized: false },
      logger: false,
    });
    await client.connect();
    try {
      const lock = await client.getMailboxLock(folder);
      try {
        const uids = await client.search({ from: user.email, to: user.email }, { uid: true });
        return uids ? uids.length : 0;
      } finally {
        lock.release();
      }
    } finally {
      await client.logout();
    }
  }

  it('a verified mailbox sends itself a test message, finds it over IMAP, files it away and joins the pool', async () => {
    const filedBefore = await checkMessagesIn(bella, 'Warmup').catch(() => 0);
    const res = await create(customBody(bella));
    expect(res.statusCode, res.body).toBe(201);
    const { mailbox } = res.json();
    expect(mailbox.pool).toEqual({ member: true, provenAt: expect.any(String), reason: null });
    // the owner's inbox stays clean: the one copy went into Warmup
    expect(await checkMessagesIn(bella, 'INBOX')).toBe(0);
    expect(await checkMessagesIn(bella, 'Warmup')).toBe(filedBefore + 1);
  });

  it('an address its servers do not receive is stored, but stays out of the pool with the reason', async () => {
    // chris's address over carol's logins: both logins succeed, yet the test message goes to
    // chris's mailbox, which carol's IMAP never sees
    const servers = (side: 'imap' | 'smtp', port: number) => ({
      host: stack.host,
      port,
      secure: false,
      username: carol.email,
    });
    const res = await create(
      customBody(chris, {
        password: carol.password,
        imap: servers('imap', stack.imapPort),
        smtp: servers('smtp', stack.submissionPort),
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const { mailbox } = res.json();
    expect(mailbox).toMatchObject({ status: 'active', pool: { member: false, provenAt: null } });
    expect(mailbox.pool.reason).toMatch(/^not proven yet: a test message sent to chris@gamma\.test .* did not arrive/);
    expect(res.body).not.toContain(carol.password);

    // the engine tries again later, not on every cycle
    const row = await t.database.db
      .selectFrom('mailboxes')
      .select(['next_proof_at', 'proof_attempts'])
      .where('id', '=', mailbox.id)
      .executeTakeFirstOrThrow();
    expect(Number(row.proof_attempts)).toBe(1);
    expect(row.next_proof_at! > new Date().toISOString()).toBe(true);
    expect(await prove(new Date())).toEqual({ proven: [], failed: [], gaveUp: [] });
  });

  it('the engine proves a mailbox stored with verify: false, and keeps a wrong password out with its reason', async () => {
    const good = (await create(customBody(alice, { verify: false }))).json().mailbox;
    const wrong = (await create(customBody(amy, { password: WRONG_PASSWORD, verify: false }))).json().mailbox;
    expect(good.pool).toMatchObject({ member: false, reason: expect.stringMatching(/verify: false/) });

    const outcome = await prove(new Date());
    expect(outcome).toEqual({ proven: [good.id], failed: [wrong.id], gaveUp: [] });
    const after = async (id: string) => (await call({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
    expect((await after(good.id)).pool).toEqual({ member: true, provenAt: expect.any(String), reason: null });
    const refused = await after(wrong.id);
    expect(refused.pool).toMatchObject({ member: false, provenAt: null });
    expect(refused.pool.reason).toMatch(/^not proven yet: its SMTP server did not send .*535/);
    expect(JSON.stringify(refused)).not.toContain(WRONG_PASSWORD);
    // the same moment again: nothing is due
    expect(await prove(new Date())).toEqual({ proven: [], failed: [], gaveUp: [] });
  });

  it('new servers or a new password prove the mailbox again; a pause keeps the proof but leaves the pool', async () => {
    const { mailbox } = (await create(customBody(bob))).json();
    expect(mailbox.pool.member).toBe(true);
    const paused = (await call({ method: 'POST', url: `/api/mailboxes/${mailbox.id}/pause` })).json().mailbox;
    expect(paused.pool).toEqual({ member: false, provenAt: mailbox.pool.provenAt, reason: 'paused' });

    // the same login under chris's address would not prove anything: the address is fixed, so
    // move bob's mailbox onto carol's servers instead, whose mail bob's address never reaches
    const moved = await call({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: {
        password: carol.password,
        imap: { username: carol.email },
        smtp: { username: carol.email },
      },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().mailbox.pool).toMatchObject({ member: false, provenAt: null });

    const back = await call({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { password: bob.password, imap: { username: bob.email }, smtp: { username: bob.email } },
    });
    expect(back.json().mailbox.pool).toMatchObject({ provenAt: expect.any(String), reason: 'paused' });
    const resumed = await call({ method: 'POST', url: `/api/mailboxes/${mailbox.id}/resume` });
    expect(resumed.json().mailbox.pool).toMatchObject({ member: true, reason: null });
  });

  it('stops after a bounded number of failed round trips, tells the owner why, and a resume tries again', async () => {
    const { mailbox } = (await create(customBody(amy, { password: WRONG_PASSWORD, verify: false }))).json();
    const attemptsOf = async () =>
      t.database.db
        .selectFrom('mailboxes')
        .select(['proof_attempts', 'next_proof_at', 'status'])
        .where('id', '=', mailbox.id)
        .executeTakeFirstOrThrow();
    let at = new Date();
    const outcomes = [];
    // each try at the moment the last one said; a day later still nothing is due
    for (let round = 0; round < MAX_PROOF_ATTEMPTS + 2; round += 1) {
      outcomes.push(await prove(at));
      const row = await attemptsOf();
      if (row.next_proof_at) at = new Date(Math.max(at.getTime(), Date.parse(row.next_proof_at)) + 1);
    }
    const tried = outcomes.filter((outcome) => outcome.failed.includes(mailbox.id));
    expect(tried).toHaveLength(MAX_PROOF_ATTEMPTS);
    expect(outcomes[MAX_PROOF_ATTEMPTS - 1]?.gaveUp).toEqual([mailbox.id]);
    expect(await prove(new Date(at.getTime() + 7 * 24 * 3_600_000))).toEqual({ proven: [], failed: [], gaveUp: [] });
    expect(Number((await attemptsOf()).proof_attempts)).toBe(MAX_PROOF_ATTEMPTS);

    const seen = (await call({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` })).json().mailbox;
    expect(seen.status).toBe('error');
    expect(seen.lastError).toMatch(
      new RegExp(`^warmup stopped proving this address after ${MAX_PROOF_ATTEMPTS} failed round trips .*535.*resume`),
    );
    expect(JSON.stringify(seen)).not.toContain(WRONG_PASSWORD);

    // the owner fixes the password and resumes: the count starts again from a proof that works
    const fixed = await call({
      method: 'PATCH',
      url: `/api/mailboxes/${mailbox.id}`,
      payload: { password: amy.password },
    });
    expect(fixed.json().mailbox).toMatchObject({ status: 'active', pool: { member: true } });
    expect(Number((await attemptsOf()).proof_attempts)).toBe(0);
  });
});
