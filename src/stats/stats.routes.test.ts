import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { fixedClock } from '../clock.js';
import { newId } from '../db/ids.js';
import type { MailboxStatus, ProviderId } from '../mailboxes/mailboxes.schemas.js';
import { incrementDaily, recordInteraction, recordReputation } from '../interactions/interactions.repository.js';
import type { InteractionType, Placement } from '../interactions/interactions.schemas.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { DAY_COUNT_COLUMNS, type Analytics, type DailyRow } from './stats.schemas.js';
import { foldFinishedDays } from '../interactions/workspace-rollup.js';

/*
 * The statistics contract, through HTTP. Every number is written the way the engine writes it
 * (recordInteraction, recordReputation), never as hand-made rollups. Today is 2026-03-15 (UTC), so
 * the default 30-day period is 2026-02-14 .. 2026-03-15.
 */

const clock = fixedClock('2026-03-15T12:00:00Z');
let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
const mb = { alice: '', bob: '', carol: '', dave: '' };
const BOB_EMAIL = '"bob, jr"@beta.test';

async function insertMailbox(
  workspaceId: string,
  email: string,
  provider: ProviderId,
  extra: { status?: MailboxStatus; warmupDay?: number; dailyTarget?: number } = {},
) {
  const id = newId('mb');
  const now = clock.now().toISOString();
  await t.database.db
    .insertInto('mailboxes')
    .values({
      id,
      workspace_id: workspaceId,
      email,
      email_normalized: email.toLowerCase(),
      name: null,
      provider,
      connection_type: 'imap',
      status: extra.status ?? 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'x',
      warmup: '{}',
      warmup_day: extra.warmupDay ?? 0,
      daily_target: extra.dailyTarget ?? 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

let messageCount = 0;
async function record(
  mailboxId: string,
  type: InteractionType,
  senderMailboxId: string,
  counterpartMailboxId: string,
  messageId: string,
  at: string,
  placement: Placement | null = null,
) {
  const inserted = await recordInteraction(t.database.db, {
    mailboxId,
    type,
    senderMailboxId,
    counterpartMailboxId,
    counterpartEmail: 'peer@example.test',
    subject: 'Lunch on Friday?',
    messageId,
    threadId: messageId,
    placement,
    occurredAt: new Date(at),
  });
  expect(inserted).toBe(true);
}

/** One warmup message the way the engine records it: sent by `from`, received by `to` with a placement, then what `to` did with it. */
async function message(
  from: string,
  to: string,
  at: string,
  placement: Placement,
  actions: Array<'opened' | 'flagged' | 'rescued' | 'replied'> = [],
) {
  const messageId = `<m${++messageCount}@test>`;
  await record(from, 'sent', from, to, messageId, at);
  await record(to, 'received', from, from, messageId, at, placement);
  for (const action of actions) await record(to, action, from, from, messageId, at);
}

/** A Gmail recipient took a message of `sender` from its tab to Primary on `day`: counted as the reader counts it. */
async function movedToPrimary(sender: string, day: string) {
  await incrementDaily(t.database.db, sender, day, 'promoted_to_primary');
}

function get(url: string, workspace: TestWorkspace = ws) {
  return workspace.request({ method: 'GET', url });
}

function ok<T>(res: LightMyRequestResponse): T {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json<T>();
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  ws = t.workspace;
  other = await t.createWorkspace('other');
  mb.alice = await insertMailbox(ws.id, 'alice@alpha.test', 'gmail', { warmupDay: 12, dailyTarget: 20 });
  mb.bob = await insertMailbox(ws.id, BOB_EMAIL, 'outlook');
  mb.carol = await insertMailbox(ws.id, 'carol@gamma.test', 'yahoo', { status: 'paused' });
  mb.dave = await insertMailbox(other.id, 'dave@delta.test', 'gmail');

  await message(mb.alice, mb.bob, '2026-03-15T09:00:00Z', 'inbox', ['opened', 'replied']);
  await message(mb.alice, mb.carol, '2026-03-15T10:00:00Z', 'spam', ['rescued', 'opened']);
  // Either side of midnight: the first counts on the 14th, the second on the 15th.
  await message(mb.bob, mb.alice, '2026-03-14T23:59:59.999Z', 'promotions');
  // alice (Gmail) takes it to Primary the next morning
  await movedToPrimary(mb.bob, '2026-03-15');
  await message(mb.bob, mb.alice, '2026-03-15T00:00:00.000Z', 'inbox', ['flagged']);
  // Mail across workspaces (the pool is installation-wide): each side counts in its own workspace.
  await message(mb.alice, mb.dave, '2026-03-10T08:00:00Z', 'inbox');
  await message(mb.dave, mb.alice, '2026-03-10T09:00:00Z', 'spam');
  // First day of the default period, and the day before it.
  await message(mb.carol, mb.alice, '2026-02-14T00:00:00Z', 'other');
  await message(mb.alice, mb.bob, '2026-02-13T23:59:59Z', 'inbox');
  // A bounce: sent, then bounced, both on the 12th.
  await record(mb.alice, 'sent', mb.alice, mb.bob, '<bounce@test>', '2026-03-12T08:00:00Z');
  await record(mb.alice, 'bounced', mb.alice, mb.bob, '<bounce@test>', '2026-03-12T08:05:00Z');

  await recordReputation(t.database.db, mb.alice, '2026-01-20', 50);
  await recordReputation(t.database.db, mb.alice, '2026-03-01', 70);
  await recordReputation(t.database.db, mb.alice, '2026-03-10', 80);
  await recordReputation(t.database.db, mb.bob, '2026-03-10', 61);
  await recordReputation(t.database.db, mb.dave, '2026-03-10', 10);
});
afterAll(() => t?.close());

describe('GET /api/stats/dashboard', () => {
  it("answers exactly the seed's object for today", async () => {
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard'));
    // avgReputation: mean of the active mailboxes' current scores (80 and 61), rounded; carol is paused.
    expect(body).toStrictEqual({
      stats: { totalMailboxes: 3, activeMailboxes: 2, avgReputation: 71, todaySent: 3, todayReceived: 3 },
    });
  });

  it("sees only the key's workspace", async () => {
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard', other));
    expect(body).toStrictEqual({
      stats: { totalMailboxes: 1, activeMailboxes: 1, avgReputation: 10, todaySent: 0, todayReceived: 0 },
    });
  });

  it('answers zeros for a workspace without mailboxes', async () => {
    const empty = await t.createWorkspace('empty');
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard', empty));
    expect(body).toStrictEqual({
      stats: { totalMailboxes: 0, activeMailboxes: 0, avgReputation: 0, todaySent: 0, todayReceived: 0 },
    });
  });

  it('takes no query parameters', async () => {
    expectProblem(await get('/api/stats/dashboard?period=7d'), 400, 'validation_error', '/query/period');
  });

  it('needs an API key', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/stats/dashboard' }), 401, 'unauthorized');
  });
});

describe('GET /api/stats/analytics', () => {
  it('defaults to the last 30 days ending today, every day included, oldest first', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(await get('/api/stats/analytics'));
    expect(analytics.startDate).toBe('2026-02-14');
    expect(analytics.endDate).toBe('2026-03-15');
    expect(analytics.mailboxId).toBeNull();
    expect(analytics.daily).toHaveLength(30);
    expect(analytics.daily[0]!.date).toBe('2026-02-14');
    expect(analytics.daily[29]!.date).toBe('2026-03-15');
    expect(analytics.daily.map((d) => d.date)).toEqual([...analytics.daily.map((d) => d.date)].sort());
    expect(analytics.daily.find((d) => d.date === '2026-02-20')).toEqual({
      date: '2026-02-20',
      sent: 0,
      received: 0,
      inbox: 0,
      spam: 0,
      rescued: 0,
      opened: 0,
      replied: 0,
      promotedToPrimary: 0,
      reputation: 50,
    });
  });

  it('counts for the sender and sums the workspace', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(await get('/api/stats/analytics'));
    expect(analytics.totals).toStrictEqual({
      sent: 7,
      received: 6,
      inbox: 3,
      spam: 1,
      promotions: 1,
      other: 1,
      rescued: 1,
      opened: 2,
      flagged: 1,
      replied: 1,
      bounced: 1,
      promotedToPrimary: 1,
    });
    // found = 3 + 1 + 1 + 1 = 6; bounceRate over the 7 sent.
    expect(analytics.rates).toStrictEqual({
      inboxRate: 50,
      spamRate: 16.7,
      openRate: 33.3,
      replyRate: 16.7,
      bounceRate: 14.3,
    });
  });

  it('makes totals exactly the sum of the daily rows', async () => {
    for (const query of ['', '?period=7d', '?period=90d', `?mailboxId=${mb.alice}`]) {
      const { analytics } = ok<{ analytics: Analytics }>(await get(`/api/stats/analytics${query}`));
      for (const key of DAY_COUNT_COLUMNS) {
        expect(
          analytics.daily.reduce((sum, d) => sum + d[key], 0),
          `${query} ${key}`,
        ).toBe(analytics.totals[key]);
      }
    }
  });

  it('counts an event on the UTC day it happened, either side of midnight', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?startDate=2026-03-14&endDate=2026-03-15'),
    );
    expect(analytics.daily).toEqual([
      {
        date: '2026-03-14',
        sent: 1,
        received: 1,
        inbox: 0,
        spam: 0,
        rescued: 0,
        opened: 0,
        replied: 0,
        promotedToPrimary: 0,
        reputation: 71,
      },
      {
        date: '2026-03-15',
        sent: 3,
        received: 3,
        inbox: 2,
        spam: 1,
        rescued: 1,
        opened: 2,
        replied: 1,
        promotedToPrimary: 1,
        reputation: 71,
      },
    ]);
    expect(analytics.totals.promotions).toBe(1);
    expect(analytics.totals.flagged).toBe(1);
  });

  it('includes the first day of the period and not the day before', async () => {
    const thirty = ok<{ analytics: Analytics }>(await get('/api/stats/analytics')).analytics;
    expect(thirty.daily[0]).toMatchObject({ date: '2026-02-14', sent: 1, received: 1 });
    const ninety = ok<{ analytics: Analytics }>(await get('/api/stats/analytics?period=90d')).analytics;
    expect(ninety.startDate).toBe('2025-12-16');
    expect(ninety.daily).toHaveLength(90);
    expect(ninety.totals.sent).toBe(8);
    expect(ninety.totals.inbox).toBe(4);
  });

  it('answers 7d and 90d periods, and lets startDate/endDate win over period', async () => {
    const week = ok<{ analytics: Analytics }>(await get('/api/stats/analytics?period=7d')).analytics;
    expect([week.startDate, week.endDate, week.daily.length]).toEqual(['2026-03-09', '2026-03-15', 7]);
    const range = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?period=7d&startDate=2026-03-01&endDate=2026-03-03'),
    ).analytics;
    expect([range.startDate, range.endDate, range.daily.length]).toEqual(['2026-03-01', '2026-03-03', 3]);
  });

  it('includes future days as zeros without a score', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?startDate=2026-03-15&endDate=2026-03-16'),
    );
    expect(analytics.daily[1]).toEqual({
      date: '2026-03-16',
      sent: 0,
      received: 0,
      inbox: 0,
      spam: 0,
      rescued: 0,
      opened: 0,
      replied: 0,
      promotedToPrimary: 0,
      reputation: null,
    });
  });

  it('averages the reputation of the mailboxes scored that day and carries it forward', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(await get('/api/stats/analytics'));
    const score = (date: string) => analytics.daily.find((d) => d.date === date)!.reputation;
    // Carried in from 2026-01-20, before the range.
    expect(score('2026-02-14')).toBe(50);
    expect(score('2026-02-28')).toBe(50);
    expect(score('2026-03-01')).toBe(70);
    expect(score('2026-03-09')).toBe(70);
    // (80 + 61) / 2 = 70.5, rounded; dave (another workspace, 10) is not part of it.
    expect(score('2026-03-10')).toBe(71);
    expect(score('2026-03-15')).toBe(71);
  });

  it('answers null reputation while none is known', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?startDate=2025-12-01&endDate=2026-01-20'),
    );
    expect(analytics.daily[0]!.reputation).toBeNull();
    expect(analytics.daily[analytics.daily.length - 1]!.reputation).toBe(50);
  });

  it('narrows to one mailbox with mailboxId', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(await get(`/api/stats/analytics?mailboxId=${mb.alice}`));
    expect(analytics.mailboxId).toBe(mb.alice);
    expect(analytics.totals).toStrictEqual({
      sent: 4,
      received: 4,
      inbox: 2,
      spam: 1,
      promotions: 0,
      other: 0,
      rescued: 1,
      opened: 2,
      flagged: 0,
      replied: 1,
      bounced: 1,
      promotedToPrimary: 0,
    });
    expect(analytics.rates).toStrictEqual({
      inboxRate: 66.7,
      spamRate: 33.3,
      openRate: 66.7,
      replyRate: 33.3,
      bounceRate: 25,
    });
    expect(analytics.daily.find((d) => d.date === '2026-03-10')!.reputation).toBe(80);
  });

  it("keeps another workspace's numbers apart", async () => {
    const { analytics } = ok<{ analytics: Analytics }>(await get('/api/stats/analytics', other));
    expect(analytics.totals).toStrictEqual({
      sent: 1,
      received: 1,
      inbox: 0,
      spam: 1,
      promotions: 0,
      other: 0,
      rescued: 0,
      opened: 0,
      flagged: 0,
      replied: 0,
      bounced: 0,
      promotedToPrimary: 0,
    });
    expect(analytics.rates).toStrictEqual({ inboxRate: 0, spamRate: 100, openRate: 0, replyRate: 0, bounceRate: 0 });
  });

  it('answers rates of 0, not NaN, when nothing was sent', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?startDate=2025-01-01&endDate=2025-01-01'),
    );
    expect(analytics.rates).toStrictEqual({ inboxRate: 0, spamRate: 0, openRate: 0, replyRate: 0, bounceRate: 0 });
    expect(analytics.daily).toHaveLength(1);
  });

  it('accepts a range of exactly 366 days', async () => {
    const { analytics } = ok<{ analytics: Analytics }>(
      await get('/api/stats/analytics?startDate=2025-01-01&endDate=2026-01-02'),
    );
    expect(analytics.daily).toHaveLength(367);
  });
});

describe('period rules: every 400 names the parameter', () => {
  const cases: Array<[string, string, string]> = [
    ['an unknown parameter', 'foo=1', '/query/foo'],
    ['an unknown period', 'period=14d', '/query/period'],
    ['an empty period', 'period=', '/query/period'],
    ['a malformed startDate', 'startDate=2026-3-01&endDate=2026-03-10', '/query/startDate'],
    ['a malformed endDate', 'startDate=2026-03-01&endDate=tomorrow', '/query/endDate'],
    ['an impossible startDate', 'startDate=2026-02-30&endDate=2026-03-10', '/query/startDate'],
    ['an impossible endDate (2026 is no leap year)', 'startDate=2026-02-01&endDate=2026-02-29', '/query/endDate'],
    ['startDate after endDate', 'startDate=2026-03-10&endDate=2026-03-09', '/query/startDate'],
    ['more than 366 days apart', 'startDate=2025-01-01&endDate=2026-01-03', '/query/endDate'],
    ['startDate without endDate', 'startDate=2026-03-01', '/query/endDate'],
    ['endDate without startDate', 'endDate=2026-03-01', '/query/startDate'],
    ['an empty mailboxId', 'mailboxId=', '/query/mailboxId'],
  ];
  const routes = [
    '/api/stats/analytics',
    '/api/stats/reputation',
    '/api/stats/placement',
    '/api/stats/engagement',
    '/api/stats/export?format=csv',
  ];

  for (const [name, query, path] of cases) {
    it(`rejects ${name} (${path})`, async () => {
      for (const route of routes) {
        expectProblem(await get(`${route}${route.includes('?') ? '&' : '?'}${query}`), 400, 'validation_error', path);
      }
    });
  }

  it('applies the same rules to GET /api/mailboxes/:id/stats', async () => {
    for (const [, query, path] of cases.filter(([, q]) => !q.startsWith('mailboxId'))) {
      expectProblem(await get(`/api/mailboxes/${mb.alice}/stats?${query}`), 400, 'validation_error', path);
    }
    expectProblem(
      await get(`/api/mailboxes/${mb.alice}/stats?mailboxId=${mb.bob}`),
      400,
      'validation_error',
      '/query/mailboxId',
    );
  });

  it("answers 404 for an unknown mailboxId and for another workspace's mailbox", async () => {
    for (const route of routes) {
      const sep = route.includes('?') ? '&' : '?';
      expectProblem(await get(`${route}${sep}mailboxId=mb_nope`), 404, 'not_found');
      expectProblem(await get(`${route}${sep}mailboxId=${mb.dave}`), 404, 'not_found');
    }
  });
});

describe('GET /api/stats/reputation', () => {
  it('answers the daily history with the current score and the change over the period', async () => {
    const { reputation } = ok<{
      reputation: {
        startDate: string;
        endDate: string;
        mailboxId: string | null;
        current: number | null;
        change: number | null;
        history: Array<{ date: string; score: number | null }>;
      };
    }>(await get('/api/stats/reputation'));
    expect(reputation).toMatchObject({
      startDate: '2026-02-14',
      endDate: '2026-03-15',
      mailboxId: null,
      current: 71,
      change: 21,
    });
    expect(reputation.history).toHaveLength(30);
    expect(reputation.history[0]).toEqual({ date: '2026-02-14', score: 50 });
    expect(reputation.history.find((p) => p.date === '2026-03-10')).toEqual({ date: '2026-03-10', score: 71 });
  });

  it("narrows to one mailbox's scores", async () => {
    const { reputation } = ok<{
      reputation: {
        current: number | null;
        change: number | null;
        history: Array<{ date: string; score: number | null }>;
      };
    }>(await get(`/api/stats/reputation?mailboxId=${mb.bob}`));
    expect(reputation.current).toBe(61);
    expect(reputation.change).toBe(0);
    expect(reputation.history.find((p) => p.date === '2026-03-09')!.score).toBeNull();
    expect(reputation.history.find((p) => p.date === '2026-03-11')!.score).toBe(61);
  });

  it('answers null current and change when no score is known', async () => {
    const { reputation } = ok<{ reputation: { current: number | null; change: number | null } }>(
      await get('/api/stats/reputation?startDate=2025-01-01&endDate=2025-01-31'),
    );
    expect(reputation).toMatchObject({ current: null, change: null });
  });
});

describe('GET /api/stats/placement', () => {
  it('sums placement by sender, by mailbox, and by the receiving provider', async () => {
    const { placement } = ok<{ placement: Record<string, unknown> }>(await get('/api/stats/placement'));
    expect(placement).toStrictEqual({
      startDate: '2026-02-14',
      endDate: '2026-03-15',
      total: 6,
      inbox: 3,
      spam: 1,
      promotions: 1,
      other: 1,
      inboxRate: 50,
      spamRate: 16.7,
      // Where each provider's mailboxes found the mail they received (alice is gmail, bob outlook, carol yahoo).
      byProvider: [
        { provider: 'gmail', total: 4, inbox: 1, spam: 1, promotions: 1, other: 1, inboxRate: 25 },
        { provider: 'outlook', total: 1, inbox: 1, spam: 0, promotions: 0, other: 0, inboxRate: 100 },
        { provider: 'yahoo', total: 1, inbox: 0, spam: 1, promotions: 0, other: 0, inboxRate: 0 },
      ],
      // By sender, by email ('"' sorts before letters).
      byMailbox: [
        { mailboxId: mb.bob, email: BOB_EMAIL, total: 2, inbox: 1, spam: 0, inboxRate: 50 },
        { mailboxId: mb.alice, email: 'alice@alpha.test', total: 3, inbox: 2, spam: 1, inboxRate: 66.7 },
        { mailboxId: mb.carol, email: 'carol@gamma.test', total: 1, inbox: 0, spam: 0, inboxRate: 0 },
      ],
    });
  });

  it('narrows to one mailbox', async () => {
    const { placement } = ok<{
      placement: { total: number; byMailbox: unknown[]; byProvider: Array<{ provider: string }> };
    }>(await get(`/api/stats/placement?mailboxId=${mb.carol}&period=90d`));
    expect(placement.total).toBe(1);
    expect(placement.byMailbox).toEqual([
      { mailboxId: mb.carol, email: 'carol@gamma.test', total: 1, inbox: 0, spam: 0, inboxRate: 0 },
    ]);
    expect(placement.byProvider).toEqual([
      { provider: 'yahoo', total: 1, inbox: 0, spam: 1, promotions: 0, other: 0, inboxRate: 0 },
    ]);
  });
});

describe('GET /api/stats/engagement', () => {
  it('answers what the peers did with the mail, with rates over the mail they received', async () => {
    const { engagement } = ok<{ engagement: unknown }>(await get('/api/stats/engagement'));
    expect(engagement).toStrictEqual({
      startDate: '2026-02-14',
      endDate: '2026-03-15',
      received: 6,
      opened: 2,
      flagged: 1,
      replied: 1,
      rescued: 1,
      openRate: 33.3,
      replyRate: 16.7,
      rescueRate: 100,
      // bob's mail alice found in Gmail's Promotions tab and took to Primary: 1 of the 1 found there
      promotedToPrimary: 1,
      promotedToPrimaryRate: 100,
    });
  });

  it('answers zero rates over an empty period', async () => {
    const { engagement } = ok<{ engagement: Record<string, number> }>(
      await get('/api/stats/engagement?startDate=2025-06-01&endDate=2025-06-30'),
    );
    expect(engagement).toMatchObject({
      received: 0,
      openRate: 0,
      replyRate: 0,
      rescueRate: 0,
      promotedToPrimary: 0,
      promotedToPrimaryRate: 0,
    });
  });
});

describe('GET /api/stats/daily-summary', () => {
  it('summarises today by default, every mailbox included', async () => {
    const { summary } = ok<{ summary: Record<string, unknown> }>(await get('/api/stats/daily-summary'));
    expect(summary).toStrictEqual({
      date: '2026-03-15',
      sent: 3,
      received: 3,
      inbox: 2,
      spam: 1,
      rescued: 1,
      opened: 2,
      replied: 1,
      promotedToPrimary: 1,
      activeMailboxes: 2,
      pausedMailboxes: 1,
      errorMailboxes: 0,
      reputationChange: 0,
      mailboxes: [
        {
          mailboxId: mb.bob,
          email: BOB_EMAIL,
          status: 'active',
          sent: 1,
          received: 1,
          inbox: 1,
          spam: 0,
          replied: 0,
          promotedToPrimary: 1,
          reputation: 61,
        },
        {
          mailboxId: mb.alice,
          email: 'alice@alpha.test',
          status: 'active',
          sent: 2,
          received: 1,
          inbox: 1,
          spam: 1,
          replied: 1,
          promotedToPrimary: 0,
          reputation: 80,
        },
        {
          mailboxId: mb.carol,
          email: 'carol@gamma.test',
          status: 'paused',
          sent: 0,
          received: 1,
          inbox: 0,
          spam: 0,
          replied: 0,
          promotedToPrimary: 0,
          reputation: null,
        },
      ],
    });
  });

  it("moves reputation by the mean of each scored mailbox's change, from its score before (50 for a first score)", async () => {
    const { summary } = ok<{ summary: { date: string; sent: number; reputationChange: number } }>(
      await get('/api/stats/daily-summary?date=2026-03-10'),
    );
    // alice 70 → 80 (+10), bob's first score 61 (+11 from 50): +10.5, rounded
    expect(summary).toMatchObject({ date: '2026-03-10', sent: 1, reputationChange: 11 });
    const first = ok<{ summary: { reputationChange: number } }>(
      await get('/api/stats/daily-summary?date=2026-03-01'),
    ).summary;
    expect(first.reputationChange).toBe(20);
  });

  it('lists no mailboxes for a workspace without any, and every status and email exactly as stored', async () => {
    const empty = await t.createWorkspace('summary without mailboxes');
    const none = ok<{ summary: Record<string, unknown> }>(await get('/api/stats/daily-summary', empty)).summary;
    expect(none).toMatchObject({ activeMailboxes: 0, pausedMailboxes: 0, errorMailboxes: 0, sent: 0, mailboxes: [] });
    expect(
      ok<{ placement: { byMailbox: unknown[] } }>(await get('/api/stats/placement', empty)).placement.byMailbox,
    ).toEqual([]);

    const team = await t.createWorkspace('summary statuses');
    const zoe = await insertMailbox(team.id, 'Zoë "Ops" Ünal@ümlaut.test', 'gmail', { status: 'error' });
    const yan = await insertMailbox(team.id, 'yan\\ops@x.test', 'outlook');
    await message(yan, zoe, '2026-03-15T08:00:00Z', 'spam');
    const { summary } = ok<{ summary: { errorMailboxes: number; activeMailboxes: number; mailboxes: unknown[] } }>(
      await get('/api/stats/daily-summary', team),
    );
    expect(summary.activeMailboxes).toBe(1);
    expect(summary.errorMailboxes).toBe(1);
    expect(summary.mailboxes).toMatchObject([
      { mailboxId: yan, email: 'yan\\ops@x.test', status: 'active', sent: 1, spam: 1, reputation: null },
      { mailboxId: zoe, email: 'Zoë "Ops" Ünal@ümlaut.test', status: 'error', received: 1, sent: 0 },
    ]);
    const { placement } = ok<{ placement: { byMailbox: unknown[] } }>(await get('/api/stats/placement', team));
    expect(placement.byMailbox).toStrictEqual([
      { mailboxId: yan, email: 'yan\\ops@x.test', total: 1, inbox: 0, spam: 1, inboxRate: 0 },
      { mailboxId: zoe, email: 'Zoë "Ops" Ünal@ümlaut.test', total: 0, inbox: 0, spam: 0, inboxRate: 0 },
    ]);
  });

  it('rejects a malformed or impossible date and unknown parameters', async () => {
    expectProblem(await get('/api/stats/daily-summary?date=2026-02-29'), 400, 'validation_error', '/query/date');
    expectProblem(await get('/api/stats/daily-summary?date=15.03.2026'), 400, 'validation_error', '/query/date');
    expectProblem(await get('/api/stats/daily-summary?period=7d'), 400, 'validation_error', '/query/period');
  });
});

describe('GET /api/mailboxes/:id/stats', () => {
  it("answers the mailbox's state, today's numbers and the period", async () => {
    const { stats } = ok<{ stats: Record<string, unknown> & { daily: DailyRow[]; totals: Record<string, number> } }>(
      await get(`/api/mailboxes/${mb.alice}/stats`),
    );
    expect(stats).toMatchObject({
      mailboxId: mb.alice,
      status: 'active',
      reputation: 80,
      warmupDay: 12,
      dailyTarget: 20,
      todaySent: 2,
      todayReceived: 1,
      totals: {
        sent: 4,
        received: 4,
        inbox: 2,
        spam: 1,
        promotions: 0,
        other: 0,
        rescued: 1,
        opened: 2,
        flagged: 0,
        replied: 1,
        bounced: 1,
        promotedToPrimary: 0,
      },
      rates: { inboxRate: 66.7, spamRate: 33.3, openRate: 66.7, replyRate: 33.3, bounceRate: 25 },
    });
    expect(stats.daily).toHaveLength(30);
    expect(stats.daily.find((d) => d.date === '2026-03-12')).toEqual({
      date: '2026-03-12',
      sent: 1,
      received: 0,
      inbox: 0,
      spam: 0,
      rescued: 0,
      opened: 0,
      replied: 0,
      promotedToPrimary: 0,
      reputation: 80,
    });
  });

  it('takes the period parameters', async () => {
    const { stats } = ok<{ stats: { daily: DailyRow[]; totals: Record<string, number> } }>(
      await get(`/api/mailboxes/${mb.alice}/stats?period=90d`),
    );
    expect(stats.daily).toHaveLength(90);
    expect(stats.totals.sent).toBe(5);
    const range = ok<{ stats: { daily: DailyRow[] } }>(
      await get(`/api/mailboxes/${mb.alice}/stats?startDate=2026-03-10&endDate=2026-03-10`),
    ).stats;
    expect(range.daily).toEqual([
      {
        date: '2026-03-10',
        sent: 1,
        received: 1,
        inbox: 1,
        spam: 0,
        rescued: 0,
        opened: 0,
        replied: 0,
        promotedToPrimary: 0,
        reputation: 80,
      },
    ]);
  });

  it("answers 404 for an unknown mailbox and for another workspace's", async () => {
    expectProblem(await get('/api/mailboxes/mb_nope/stats'), 404, 'not_found');
    expectProblem(await get(`/api/mailboxes/${mb.dave}/stats`), 404, 'not_found');
    const own = ok<{ stats: { mailboxId: string } }>(await get(`/api/mailboxes/${mb.dave}/stats`, other));
    expect(own.stats.mailboxId).toBe(mb.dave);
  });
});

describe('OpenAPI', () => {
  it('describes every stats route', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, unknown>;
    }>();
    for (const path of ['dashboard', 'analytics', 'reputation', 'placement', 'engagement', 'export', 'daily-summary']) {
      expect(spec.paths).toHaveProperty([`/api/stats/${path}`]);
    }
    expect(spec.paths).toHaveProperty(['/api/mailboxes/{id}/stats']);
  });
});

describe('a deleted mailbox', () => {
  it("takes its history out of the workspace's figures", async () => {
    const team = await t.createWorkspace('deleting');
    const a = await insertMailbox(team.id, 'a@x.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@x.test', 'outlook');
    await message(a, b, '2026-03-15T08:00:00Z', 'inbox', ['opened']);
    await message(b, a, '2026-03-15T08:30:00Z', 'spam');
    const before = ok<{ analytics: Analytics }>(await get('/api/stats/analytics?period=7d', team)).analytics;
    expect(before.totals).toMatchObject({ sent: 2, received: 2, inbox: 1, spam: 1, opened: 1 });

    // What DELETE /api/mailboxes/:id does to the rollups: they go with the mailbox (cascade).
    await t.database.db.deleteFrom('mailboxes').where('id', '=', b).execute();

    const after = ok<{ analytics: Analytics }>(await get('/api/stats/analytics?period=7d', team)).analytics;
    expect(after.totals).toMatchObject({ sent: 1, received: 1, inbox: 1, spam: 0, opened: 1 });
    expect(ok<{ stats: unknown }>(await get('/api/stats/dashboard', team))).toStrictEqual({
      stats: { totalMailboxes: 1, activeMailboxes: 1, avgReputation: 50, todaySent: 1, todayReceived: 1 },
    });
    const { placement } = ok<{ placement: { total: number; byMailbox: Array<{ mailboxId: string; total: number }> } }>(
      await get('/api/stats/placement?period=7d', team),
    );
    expect(placement.total).toBe(1);
    expect(placement.byMailbox).toEqual([
      { mailboxId: a, email: 'a@x.test', total: 1, inbox: 1, spam: 0, inboxRate: 100 },
    ]);
  });
});

describe('the workspace rollup (finished days folded off the write path)', () => {
  const urls = [
    '/api/stats/analytics',
    '/api/stats/analytics?period=7d',
    '/api/stats/analytics?period=90d',
    // the range starts after the last score: carried forward from a folded day
    '/api/stats/analytics?startDate=2026-03-11&endDate=2026-03-15',
    '/api/stats/reputation?period=90d',
    '/api/stats/reputation?startDate=2026-03-02&endDate=2026-03-09',
    '/api/stats/engagement?period=90d',
    '/api/stats/placement?period=90d',
    // placement from the running totals: a range inside the folded days, one across the mark, one
    // ending on it, one before any, and one just after it (the mark's totals are not subtracted)
    '/api/stats/placement?startDate=2026-03-02&endDate=2026-03-09',
    '/api/stats/placement?startDate=2026-03-09&endDate=2026-03-14',
    '/api/stats/placement?startDate=2026-03-10&endDate=2026-03-13',
    '/api/stats/placement?startDate=2026-02-01&endDate=2026-02-28',
    '/api/stats/placement?startDate=2026-03-14&endDate=2026-03-15',
    '/api/stats/dashboard',
  ];
  const answers = async (workspace: TestWorkspace) =>
    Promise.all(urls.map(async (url) => ok<unknown>(await get(url, workspace))));
  const fold = () => foldFinishedDays(t.database.db, clock.now());

  it('folds placement day by day onto the running totals and answers what the live sums answer', async () => {
    const team = await t.createWorkspace('running totals');
    const a = await insertMailbox(team.id, 'a@running.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@running.test', 'yahoo');
    const c = await insertMailbox(team.id, 'c@running.test', 'outlook');
    await message(a, b, '2026-03-01T08:00:00Z', 'inbox');
    await message(b, a, '2026-03-01T09:00:00Z', 'spam');
    await message(a, c, '2026-03-02T08:00:00Z', 'promotions');
    await message(c, a, '2026-03-05T08:00:00Z', 'other');
    await message(a, b, '2026-03-08T08:00:00Z', 'spam');
    await message(b, c, '2026-03-12T08:00:00Z', 'inbox');
    await message(a, b, '2026-03-15T08:00:00Z', 'inbox');
    const live = await answers(team);
    const mailboxUrls = [a, b, c].map(
      (id) => `/api/stats/placement?mailboxId=${id}&startDate=2026-03-02&endDate=2026-03-15`,
    );
    const liveOne = await Promise.all(mailboxUrls.map(async (url) => ok<unknown>(await get(url, team))));

    // folded in three runs: nothing yet, through the 3rd, then through the 13th on top of it
    for (const at of ['2026-03-02T12:00:00Z', '2026-03-05T12:00:00Z', '2026-03-15T12:00:00Z']) {
      await foldFinishedDays(t.database.db, new Date(at));
      expect(await answers(team)).toEqual(live);
      expect(await Promise.all(mailboxUrls.map(async (url) => ok<unknown>(await get(url, team))))).toEqual(liveOne);
    }
    const rows = await t.database.db
      .selectFrom('placement_running_totals')
      .select(['day', 'inbox', 'spam', 'received_spam'])
      .where('mailbox_id', '=', a)
      .orderBy('day')
      .execute();
    // a row every folded day from a's first on, each the sum since then
    expect(rows.map((r) => r.day)).toEqual(
      Array.from({ length: 13 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`),
    );
    const on = (day: string) =>
      rows.filter((r) => r.day === day).map((r) => [Number(r.inbox), Number(r.spam), Number(r.received_spam)]);
    expect([on('2026-03-01'), on('2026-03-07'), on('2026-03-08'), on('2026-03-13')]).toEqual([
      [[1, 0, 1]],
      [[1, 0, 1]],
      [[1, 1, 1]],
      [[1, 1, 1]],
    ]);
  });

  it('answers exactly what the live sums answer, before and after a mailbox is deleted', async () => {
    const team = await t.createWorkspace('folding');
    const a = await insertMailbox(team.id, 'a@fold.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@fold.test', 'outlook');
    await message(a, b, '2026-03-01T08:00:00Z', 'inbox', ['opened', 'replied']);
    await message(b, a, '2026-03-09T08:00:00Z', 'spam', ['rescued']);
    await message(a, b, '2026-03-14T08:00:00Z', 'inbox');
    await message(b, a, '2026-03-15T08:00:00Z', 'promotions');
    // taken from Gmail's Promotions tab to Primary on a day that is folded, and on one that is not
    await message(b, a, '2026-03-09T09:00:00Z', 'promotions');
    await movedToPrimary(b, '2026-03-09');
    await movedToPrimary(b, '2026-03-15');
    await recordReputation(t.database.db, a, '2026-03-01', 70);
    await recordReputation(t.database.db, b, '2026-03-09', 40);

    const live = { ws: await answers(ws), team: await answers(team) };
    const engagement = (answer: unknown) => (answer as { engagement: Record<string, number> }).engagement;
    expect(engagement(live.team[urls.indexOf('/api/stats/engagement?period=90d')])).toMatchObject({
      promotedToPrimary: 2,
      promotedToPrimaryRate: 100,
    });
    const summary = await fold();
    expect(summary.throughDay).toBe('2026-03-13');
    const folded = await t.database.db
      .selectFrom('workspace_daily_stats')
      .select(['day', 'sent', 'promoted_to_primary', 'reputation_sum', 'reputation_count'])
      .where('workspace_id', '=', team.id)
      .orderBy('day')
      .execute();
    // finished days only: the 14th and 15th are still summed live
    expect(
      folded.map((row) => ({ ...row, sent: Number(row.sent), promoted_to_primary: Number(row.promoted_to_primary) })),
    ).toEqual([
      { day: '2026-03-01', sent: 1, promoted_to_primary: 0, reputation_sum: 70, reputation_count: 1 },
      { day: '2026-03-09', sent: 2, promoted_to_primary: 1, reputation_sum: 40, reputation_count: 1 },
    ]);
    expect(await answers(ws)).toEqual(live.ws);
    expect(await answers(team)).toEqual(live.team);
    expect((await fold()).workspaces).toBe(0);

    expect((await team.request({ method: 'DELETE', url: `/api/mailboxes/${b}` })).statusCode).toBe(204);
    const afterDelete = await answers(team);
    expect((afterDelete[0] as { analytics: Analytics }).analytics.totals).toMatchObject({
      sent: 2,
      received: 3,
      promotedToPrimary: 0,
    });
    expect((await fold()).workspaces).toBe(1);
    expect(await answers(team)).toEqual(afterDelete);
  });
});
