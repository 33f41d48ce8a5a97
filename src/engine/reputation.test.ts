import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createMailbox } from '../../test/helpers/engine.js';
import { insertDeliveryDay, type DeliveryDay } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { addDays } from '../calendar.js';
import type { DeliveryCounts } from '../interactions/interactions.repository.js';
import { markJudgementsDue } from './mailbox-engine-state.repository.js';
import { reputationScore, updateReputation } from './reputation.js';

function counts(overrides: Partial<DeliveryCounts>): DeliveryCounts {
  return { sent: 20, found: 20, spam: 0, bounced: 0, lost: 0, ...overrides };
}

describe('reputationScore', () => {
  it.each([
    ['clean mail', counts({}), 100],
    ['20% spam: half the spam penalty', counts({ spam: 4 }), 80],
    ['40% spam: the whole spam penalty', counts({ spam: 8 }), 60],
    ['80% spam: 40, and two thirds of the 40 past it', counts({ spam: 16 }), 33],
    ['all in spam: at risk, far under a new mailbox', counts({ spam: 20 }), 20],
    ['carol: 31 of 31 in spam', counts({ sent: 31, found: 31, spam: 31 }), 20],
    ['5% bounces', counts({ bounced: 1 }), 80],
    ['10% bounces: the whole bounce penalty', counts({ bounced: 2 }), 60],
    ['10% never found', counts({ sent: 20, found: 18, lost: 2 }), 90],
    ['20% never found: the whole lost penalty', counts({ sent: 20, found: 16, lost: 4 }), 80],
    ['everything wrong at once: 0', counts({ spam: 10, bounced: 5, lost: 10 }), 0],
  ])('%s → %i', (_, input, expected) => {
    expect(reputationScore(input)).toBe(expected);
  });

  it('blends towards 50 with fewer than 5 found messages', () => {
    expect(reputationScore(counts({ sent: 0, found: 0 }))).toBe(50);
    expect(reputationScore(counts({ sent: 3, found: 0, lost: 3 }))).toBe(50);
    // 2 found in the inbox: 0.4 × 100 + 0.6 × 50
    expect(reputationScore(counts({ sent: 2, found: 2 }))).toBe(70);
    // 4 found, all in spam: 0.8 × 20 + 0.2 × 50, under 50 but not the full verdict of more evidence
    expect(reputationScore(counts({ sent: 4, found: 4, spam: 4 }))).toBe(26);
    expect(reputationScore(counts({ sent: 5, found: 5 }))).toBe(100);
  });

  it('stays within 0..100 as a whole number', () => {
    for (let spam = 0; spam <= 7; spam++) {
      for (let bounced = 0; bounced <= 3; bounced++) {
        const score = reputationScore({ sent: 7, found: 7, spam, bounced, lost: 0 });
        expect(Number.isInteger(score)).toBe(true);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(100);
      }
    }
  });
});

describe('updateReputation', () => {
  const TODAY = '2025-03-20';
  let testApp: TestApp;
  let good: string;
  let spammy: string;
  let newcomer: string;
  let paused: string;

  let peer: string;

  /** A day of the sender's mail, to a peer of its own workspace: as the rollup and as the messages. */
  async function stats(mailboxId: string, day: string, values: DeliveryDay) {
    await insertDeliveryDay(testApp.database.db, { senderId: mailboxId, receiverId: peer, day, ...values });
  }

  async function reputationOf(id: string): Promise<number> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` });
    return (response.json() as { mailbox: { reputation: number } }).mailbox.reputation;
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(`${TODAY}T12:00:00Z`) });
    good = await createMailbox(testApp.workspace, 'good@alpha.test');
    spammy = await createMailbox(testApp.workspace, 'spammy@beta.test');
    newcomer = await createMailbox(testApp.workspace, 'new@gamma.test');
    paused = await createMailbox(testApp.workspace, 'paused@delta.test');
    // receives everyone's mail; paused, so it is not scored itself
    peer = await createMailbox(testApp.workspace, 'peer@echo.test');
    await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${peer}/pause` });
    await stats(good, addDays(TODAY, -3), { sent: 10, inbox: 10 });
    await stats(good, addDays(TODAY, -13), { sent: 10, inbox: 9, spam: 1 });
    // outside the 14-day window: ignored
    await stats(good, addDays(TODAY, -14), { sent: 10, spam: 10 });
    await stats(spammy, addDays(TODAY, -1), { sent: 10, inbox: 7, spam: 3 });
    await stats(spammy, TODAY, { sent: 10, inbox: 7, spam: 3 });
    await stats(paused, TODAY, { sent: 10, spam: 10 });
    expect(
      (await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${paused}/pause` })).statusCode,
    ).toBe(200);
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('scores every active mailbox from its last 14 days and keeps today as history', async () => {
    const summary = await updateReputation(testApp.database, new Date(`${TODAY}T12:00:00Z`));
    expect(summary).toEqual({ scored: 3, updated: 3 });
    // 1 spam in 20 found: 5% → 100 − 40 × 0.125 = 95
    expect(await reputationOf(good)).toBe(95);
    // 30% spam → 100 − 30 = 70
    expect(await reputationOf(spammy)).toBe(70);
    expect(await reputationOf(newcomer)).toBe(50);
    // paused: left as it was
    expect(await reputationOf(paused)).toBe(50);
    const history = await testApp.database.db
      .selectFrom('daily_stats')
      .select(['mailbox_id', 'reputation'])
      .where('day', '=', TODAY)
      .execute();
    expect(new Map(history.map((h) => [h.mailbox_id, h.reputation]))).toEqual(
      new Map([
        [good, 95],
        [spammy, 70],
        [newcomer, 50],
        [paused, null],
      ]),
    );
    // the rollup counters of today's row are untouched
    const spammyToday = await testApp.database.db
      .selectFrom('daily_stats')
      .selectAll()
      .where('mailbox_id', '=', spammy)
      .where('day', '=', TODAY)
      .executeTakeFirstOrThrow();
    expect(spammyToday).toMatchObject({ sent: 10, inbox: 7, spam: 3, reputation: 70 });
  });

  it('scores each mailbox once a day, again at once when its evidence changed, and a new day gets its own history row', async () => {
    // judged today already, nothing new: nobody is due
    expect(await updateReputation(testApp.database, new Date(`${TODAY}T18:00:00Z`))).toEqual({
      scored: 0,
      updated: 0,
    });
    // new evidence about one mailbox's mail: only that one is scored again
    await markJudgementsDue(testApp.database.db, [good], new Date(`${TODAY}T18:00:00Z`));
    expect(await updateReputation(testApp.database, new Date(`${TODAY}T18:30:00Z`))).toEqual({
      scored: 1,
      updated: 0,
    });
    // a test-mode cycle scores them all
    expect(await updateReputation(testApp.database, new Date(`${TODAY}T19:00:00Z`), { ignoreSchedule: true })).toEqual({
      scored: 3,
      updated: 0,
    });
    const tomorrow = addDays(TODAY, 1);
    expect(await updateReputation(testApp.database, new Date(`${tomorrow}T01:00:00Z`))).toEqual({
      scored: 3,
      updated: 3,
    });
    const rows = await testApp.database.db
      .selectFrom('daily_stats')
      .select(['day', 'reputation'])
      .where('mailbox_id', '=', good)
      .where('day', '>=', TODAY)
      .orderBy('day')
      .execute();
    expect(rows).toEqual([
      { day: TODAY, reputation: 95 },
      // the spam day 13 days back has left the window
      { day: tomorrow, reputation: 100 },
    ]);
  });
});
