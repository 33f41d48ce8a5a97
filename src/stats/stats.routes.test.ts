import { describe, expect, it } from 'vitest';
import { expectProblem } from '../../test/helpers/problem.js';
import { DAY_COUNT_COLUMNS, type Analytics, type DailyRow } from './stats.schemas.js';
import { BOB_EMAIL, get, insertMailbox, mb, message, ok, other, t, useStatsApp } from '../../test/helpers/stats-api.js';

/*
 * The statistics contract, through HTTP. Every number is written the way the engine writes it
 * (recordInteraction, recordReputation), never as hand-made rollups. Today is 2026-03-15 (UTC), so
 * the default 30-day period is 2026-02-14 .. 2026-03-15. The fixtures are in test/helpers/stats-api.ts;
 * numbers by day are in stats.daily.test.ts.
 */

useStatsApp();

describe('GET /api/stats/dashboard', () => {
  it("answers exactly the seed's object for today", async () => {
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard'));
    // avgReputation: mean of the active mailboxes' current scores (80 and 61), rounded; carol is paused.
    expect(body).toStrictEqual({
      stats: {
        totalMailboxes: 3,
        activeMailboxes: 2,
        // the seed's mailboxes are not proven: active, but none warms up yet
        warmingMailboxes: 0,
        states: { on_track: 0, waiting: 0, held_by_pool: 0, held_by_spam: 0, joining: 2, paused: 1, stopped: 0 },
        pool: null,
        avgReputation: 71,
        todaySent: 3,
        todayReceived: 3,
      },
    });
  });

  it("sees only the key's workspace", async () => {
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard', other));
    expect(body).toStrictEqual({
      stats: {
        totalMailboxes: 1,
        activeMailboxes: 1,
        warmingMailboxes: 0,
        states: { on_track: 0, waiting: 0, held_by_pool: 0, held_by_spam: 0, joining: 1, paused: 0, stopped: 0 },
        pool: null,
        avgReputation: 10,
        todaySent: 0,
        todayReceived: 0,
      },
    });
  });

  it('answers zeros for a workspace without mailboxes', async () => {
    const empty = await t.createWorkspace('empty');
    const body = ok<{ stats: unknown }>(await get('/api/stats/dashboard', empty));
    expect(body).toStrictEqual({
      stats: {
        totalMailboxes: 0,
        activeMailboxes: 0,
        warmingMailboxes: 0,
        states: { on_track: 0, waiting: 0, held_by_pool: 0, held_by_spam: 0, joining: 0, paused: 0, stopped: 0 },
        pool: null,
        avgReputation: 0,
        todaySent: 0,
        todayReceived: 0,
      },
    });
  });

  it('takes a period and nothing else (the headline figures are in stats.headline.test.ts)', async () => {
    expectProblem(await get('/api/stats/dashboard?mailboxId=x'), 400, 'validation_error', '/query/mailboxId');
    expectProblem(await get('/api/stats/dashboard?period=14d'), 400, 'validation_error', '/query/period');
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
      stats: {
        totalMailboxes: 1,
        activeMailboxes: 1,
        warmingMailboxes: 0,
        states: { on_track: 0, waiting: 0, held_by_pool: 0, held_by_spam: 0, joining: 1, paused: 0, stopped: 0 },
        pool: null,
        avgReputation: 50,
        todaySent: 1,
        todayReceived: 1,
      },
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
