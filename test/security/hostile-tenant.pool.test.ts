// The hostile tenant, end to end on the real mail stack: a second workspace joins the installation
// to collect the pool's mail and to score down the first workspace's mailboxes. It connects an
// address whose mail its servers never receive (with `verify: false`), a receiver whose server
// files everything into spam and one whose server deletes everything foreign. Ten simulated days
// of `run-once --ignore-schedule` later, the victim's mailboxes must still be active, at full
// volume, with a reputation within the documented bound of what their own workspace saw, and no
// warmup mail may have gone to the unproven address.
import { ImapFlow } from 'imapflow';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { runOnce } from '../../src/jobs/job-list.js';
import { FOREIGN_EVIDENCE_BOUND } from '../../src/engine/evidence.js';
import { seededRandom } from '../../src/engine/random.js';
import { reputationScore } from '../../src/engine/reputation.js';
import { createEngineFor } from '../../src/main.js';
import { silentLogger } from '../helpers/engine.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { describeWithMailStack, requireMailStack, type MailStack } from '../mailstack/use-mail-stack.js';
import { DISCARD_RECIPIENTS, JUNK_RECIPIENTS, MAIL_USERS, type MailUser } from '../mailstack/users.js';

const [vera, wade, xena, yuri, zoe] = MAIL_USERS.hostile;
const FIRST_DAY = '2025-06-02';
const DAYS = 10;
const WARMUP = { startVolume: 2, rampUpIncrement: 1, dailyLimit: 3, replyRate: 30, timezone: 'UTC' };

interface MailboxView {
  id: string;
  status: string;
  reputation: number;
  lastError: string | null;
  pool: { member: boolean; provenAt: string | null; reason: string | null };
}

function dayAt(index: number): Date {
  return new Date(`${addDays(FIRST_DAY, index)}T10:00:00Z`);
}

describeWithMailStack('a hostile tenant', () => {
  let stack: MailStack;
  let testApp: TestApp;
  let db: Kysely<Database>;
  let victim: TestWorkspace;
  let hostile: TestWorkspace;
  const clock = fixedClock(dayAt(0));
  const ids: Record<string, string> = {};

  function servers(login: MailUser) {
    return {
      imap: { host: stack.host, port: stack.imapPort, secure: false, username: login.email },
      smtp: { host: stack.host, port: stack.submissionPort, secure: false, username: login.email },
    };
  }

  /** POST /api/mailboxes for `email`, logging in as `login` (the same user unless the tenant lies). */
  async function connect(
    workspace: TestWorkspace,
    email: string,
    login: MailUser,
    options: { verify?: boolean } = {},
  ): Promise<MailboxView> {
    const response = await workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: {
        email,
        password: login.password,
        provider: 'custom',
        connectionType: 'imap',
        ...servers(login),
        warmup: WARMUP,
        ...(options.verify === false ? { verify: false } : {}),
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    return (response.json() as { mailbox: MailboxView }).mailbox;
  }

  async function view(workspace: TestWorkspace, id: string): Promise<MailboxView> {
    const response = await workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { mailbox: MailboxView }).mailbox;
  }

  /** Messages in a stack user's folder sent by one of `senders`, read over plain IMAP. */
  async function messagesFrom(user: MailUser, folder: string, senders: string[]): Promise<number> {
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
        let count = 0;
        for (const sender of senders) count += ((await client.search({ from: sender }, { uid: true })) || []).length;
        return count;
      } finally {
        lock.release();
      }
    } finally {
      await client.logout();
    }
  }

  /** What one sender's mail met at receivers of the given workspace, over the whole run. */
  async function evidenceAt(senderId: string, receiverWorkspace: string) {
    const row = await db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
      .select([
        sql<number>`cast(count(w.sent_at) as integer)`.as('sent'),
        sql<number>`cast(count(w.found_at) as integer)`.as('found'),
        sql<number>`cast(sum(case when w.placement = 'spam' then 1 else 0 end) as integer)`.as('spam'),
        sql<number>`cast(sum(case when w.status = 'lost' then 1 else 0 end) as integer)`.as('lost'),
        sql<number>`cast(sum(case when w.status = 'bounced' then 1 else 0 end) as integer)`.as('bounced'),
      ])
      .where('w.sender_mailbox_id', '=', senderId)
      .where('r.workspace_id', '=', receiverWorkspace)
      .executeTakeFirstOrThrow();
    return {
      sent: Number(row.sent),
      found: Number(row.found),
      spam: Number(row.spam ?? 0),
      lost: Number(row.lost ?? 0),
      bounced: Number(row.bounced ?? 0),
    };
  }

  beforeAll(async () => {
    stack = requireMailStack();
    // the stack delivers in milliseconds; the lying address should not cost the default 20 s a day
    testApp = await createTestApp({ clock, roundTripWaitMs: 2_000 });
    db = testApp.database.db;
    victim = testApp.workspace;
    hostile = await testApp.createWorkspace('hostile');
    expect(JUNK_RECIPIENTS).toContain(xena.email);
    expect(DISCARD_RECIPIENTS).toContain(yuri.email);

    for (const user of [vera, wade]) ids[user.email] = (await connect(victim, user.email, user)).id;
    // the hostile receivers prove themselves (their servers keep mail from themselves)…
    for (const user of [xena, yuri]) {
      const mailbox = await connect(hostile, user.email, user);
      expect(mailbox.pool.member, `${user.email} proves itself`).toBe(true);
      ids[user.email] = mailbox.id;
    }
    // …and the hostile workspace claims zoe's address over xena's servers, unchecked
    const claimed = await connect(hostile, zoe.email, xena, { verify: false });
    expect(claimed.pool).toEqual({ member: false, provenAt: null, reason: expect.stringMatching(/^not proven yet/) });
    ids.claimed = claimed.id;
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it(
    'cannot receive through an unproven address, nor stop, slow or score down the victim by junking and deleting its mail',
    { timeout: 300_000 },
    async () => {
      for (let index = 0; index < DAYS; index++) {
        const at = dayAt(index);
        clock.set(at);
        const engine = createEngineFor(
          { database: testApp.database, services: testApp.services, logger: silentLogger, clock },
          // Each cycle tries again to prove the claimed address, whose proof never arrives: at the
          // default wait (20 s) that was 200 s of this test. The local mail stack delivers in well
          // under the 2 s the app's own round trips are given (createTestApp above).
          { random: seededRandom(7000 + index), workerId: `hostile-${index}`, settings: { proofWaitMs: 2_000 } },
        );
        const summary = await runOnce(engine, { at, ignoreSchedule: true });
        expect(summary.errors, `day ${index}`).toEqual([]);
      }

      // The attack happened: the hostile receivers junked and deleted the victim's mail.
      for (const user of [vera, wade]) {
        const atHostile = await evidenceAt(ids[user.email], hostile.id);
        expect(atHostile.spam + atHostile.lost, `${user.email} met the hostile receivers`).toBeGreaterThan(0);
      }

      // No warmup mail was ever addressed to the unproven address, and none reached its real mailbox.
      const toClaimed = await db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where((eb) => eb.or([eb('recipient_mailbox_id', '=', ids.claimed), eb('sender_mailbox_id', '=', ids.claimed)]))
        .executeTakeFirstOrThrow();
      expect(Number(toClaimed.n)).toBe(0);
      expect(await messagesFrom(zoe, 'INBOX', [vera.email, wade.email, yuri.email])).toBe(0);
      const claimed = await view(hostile, ids.claimed);
      expect(claimed.pool).toMatchObject({ member: false, provenAt: null });
      expect(claimed.pool.reason).toMatch(/did not arrive/);

      // The victim: still active, at full volume, scored on what its own workspace saw, give or
      // take the documented bound for what the hostile workspace alone reported.
      for (const user of [vera, wade]) {
        const mailbox = await view(victim, ids[user.email]);
        expect(mailbox, user.email).toMatchObject({ status: 'active', lastError: null, pool: { member: true } });
        const { volume_factor } = await db
          .selectFrom('mailboxes')
          .select('volume_factor')
          .where('id', '=', ids[user.email])
          .executeTakeFirstOrThrow();
        expect(Number(volume_factor), `${user.email} volume`).toBe(1);
        const own = reputationScore(await evidenceAt(ids[user.email], victim.id));
        expect(mailbox.reputation, `${user.email} reputation`).toBeGreaterThanOrEqual(own - FOREIGN_EVIDENCE_BOUND);
        expect(mailbox.reputation, `${user.email} reputation`).toBeLessThanOrEqual(own + FOREIGN_EVIDENCE_BOUND);
      }
    },
  );
});
