// Placement tests of a user's own copy on the real mail stack (Postfix + Dovecot): a sender and
// three seeds, each seed labelled as a different provider; the stack's Sieve script junks mail whose
// subject holds JUNK_PHRASE, and dot's server drops mail from anyone else (a copy never found).
// Engine cycles on the clock, as a resident engine runs them. Checked: the report per provider and
// per seed within one cycle of delivery, the sender's daily budget (a test it has no room for is
// refused), the copies removed from the seeds and not rescued, the webhook event in the outbox, and
// the warmup statistics (interactions and rollups) left exactly as they were.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import { openImapSession } from '../../src/mail/imap.js';
import type { PlacementTest } from '../../src/placement-tests/placement-tests.schemas.js';
import { planDay } from '../../src/engine/planner.js';
import { createStackMailbox, proveAll, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import {
  describeWithMailStack,
  mailServerConfigs,
  requireMailStack,
  stackMailPolicy,
} from '../mailstack/use-mail-stack.js';
import { JUNK_PHRASE, MAIL_USERS, type MailUser } from '../mailstack/users.js';

const [samUser, ginaUser, ottoUser, dotUser] = MAIL_USERS.placement;
const WARMUP = {
  startVolume: 10,
  rampUpIncrement: 0,
  dailyLimit: 10,
  replyRate: 0,
  timezone: 'UTC',
  sendWindow: { start: '09:00', end: '17:00' },
};
const MONDAY = '2025-03-03';
const TUESDAY = addDays(MONDAY, 1);
const instant = (day: string, time: string) => new Date(`${day}T${time}:00.000Z`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithMailStack('placement tests on the real mail stack', () => {
  const stack = requireMailStack();
  const clock = fixedClock(instant(MONDAY, '08:00'));
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids: Record<string, string> = {};
  let tuesdayTarget = 0;

  async function cycle(at: Date) {
    clock.set(at);
    const summary = await engine.runCycle({ at });
    expect(summary.errors, at.toISOString()).toEqual([]);
    return summary;
  }

  /** Everything the warmup statistics are made of. */
  async function statistics() {
    return {
      interactions: await db.selectFrom('interactions').selectAll().orderBy('id').execute(),
      rollups: await db.selectFrom('daily_stats').selectAll().orderBy('mailbox_id').orderBy('day').execute(),
      reputations: await db.selectFrom('mailboxes').select(['id', 'reputation']).orderBy('id').execute(),
    };
  }

  /** Plans the day before its window opens, then holds the warmup mail back until late in the window. */
  async function planQuietDay(day: string) {
    await cycle(instant(day, '08:00'));
    await db
      .updateTable('warmup_messages')
      .set({ due_at: instant(day, '16:00').toISOString() })
      .where('status', '=', 'planned')
      .execute();
    const plan = await db
      .selectFrom('mailbox_plans')
      .select('target')
      .where('mailbox_id', '=', ids.sam)
      .where('day', '=', day)
      .executeTakeFirstOrThrow();
    return Number(plan.target);
  }

  async function getTest(id: string): Promise<PlacementTest> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/placement-tests/${id}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { placementTest: PlacementTest }).placementTest;
  }

  async function createTest(subject: string) {
    return testApp.workspace.request({
      method: 'POST',
      url: '/api/placement-tests',
      payload: {
        senderMailboxId: ids.sam,
        subject,
        html: '<p>Hello,</p><p>our spring collection is here. Reply to this mail for the catalogue.</p>',
        seedCount: 3,
      },
    });
  }

  /** Whether any copy of these Message-IDs is still in the user's mailbox (any folder, the Warmup folder too). */
  async function stillThere(user: (typeof MAIL_USERS.placement)[number], messageIds: string[]) {
    const session = await openImapSession(mailServerConfigs(stack, user).imap, { timeoutMs: 10_000 });
    try {
      return await session.findMessages(messageIds, { includeFolders: ['Warmup'] });
    } finally {
      await session.close();
    }
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    ids.sam = await createStackMailbox(testApp.workspace, stack, samUser, { warmup: WARMUP });
    ids.gina = await createStackMailbox(testApp.workspace, stack, ginaUser, { warmup: WARMUP });
    ids.otto = await createStackMailbox(testApp.workspace, stack, ottoUser, { warmup: WARMUP });
    ids.dot = await createStackMailbox(testApp.workspace, stack, dotUser, { warmup: WARMUP });
    // three seeds, three providers (the stack plays all of them)
    for (const [id, provider] of [
      [ids.gina, 'gmail'],
      [ids.otto, 'outlook'],
      [ids.dot, 'yahoo'],
    ] as const) {
      await db.updateTable('mailboxes').set({ provider }).where('id', '=', id).execute();
    }
    const response = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'https://hooks.example.com/placement', events: ['placement_test.completed'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    engine = createEngine(testEngineDeps(testApp, { seed: 7, workerId: 'placement' }));
  });

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
  });

  it(
    'reports per provider within a cycle of delivery, inside the sender’s budget, without moving the statistics',
    { timeout: 300_000 },
    async () => {
      const target = await planQuietDay(MONDAY);
      expect(target, 'the sender’s budget of the day').toBeGreaterThanOrEqual(3);
      const before = await statistics();

      // made before the window: queued, nothing sent until it opens
      const created = await createTest('Our spring collection');
      expect(created.statusCode, created.body).toBe(201);
      const test = (created.json() as { placementTest: PlacementTest }).placementTest;
      expect(created.headers.location).toBe(`/api/placement-tests/${test.id}`);
      expect(test).toMatchObject({ status: 'queued', totals: { pending: 3 } });
      expect(test.seeds.map((s) => s.provider).sort()).toEqual(['gmail', 'outlook', 'yahoo']);
      await cycle(instant(MONDAY, '08:30'));
      expect((await getTest(test.id)).status).toBe('queued');

      // the window opens: the copies go out; the next cycle finds them
      const sending = await cycle(instant(MONDAY, '09:00'));
      expect(sending.placement).toMatchObject({ sent: 3 });
      await sleep(1500); // Postfix hands mail to Dovecot asynchronously
      const finding = await cycle(instant(MONDAY, '09:02'));
      // found by the cycle that sent them (delivery on loopback is quick) or by the next one
      expect((sending.placement?.found ?? 0) + (finding.placement?.found ?? 0)).toBe(2);
      let report = await getTest(test.id);
      expect(report.status).toBe('waiting');
      const byProvider = Object.fromEntries(report.providers.map(({ provider, ...counts }) => [provider, counts]));
      expect(byProvider.gmail).toMatchObject({ inbox: 1, spam: 0, pending: 0 });
      expect(byProvider.outlook).toMatchObject({ inbox: 1, spam: 0, pending: 0 });
      expect(byProvider.yahoo).toMatchObject({ inbox: 0, pending: 1 });

      // the copy dot's server dropped is missing after 30 minutes, and the test is completed
      await cycle(instant(MONDAY, '09:31'));
      report = await getTest(test.id);
      expect(report).toMatchObject({
        status: 'completed',
        completedAt: instant(MONDAY, '09:31').toISOString(),
        totals: { inbox: 2, promotions: 0, spam: 0, other: 0, missing: 1, pending: 0 },
      });

      // the seeds keep nothing of the test, and the statistics did not move
      const messageIds = (
        await db.selectFrom('placement_test_copies').select('message_id').where('test_id', '=', test.id).execute()
      ).map((row) => row.message_id);
      expect(await stillThere(ginaUser, messageIds)).toEqual([]);
      expect(await stillThere(ottoUser, messageIds)).toEqual([]);
      expect(await statistics()).toEqual(before);

      // the event is in the webhook outbox, once
      const events = await db
        .selectFrom('webhook_events')
        .selectAll()
        .where('type', '=', 'placement_test.completed')
        .execute();
      expect(events).toHaveLength(1);
      const payload = JSON.parse(events[0].payload) as { data: { placementTest: PlacementTest } };
      expect(payload.data.placementTest).toMatchObject({ id: test.id, totals: { inbox: 2, missing: 1 } });
    },
  );

  it('a copy with the junked phrase lands in spam at every seed and is not rescued', { timeout: 300_000 }, async () => {
    tuesdayTarget = await planQuietDay(TUESDAY);
    const before = await statistics();
    const created = await createTest(`${JUNK_PHRASE}: 20% off this week`);
    expect(created.statusCode, created.body).toBe(201);
    const test = (created.json() as { placementTest: PlacementTest }).placementTest;
    await cycle(instant(TUESDAY, '09:00'));
    await sleep(1500);
    await cycle(instant(TUESDAY, '09:02'));
    const report = await getTest(test.id);
    // the phrase rule files into Junk before dot's server would drop foreign mail: all three in spam
    expect(report).toMatchObject({ status: 'completed', totals: { inbox: 0, spam: 3, pending: 0, missing: 0 } });
    for (const seed of report.seeds) expect(seed.placement, seed.mailbox.email).toBe('spam');
    const messageIds = (
      await db.selectFrom('placement_test_copies').select('message_id').where('test_id', '=', test.id).execute()
    ).map((row) => row.message_id);
    // removed from Junk, never moved to the inbox
    for (const user of [ginaUser, ottoUser, dotUser]) expect(await stillThere(user, messageIds)).toEqual([]);
    expect(await statistics()).toEqual(before);

    const list = await testApp.workspace.request({ method: 'GET', url: '/api/placement-tests?limit=1' });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toMatchObject({ placementTests: [{ id: test.id }], pagination: { total: 2, limit: 1 } });
  });

  it('counts each copy as a send of the sender’s day: a test the day has no room for is refused', async () => {
    // Tuesday's phrase test sent 3; each test made now holds 3 more until it goes out
    const room = tuesdayTarget - 3;
    for (let i = 0; i < Math.floor(room / 3); i++) {
      const accepted = await createTest(`Room ${i}`);
      expect(accepted.statusCode, accepted.body).toBe(201);
    }
    const refused = await createTest('No room left');
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({
      detail: expect.stringContaining(`room for ${room % 3} more send(s)`),
      errors: [{ path: '/body/seedCount' }],
    });
  });

  it('answers problem+json: unknown test, another workspace, bad bodies', async () => {
    const other = await testApp.createWorkspace('other');
    const [first] = (await db.selectFrom('placement_tests').select('id').execute()).map((row) => row.id);
    const hidden = await other.request({ method: 'GET', url: `/api/placement-tests/${first}` });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.headers['content-type']).toMatch(/^application\/problem\+json/);
    const foreignSender = await other.request({
      method: 'POST',
      url: '/api/placement-tests',
      payload: { senderMailboxId: ids.sam, subject: 'x', text: 'y' },
    });
    expect(foreignSender.statusCode).toBe(400);
    expect(foreignSender.json()).toMatchObject({ errors: [{ path: '/body/senderMailboxId' }] });
    const noBody = await testApp.workspace.request({
      method: 'POST',
      url: '/api/placement-tests',
      payload: { senderMailboxId: ids.sam, subject: 'x' },
    });
    expect(noBody.statusCode).toBe(400);
    const tooLong = await testApp.workspace.request({
      method: 'POST',
      url: '/api/placement-tests',
      payload: { senderMailboxId: ids.sam, subject: 'x', text: 'y'.repeat(100_001) },
    });
    expect(tooLong.statusCode).toBe(400);
  });
});

// A stack of its own whose every delivery carries the receiving domain's Authentication-Results
// and an X-Spam-Status (the sender's mail fails DKIM and DMARC there), as big providers write them.
const stackUser = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const pia = stackUser('pia@verdict-send.test');
const gus = stackUser('gus@verdict-one.test');
const ola = stackUser('ola@verdict-two.test');

describeWithMailStack('placement copies and what their receivers said, on a stack that writes verdicts', () => {
  let stack: PrivateMailStack;
  // Real time: IMAP dates are the server's
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clock = fixedClock(start);
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids: Record<string, string> = {};
  let minute = 0;

  async function cycle() {
    minute += 2;
    clock.set(new Date(start.getTime() + minute * 60_000));
    const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
    expect(summary.errors).toEqual([]);
    return summary.placement;
  }

  async function createTest(subject: string): Promise<PlacementTest> {
    const response = await testApp.workspace.request({
      method: 'POST',
      url: '/api/placement-tests',
      payload: { senderMailboxId: ids.pia, subject, text: 'Hello,\n\nour autumn range is in.', seedCount: 2 },
    });
    expect(response.statusCode, response.body).toBe(201);
    return (response.json() as { placementTest: PlacementTest }).placementTest;
  }

  async function getTest(id: string): Promise<PlacementTest> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/placement-tests/${id}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { placementTest: PlacementTest }).placementTest;
  }

  beforeAll(async () => {
    stack = await startPrivateMailStack('placement-verdicts', [pia, gus, ola], {
      authResults: { dkimFailSenders: [pia.email] },
    });
    testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
    db = testApp.database.db;
    for (const u of [pia, gus, ola]) {
      ids[u.email.split('@')[0]] = await createStackMailbox(testApp.workspace, stack, u, {
        warmup: { startVolume: 2, rampUpIncrement: 0, dailyLimit: 2, replyRate: 0, timezone: 'UTC' },
      });
    }
    await proveAll(db);
    await db.updateTable('mailboxes').set({ provider: 'gmail' }).where('id', '=', ids.gus).execute();
    await db.updateTable('mailboxes').set({ provider: 'fastmail' }).where('id', '=', ids.ola).execute();
    engine = createEngine(testEngineDeps(testApp, { seed: 11, workerId: 'placement-verdicts' }));
    // room in the sender's day for the tests; no warmup mail of its own in the way
    await planDay(engine.deps, clock.now(), { ignoreSchedule: true });
    await db
      .updateTable('mailbox_plans')
      .set({ target: sql<number>`target + 20` })
      .execute();
    await db.deleteFrom('warmup_messages').where('status', '=', 'planned').execute();
  }, 120_000);

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
    await stack?.stop();
  }, 30_000);

  it(
    'keeps each found copy’s verdict in the receiver’s own words, per seed and per provider',
    { timeout: 120_000 },
    async () => {
      const test = await createTest('Autumn range');
      await cycle();
      await sleep(1500); // Postfix hands mail to Dovecot asynchronously
      await cycle();
      const report = await getTest(test.id);
      expect(report).toMatchObject({ status: 'completed', totals: { inbox: 2, pending: 0, missing: 0 } });
      for (const seed of report.seeds) {
        expect(seed.verdict, seed.mailbox.email).toEqual({
          authservId: seed.mailbox.email.split('@')[1],
          spf: 'pass',
          dkim: 'fail',
          dmarc: 'fail',
          arc: null,
          scl: null,
          bcl: null,
          spamScore: seed.provider === 'gmail' ? null : 0.4,
        });
      }
      const byProvider = Object.fromEntries(report.providers.map((p) => [p.provider, p.verdicts]));
      const expected = { found: 1, spfPass: 100, dkimPass: 0, dmarcPass: 0, averageScl: null };
      expect(byProvider.fastmail).toEqual({ ...expected, averageSpamScore: 0.4 });
      // Gmail writes no X-Spam-Status: one on a Gmail copy is not the receiver's
      expect(byProvider.gmail).toEqual({ ...expected, averageSpamScore: null });
    },
  );

  it(
    'a copy sent again after a crash leaves no copy behind, and each seed counts once',
    { timeout: 120_000 },
    async () => {
      const test = await createTest('Sent twice');
      const gusCopy = await db
        .selectFrom('placement_test_copies')
        .selectAll()
        .where('test_id', '=', test.id)
        .where('seed_mailbox_id', '=', ids.gus)
        .executeTakeFirstOrThrow();
      // A worker died after SMTP accepted its copies and before it recorded them: the test is left
      // `sending`, and gus already holds the copy — twice, one of them filed into Junk.
      await db.updateTable('placement_tests').set({ status: 'sending' }).where('id', '=', test.id).execute();
      const raw = `From: ${pia.email}\r\nTo: ${gus.email}\r\nSubject: Sent twice\r\nMessage-ID: ${gusCopy.message_id}\r\nDate: ${clock.now().toUTCString()}\r\n\r\nHello\r\n`;
      const gusImap = mailServerConfigs(stack, gus).imap;
      let session = await openImapSession(gusImap, { timeoutMs: 10_000 });
      try {
        await session.append('INBOX', raw);
        await session.append(await session.ensureFolder('Junk'), raw);
      } finally {
        await session.close();
      }

      // the next worker sends the unrecorded copies again (same Message-IDs) and finds them
      const sent = await cycle();
      expect(sent).toMatchObject({ sent: 2 });
      await sleep(1500);
      const found = await cycle();
      expect((sent?.found ?? 0) + (found?.found ?? 0), 'each seed counted once').toBe(2);
      const report = await getTest(test.id);
      expect(report).toMatchObject({ status: 'completed', totals: { inbox: 2, spam: 0, pending: 0, missing: 0 } });
      expect(report.seeds.map((seed) => seed.placement)).toEqual(['inbox', 'inbox']);

      // nothing of the test is left in gus's mailbox: neither copy in INBOX, nor the one in Junk
      session = await openImapSession(gusImap, { timeoutMs: 10_000 });
      try {
        expect(
          await session.findMessages([gusCopy.message_id], { includeFolders: ['Warmup'], everyCopy: true }),
        ).toEqual([]);
      } finally {
        await session.close();
      }
    },
  );
});
