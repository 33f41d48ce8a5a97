// The real culprit, on the real mail stack (Postfix + Dovecot): one workspace of five mailboxes on
// five domains, day by day in simulated time. eve's server files everything she receives into Junk
// (a receiver that junks everyone); jed's mail lands in Junk wherever it goes (a sender with a real
// problem); abe, bea and cal are healthy. Checked through the API and the outbox: eve is named as
// the culprit with the fix and a `mailbox.receiver_filtering` event, the healthy senders'
// reputation and volume are not moved by her, and jed is red and slowed or stopped within 2 days.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { planDay } from '../../src/engine/planner.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import type { Mailbox } from '../../src/mailboxes/mailboxes.schemas.js';
import { createStackMailbox, proveAll, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { JUNK_RECIPIENTS, JUNK_SENDERS, MAIL_USERS } from '../mailstack/users.js';

const users = MAIL_USERS.culprit;
const [abe, bea, cal, eve, jed] = users;
const HEALTHY = [abe, bea, cal];
const WARMUP = {
  startVolume: 8,
  rampUpIncrement: 0,
  dailyLimit: 8,
  replyRate: 0,
  timezone: 'UTC',
  sendWindow: { start: '08:00', end: '18:00' },
};
const MONDAY = '2025-05-05';
const DAYS = 4;
const instant = (day: string, time: string) => new Date(`${day}T${time}:00.000Z`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithMailStack('the real culprit, on the real mail stack', () => {
  const stack = requireMailStack();
  const clock = fixedClock(instant(MONDAY, '08:00'));
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids = new Map<string, string>(); // email → mailbox id

  beforeAll(async () => {
    expect(JUNK_RECIPIENTS).toContain(eve.email);
    expect(JUNK_SENDERS).toContain(jed.email);
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    for (const user of users)
      ids.set(user.email, await createStackMailbox(testApp.workspace, stack, user, { warmup: WARMUP }));
    // their round trips are the pool's business (tested there): here they count as proven
    await proveAll(db);
    engine = createEngine(testEngineDeps(testApp, { seed: 29, workerId: 'culprit-worker' }));
    const webhook = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: 'http://127.0.0.1:9/hooks', events: ['mailbox.receiver_filtering'] },
    });
    expect(webhook.statusCode, webhook.body).toBe(201);
  });

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
  });

  /** Sent and not found yet, or not sent yet. */
  async function unsettled(): Promise<number> {
    const rows = await db
      .selectFrom('warmup_messages')
      .select('id')
      .where((eb) =>
        eb.or([eb('status', '=', 'planned'), eb.and([eb('status', '=', 'sent'), eb('found_at', 'is', null)])]),
      )
      .execute();
    return rows.length;
  }

  /** A day: planned, sent, found and filed, judged (the engine's cycles, ignore-schedule as run-once runs them). */
  async function runDay(day: string): Promise<void> {
    let minute = 0;
    const tick = () => {
      minute += 1;
      clock.set(new Date(instant(day, '09:00').getTime() + minute * 60_000));
      return clock.now();
    };
    await planDay(engine.deps, tick(), { ignoreSchedule: true });
    for (let i = 0; i < 20; i += 1) {
      const summary = await engine.runCycle({ at: tick(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      if ((await unsettled()) === 0) break;
      // Postfix hands mail to Dovecot asynchronously; give it a moment before the next sync
      await sleep(300);
    }
    // judged once more at the end of the day, on everything found
    const last = await engine.runCycle({ at: tick(), ignoreSchedule: true });
    expect(last.errors).toEqual([]);
  }

  async function mailbox(email: string): Promise<Mailbox> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${ids.get(email)}` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { mailbox: Mailbox }).mailbox;
  }

  async function volumeFactor(email: string): Promise<number> {
    const row = await db
      .selectFrom('mailboxes')
      .select('volume_factor')
      .where('id', '=', ids.get(email)!)
      .executeTakeFirstOrThrow();
    return Number(row.volume_factor);
  }

  it(
    'names the junk-everything receiver with the fix, leaves the healthy senders alone, and acts on the all-spam sender within 2 days',
    { timeout: 300_000 },
    async () => {
      for (let n = 0; n < DAYS; n += 1) {
        const day = addDays(MONDAY, n);
        await runDay(day);
        if (n === 1) {
          // the all-spam sender: red and slowed or stopped, with the reason, by the end of day 2
          const junk = await mailbox(jed.email);
          const guarded = junk.status === 'error' || (await volumeFactor(jed.email)) < 1;
          expect(guarded, JSON.stringify(junk.outlook.attention)).toBe(true);
          expect(junk.outlook.attention.map((a) => a.kind)).toEqual(
            expect.arrayContaining([junk.status === 'error' ? 'stopped_by_guard' : 'slowed_by_guard']),
          );
          expect(junk.reputation).toBeLessThan(50);
        }
      }

      const found = await db
        .selectFrom('warmup_messages')
        .select(['sender_mailbox_id', 'recipient_mailbox_id', 'placement'])
        .where('found_at', 'is not', null)
        .execute();
      const byEve = found.filter((row) => row.recipient_mailbox_id === ids.get(eve.email));
      console.info(
        `culprit e2e: ${found.length} found over ${DAYS} days; eve found ${byEve.length}, ` +
          `${byEve.filter((row) => row.placement === 'spam').length} in spam`,
      );
      // the mail stack did its part: eve filed everything into spam, and she got mail from the healthy senders
      expect(byEve.length).toBeGreaterThan(0);
      expect(byEve.every((row) => row.placement === 'spam')).toBe(true);

      // eve is named as the culprit, with the fix
      const culprit = await mailbox(eve.email);
      const filtering = culprit.outlook.attention.find((a) => a.kind === 'receiver_filtering');
      expect(filtering?.message, JSON.stringify(culprit.outlook.attention)).toMatch(
        /^Its filter files warmup mail from \d of \d senders into spam while other receivers find it in the inbox.*allow rule for the pool's addresses/,
      );
      const events = await db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('type', '=', 'mailbox.receiver_filtering')
        .execute();
      expect(events).toHaveLength(1);
      const payload = JSON.parse(events[0]!.payload) as { data: { mailbox: { email: string }; junkedSenders: number } };
      expect(payload.data.mailbox.email).toBe(eve.email);
      expect(payload.data.junkedSenders).toBeGreaterThanOrEqual(3);

      // the healthy senders: their mail that eve junked does not move them
      for (const user of HEALTHY) {
        const healthy = await mailbox(user.email);
        const junkedByEve = byEve.filter((row) => row.sender_mailbox_id === ids.get(user.email)).length;
        expect(junkedByEve, user.email).toBeGreaterThan(0);
        expect(healthy.status, user.email).toBe('active');
        expect(await volumeFactor(user.email), user.email).toBe(1);
        expect(healthy.reputation, user.email).toBe(100);
        const kinds = healthy.outlook.attention.map((a) => a.kind);
        expect(kinds, user.email).not.toContain('slowed_by_guard');
        expect(kinds, user.email).not.toContain('spam_rate');
      }
    },
  );
});
