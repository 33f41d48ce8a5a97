// Faults heal themselves, on a real Postfix + Dovecot of this file's own (crashing or freezing the
// run's shared stack would break the other suites):
// - Dovecot crashes for longer than the old error threshold, then comes back: every mailbox is
//   `active` again with no API call, its lastError said the truth meanwhile, and the mail that
//   waited goes out within the mailbox's bounds, not in a burst;
// - Dovecot hangs while `warmup serve` syncs: SIGTERM still exits 0 within the shutdown bound
//   and gives every lease back;
// - a message delivered twice: both copies read and filed, counted once.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database, MailboxRow } from '../../src/db/schema.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import { planDay } from '../../src/engine/planner.js';
import { MIN_SEND_GAP_MS } from '../../src/engine/send-budget.js';
import { sendDueMessages } from '../../src/engine/sender.js';
import { openImapSession, WARMUP_FOLDER } from '../../src/mail/imap.js';
import { SHUTDOWN_TIMEOUT_MS } from '../../src/main.js';
import { createStackMailbox, testEngineDeps } from '../helpers/engine.js';
import { freePort, startWarmup } from '../helpers/processes.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import {
  describeWithMailStack,
  mailServerConfigs,
  stackMailEnv,
  stackMailPolicy,
} from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const OUTAGE_USERS = [
  user('ada@fault-one.test'),
  user('bea@fault-two.test'),
  user('cal@fault-three.test'),
  user('dan@fault-one.test'),
  user('eve@fault-two.test'),
];
const HANG_USERS = [user('hal@hang-one.test'), user('hue@hang-two.test'), user('hex@hang-three.test')];
const DUPLICATE_USERS = [user('dot@dup-one.test'), user('dee@dup-two.test')];

const minutes = (n: number) => n * 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stack: PrivateMailStack;

async function mailboxes(db: Kysely<Database>): Promise<MailboxRow[]> {
  return db.selectFrom('mailboxes').selectAll().orderBy('email').execute();
}

describeWithMailStack('faults heal themselves', () => {
  beforeAll(async () => {
    stack = await startPrivateMailStack('faults', [...OUTAGE_USERS, ...HANG_USERS, ...DUPLICATE_USERS]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  }, 30_000);

  describe('Dovecot crashes for half an hour, then comes back', () => {
    // Business time on a fixed morning; a three-hour send window, so the outage hits planned sends.
    const start = new Date(`${new Date().toISOString().slice(0, 10)}T10:00:00.000Z`);
    const clock = fixedClock(start);
    const STEP = minutes(2);
    let testApp: TestApp;
    let engine: Engine;

    beforeAll(async () => {
      testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
      for (const u of OUTAGE_USERS) {
        await createStackMailbox(testApp.workspace, stack, u, {
          warmup: {
            startVolume: 3,
            rampUpIncrement: 0,
            dailyLimit: 3,
            replyRate: 0,
            timezone: 'UTC',
            sendWindow: { start: '10:00', end: '13:00' },
          },
        });
      }
      engine = createEngine(
        testEngineDeps(testApp, { seed: 19, settings: { imapTimeoutMs: 5_000, smtpTimeoutMs: 5_000 } }),
      );
    });

    afterAll(async () => {
      await engine?.stop();
      await testApp?.close();
      await stack.restartDovecot();
    });

    /** Whether some mail is still to be found, or has a step due, by `by`. */
    async function imapWorkDueBy(db: Kysely<Database>, by: Date): Promise<boolean> {
      const row = await db
        .selectFrom('warmup_messages')
        .select('id')
        .where('status', '=', 'sent')
        .where('engaged_at', 'is', null)
        .where((eb) => eb.or([eb('found_at', 'is', null), eb('engage_after', '<=', by.toISOString())]))
        .executeTakeFirst();
      return row !== undefined;
    }

    async function sendDueBy(db: Kysely<Database>, by: Date): Promise<boolean> {
      const row = await db
        .selectFrom('warmup_messages')
        .select('id')
        .where('status', '=', 'planned')
        .where('due_at', '<=', by.toISOString())
        .executeTakeFirst();
      return row !== undefined;
    }

    async function cycleUntil(until: Date, afterEach?: () => Promise<void>): Promise<void> {
      while (clock.now() < until) {
        clock.set(new Date(clock.now().getTime() + STEP));
        await engine.runCycle();
        await afterEach?.();
        // Postfix hands mail to Dovecot asynchronously
        await sleep(50);
      }
    }

    it(
      'keeps every mailbox active, says what is happening, and resumes by itself without a burst',
      { timeout: 240_000 },
      async () => {
        const db = testApp.database.db;
        // Some mail has gone out before the outage, which starts 40 minutes in at the earliest (so the
        // mailboxes' days end within the test). Sends are spread at random over the window, so the first
        // may come late (15 over three hours: none in the first 40 minutes, now and then).
        const someSent = async () =>
          (await db.selectFrom('warmup_messages').select('id').where('status', '=', 'sent').executeTakeFirst()) !==
          undefined;
        await cycleUntil(new Date(start.getTime() + minutes(40)));
        while (!(await someSent())) {
          expect(clock.now().getTime() - start.getTime()).toBeLessThan(minutes(90));
          await cycleUntil(new Date(clock.now().getTime() + STEP));
        }
        // A mailbox logs in only when it has something to do, and sends are spread over the window:
        // the outage starts once some mail is to be sent and some to be found or acted on within its
        // half hour, so both sides meet it.
        while (
          !(await imapWorkDueBy(db, new Date(clock.now().getTime() + minutes(20)))) ||
          !(await sendDueBy(db, new Date(clock.now().getTime() + minutes(20))))
        ) {
          expect(clock.now().getTime() - start.getTime()).toBeLessThan(minutes(90));
          await cycleUntil(new Date(clock.now().getTime() + STEP));
        }
        const crashedAt = clock.now().getTime();

        await stack.crashDovecot();
        const outageErrors = new Set<string>();
        let mostFailures = 0;
        await cycleUntil(new Date(crashedAt + minutes(30)), async () => {
          for (const mailbox of await mailboxes(db)) {
            expect(mailbox.status, `${mailbox.email}: ${mailbox.last_error}`).toBe('active');
            if (mailbox.last_error) outageErrors.add(mailbox.last_error);
            mostFailures = Math.max(mostFailures, mailbox.send_retries, mailbox.sync_retries);
          }
        });
        // longer than the old rule's three failures in a row, on both sides
        expect(mostFailures).toBeGreaterThanOrEqual(3);
        // Postfix answers `454 4.7.0 Temporary authentication failure` without Dovecot, or nothing at all
        expect(
          [...outageErrors].some((e) =>
            /^(SMTP login refused .*454 4\.7\.0|SMTP server .* did not answer|Could not connect to an SMTP server)/.test(
              e,
            ),
          ),
        ).toBe(true);
        expect([...outageErrors].some((e) => /^(Cannot connect to|Could not connect to an) IMAP server/.test(e))).toBe(
          true,
        );
        for (const error of outageErrors) {
          expect(error).toMatch(/a temporary failure: warmup tries again by itself/);
          expect(error).not.toMatch(/app password/);
        }

        await stack.restartDovecot();
        await stack.flushQueue();
        // no API call: the mailboxes come back by themselves once their servers answer
        await cycleUntil(new Date(crashedAt + minutes(150)));

        for (const mailbox of await mailboxes(db)) {
          expect(mailbox).toMatchObject({
            status: 'active',
            last_error: null,
            failure_count: 0,
            sync_failures: 0,
            send_retries: 0,
            sync_retries: 0,
            next_send_at: null,
          });
        }
        const rows = await db
          .selectFrom('warmup_messages')
          .select(['sender_mailbox_id', 'status', 'sent_at', 'found_at', 'attempts', 'last_error'])
          .orderBy('sent_at')
          .execute();
        // Nothing was lost because of the outage: what went out arrived. What waited through it went
        // out in the share of the window that was left; the rest was closed with its reason.
        expect(rows.length).toBeGreaterThanOrEqual(OUTAGE_USERS.length * 2);
        const given = rows.filter((r) => r.status !== 'sent');
        for (const row of given)
          expect(row).toMatchObject({ status: 'expired', last_error: expect.stringMatching(/^not sent: /) });
        expect(given.length).toBeLessThan(rows.length / 2);
        expect(rows.filter((r) => r.status === 'sent' && r.found_at === null)).toEqual([]);
        const received = await db
          .selectFrom('interactions')
          .select(sql<number>`cast(count(*) as integer)`.as('n'))
          .where('type', '=', 'received')
          .executeTakeFirstOrThrow();
        expect(Number(received.n)).toBe(rows.length - given.length);
        // no burst: a mailbox's sends stay the planner's minimum gap apart, through the outage and after it
        const bySender = new Map<string, number[]>();
        for (const row of rows.filter((r) => r.sent_at !== null)) {
          bySender.set(row.sender_mailbox_id, [
            ...(bySender.get(row.sender_mailbox_id) ?? []),
            Date.parse(row.sent_at!),
          ]);
        }
        for (const times of bySender.values()) {
          for (let i = 1; i < times.length; i += 1)
            expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
          // and inside the window
          for (const t of times) expect(t >= start.getTime() && t < start.getTime() + minutes(180)).toBe(true);
        }
      },
    );
  });

  describe('Dovecot hangs while `warmup serve` is syncing', () => {
    let testApp: TestApp;

    beforeAll(async () => {
      testApp = await createTestApp({ mailPolicy: stackMailPolicy(stack) });
      for (const u of HANG_USERS) {
        await createStackMailbox(testApp.workspace, stack, u, {
          warmup: { startVolume: 2, rampUpIncrement: 0, dailyLimit: 2, replyRate: 0, timezone: 'UTC' },
        });
      }
    });

    afterAll(async () => {
      stack.thawDovecot();
      await testApp?.close();
    });

    it(
      `SIGTERM exits 0 within ${SHUTDOWN_TIMEOUT_MS / 1000} s and gives every lease and sync claim back`,
      { timeout: 120_000 },
      async () => {
        const db = testApp.database.db;
        // Mail on its way to every mailbox, so the next sync logs in over IMAP. Sent as of ten
        // minutes ago, so that sync is due as soon as `serve` starts.
        const earlier = new Date(Date.now() - minutes(10));
        const deps = testEngineDeps(testApp, { seed: 3 });
        await planDay(deps, earlier, { ignoreSchedule: true });
        const sent = await sendDueMessages(deps, { now: earlier, ignoreSchedule: true });
        expect(sent.sent).toBeGreaterThan(0);

        stack.freezeDovecot();
        const port = await freePort();
        const serve = await startWarmup(
          ['serve'],
          {
            ...testApp.database.env,
            ...stackMailEnv(stack),
            WARMUP_SECRET_KEY: TEST_SECRET_KEY,
            PORT: String(port),
            LOG_LEVEL: 'info',
          },
          /warmup engine started/,
          60_000,
        );
        try {
          // wait until the engine is inside the hung sync: it holds a mailbox's sync claim
          const deadline = Date.now() + 30_000;
          let held = 0;
          while (held === 0 && Date.now() < deadline) {
            await sleep(200);
            const row = await db
              .selectFrom('mailboxes')
              .select(sql<number>`cast(count(*) as integer)`.as('n'))
              .where('sync_owner', 'is not', null)
              .executeTakeFirstOrThrow();
            held = Number(row.n);
          }
          expect(held, serve.output()).toBeGreaterThan(0);
          await sleep(1_000);

          const signalled = Date.now();
          serve.child.kill('SIGTERM');
          const exit = await serve.exited;
          const took = Date.now() - signalled;
          expect(exit, serve.output()).toEqual({ code: 0, signal: null });
          expect(took).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
        } finally {
          if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
        }

        expect(await db.selectFrom('leases').selectAll().execute()).toEqual([]);
        expect(await db.selectFrom('mailboxes').select('email').where('sync_owner', 'is not', null).execute()).toEqual(
          [],
        );
        const leasedRows = await db
          .selectFrom('warmup_messages')
          .select('id')
          .where('lease_owner', 'is not', null)
          .execute();
        expect(leasedRows).toEqual([]);
        // stopping is not a failure of the mailboxes
        for (const mailbox of await mailboxes(db)) {
          expect(mailbox).toMatchObject({ status: 'active', sync_retries: 0, sync_failures: 0 });
        }
      },
    );
  });

  describe('a message delivered twice', () => {
    let testApp: TestApp;

    beforeAll(async () => {
      testApp = await createTestApp({ mailPolicy: stackMailPolicy(stack) });
      for (const u of DUPLICATE_USERS) {
        await createStackMailbox(testApp.workspace, stack, u, {
          warmup: { startVolume: 1, rampUpIncrement: 0, dailyLimit: 1, replyRate: 0, timezone: 'UTC' },
        });
      }
    });

    afterAll(async () => {
      await testApp?.close();
    });

    it('has both copies read and filed into Warmup, and counts it once', { timeout: 60_000 }, async () => {
      const db = testApp.database.db;
      const deps = testEngineDeps(testApp, { seed: 5 });
      const now = Date.now();
      await planDay(deps, new Date(now - minutes(2)), { ignoreSchedule: true });
      const sent = await sendDueMessages(deps, { now: new Date(now - minutes(2)), ignoreSchedule: true });
      expect(sent.sent).toBe(2);
      const [recipient] = DUPLICATE_USERS;
      const row = await db
        .selectFrom('warmup_messages as w')
        .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
        .select(['w.message_id', 'w.recipient_mailbox_id'])
        .where('r.email', '=', recipient!.email)
        .executeTakeFirstOrThrow();

      // The same message arrives a second time (a resend after a lease expired, a relay's retry…)
      const session = await openImapSession(mailServerConfigs(stack, recipient!).imap, { timeoutMs: 10_000 });
      try {
        let delivered: { folder: string; uid: number } | undefined;
        for (let i = 0; i < 50 && !delivered; i += 1) {
          [delivered] = await session.findMessages([row.message_id]);
          if (!delivered) await sleep(200);
        }
        expect(delivered).toBeDefined();
        const raw = await session.fetchRaw(delivered!.folder, delivered!.uid);
        await session.append(delivered!.folder, raw);
      } finally {
        await session.close();
      }

      // the sync acts at once with ignoreSchedule: read (or not), flag (or not), file
      const engine = createEngine(deps);
      await engine.runCycle({ at: new Date(now), ignoreSchedule: true });
      await engine.stop();

      const check = await openImapSession(mailServerConfigs(stack, recipient!).imap, { timeoutMs: 10_000 });
      try {
        const copies = await check.findMessages([row.message_id], { includeFolders: [WARMUP_FOLDER], everyCopy: true });
        expect(copies).toHaveLength(2);
        const opened = await db
          .selectFrom('interactions')
          .select('type')
          .where('mailbox_id', '=', row.recipient_mailbox_id)
          .where('message_id', '=', row.message_id)
          .execute();
        const types = opened.map((r) => r.type).sort();
        expect(types.filter((t) => t === 'received')).toHaveLength(1);
        for (const copy of copies) {
          expect(copy.folder).toBe(WARMUP_FOLDER);
          expect(copy.seen).toBe(types.includes('opened'));
          expect(copy.flagged).toBe(types.includes('flagged'));
        }
      } finally {
        await check.close();
      }
    });
  });
});
