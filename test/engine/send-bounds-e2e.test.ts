// The send bounds on the real mail stack (Postfix + Dovecot), with the engine driven through days
// of business time the way a resident engine runs: cycles on the clock, no --ignore-schedule.
// The scenario of the bug report: four mailboxes, window 09:00–17:00 UTC, dailyLimit 3,
// replyRate 100; created late on a Monday, one paused and resumed late on Tuesday while two
// workers share the work, the engine down all Wednesday and back on Thursday afternoon. Then,
// from the database: per mailbox and day, what it sent against its day's budget and dailyLimit,
// the window, the weekday and the minimum gap; and nothing closed without a reason.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { createEngine, type CycleSummary, type Engine } from '../../src/jobs/job-list.js';
import { MIN_SEND_GAP_MS } from '../../src/engine/send-budget.js';
import { createStackMailbox, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';

const users = MAIL_USERS.bounds;
const DAILY_LIMIT = 3;
const WARMUP = {
  startVolume: 3,
  rampUpIncrement: 0,
  dailyLimit: DAILY_LIMIT,
  replyRate: 100,
  timezone: 'UTC',
  sendWindow: { start: '09:00', end: '17:00' },
};
const MONDAY = '2025-03-03';
const TUESDAY = addDays(MONDAY, 1);
const THURSDAY = addDays(MONDAY, 3);
const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const instant = (day: string, time: string) => new Date(`${day}T${time}:00.000Z`);

describeWithMailStack('send bounds on the real mail stack', () => {
  const stack = requireMailStack();
  const clock = fixedClock(instant(MONDAY, '15:00'));
  let testApp: TestApp;
  let db: Kysely<Database>;
  let workers: Engine[];
  const ids: string[] = [];

  /** Cycles every `stepMinutes` from `from` (inclusive) to `to` (exclusive), every worker at each instant. */
  async function runBetween(from: Date, to: Date, stepMinutes: number, each?: (at: Date) => Promise<void>) {
    const cycles: CycleSummary[] = [];
    for (let t = from.getTime(); t < to.getTime(); t += stepMinutes * MINUTE) {
      const at = new Date(t);
      clock.set(at);
      await each?.(at);
      const summaries = await Promise.all(workers.map((w) => w.runCycle({ at })));
      for (const summary of summaries) expect(summary.errors, at.toISOString()).toEqual([]);
      cycles.push(...summaries);
      // Postfix hands mail to Dovecot asynchronously
      await sleep(20);
    }
    return cycles;
  }

  async function sends() {
    return db
      .selectFrom('warmup_messages')
      .select(['sender_mailbox_id', 'sent_at', 'kind'])
      .where('sent_at', 'is not', null)
      .orderBy('sent_at')
      .execute();
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    for (const user of users) ids.push(await createStackMailbox(testApp.workspace, stack, user, { warmup: WARMUP }));
    workers = [
      createEngine(testEngineDeps(testApp, { seed: 5, workerId: 'bounds-a' })),
      createEngine(testEngineDeps(testApp, { seed: 6, workerId: 'bounds-b' })),
    ];
  });

  afterAll(async () => {
    for (const worker of workers ?? []) await worker.stop();
    await testApp?.close();
  });

  it(
    'a late start, a late resume and a day of downtime stay within the budget, the window and the gap',
    { timeout: 600_000 },
    async () => {
      // Monday: created at 15:00, two hours before the window closes; one worker; into the night.
      const [first] = workers;
      workers = [first];
      await runBetween(instant(MONDAY, '15:00'), instant(MONDAY, '17:30'), 3);
      await runBetween(instant(MONDAY, '17:30'), instant(MONDAY, '23:59'), 60);
      const monday = await db.selectFrom('mailbox_plans').selectAll().where('day', '=', MONDAY).execute();
      expect(monday).toHaveLength(users.length);
      // a quarter of the window was left: a quarter of the target (3 × 2/8 rounds to 1 at most)
      for (const plan of monday) expect(plan.target).toBeLessThanOrEqual(1);

      // Tuesday: two workers at every instant; Bo is paused at 10:00 and resumed at 16:00.
      workers = [first, createEngine(testEngineDeps(testApp, { seed: 6, workerId: 'bounds-b' }))];
      const bo = ids[1];
      await runBetween(instant(TUESDAY, '06:00'), instant(TUESDAY, '18:00'), 5, async (at) => {
        const action = at.getTime() === instant(TUESDAY, '10:00').getTime() ? 'pause' : 'resume';
        if (
          at.getTime() === instant(TUESDAY, '10:00').getTime() ||
          at.getTime() === instant(TUESDAY, '16:00').getTime()
        ) {
          const response = await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${bo}/${action}` });
          expect(response.statusCode, response.body).toBe(200);
        }
      });
      await runBetween(instant(TUESDAY, '18:00'), instant(TUESDAY, '23:59'), 60);

      // Wednesday: the engine is down. Thursday: back at 13:00.
      const beforeThursday = (await sends()).length;
      const thursday = await runBetween(instant(THURSDAY, '13:00'), instant(THURSDAY, '17:30'), 4);
      // no burst when it comes back: at most one send per mailbox in the first cycle
      expect(thursday[0].send?.sent ?? 0).toBeLessThanOrEqual(users.length);
      const firstBack = (await sends()).filter((s) => s.sent_at === instant(THURSDAY, '13:00').toISOString());
      expect(new Set(firstBack.map((s) => s.sender_mailbox_id)).size).toBe(firstBack.length);

      const all = await sends();
      expect(all.length).toBeGreaterThan(beforeThursday);
      const plans = await db.selectFrom('mailbox_plans').selectAll().execute();
      const budget = new Map(plans.map((p) => [`${p.mailbox_id} ${p.day}`, Number(p.target)]));
      const perDay = new Map<string, number>();
      const lastOf = new Map<string, number>();
      for (const send of all) {
        const at = new Date(send.sent_at!);
        const day = send.sent_at!.slice(0, 10);
        // inside the window, never on Wednesday (down) nor outside a planned day
        expect(at >= instant(day, '09:00') && at < instant(day, '17:00'), send.sent_at!).toBe(true);
        const key = `${send.sender_mailbox_id} ${day}`;
        perDay.set(key, (perDay.get(key) ?? 0) + 1);
        const last = lastOf.get(send.sender_mailbox_id);
        if (last !== undefined)
          expect(at.getTime() - last, `gap before ${send.sent_at}`).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
        lastOf.set(send.sender_mailbox_id, at.getTime());
      }
      for (const [key, n] of perDay) {
        expect(budget.has(key), key).toBe(true);
        expect(n, key).toBeLessThanOrEqual(budget.get(key)!);
        expect(n, key).toBeLessThanOrEqual(DAILY_LIMIT);
      }
      // replies flowed, inside the same budgets
      expect(all.some((s) => s.kind === 'reply')).toBe(true);
      // Thursday started at 13:00: half the window, at most half the target (rounded)
      for (const plan of plans.filter((p) => p.day === THURSDAY)) expect(plan.target).toBeLessThanOrEqual(2);
      // nothing is sent by Bo while paused
      const boPaused = all.filter(
        (s) =>
          s.sender_mailbox_id === bo &&
          s.sent_at! >= instant(TUESDAY, '10:00').toISOString() &&
          s.sent_at! < instant(TUESDAY, '16:00').toISOString(),
      );
      expect(boPaused).toEqual([]);
      // what never went out was closed with its reason, or still waits for a later window
      const unsent = await db
        .selectFrom('warmup_messages')
        .select(['status', 'last_error', 'kind', 'due_at'])
        .where('sent_at', 'is', null)
        .execute();
      for (const row of unsent) {
        if (row.status === 'planned')
          expect(row.due_at >= instant(THURSDAY, '17:00').toISOString() || row.kind === 'reply').toBe(true);
        else expect(row).toMatchObject({ status: 'expired', last_error: expect.stringMatching(/^not sent: /) });
      }
      console.info(
        `send bounds: ${all.length} sends over ${perDay.size} mailbox-days, ${unsent.length} not sent; per day ${JSON.stringify(Object.fromEntries(perDay))}`,
      );
    },
  );
});
