// Numbers by day, through HTTP: the daily summary, and the workspace rollup that folds finished
// days off the write path (the fixtures are in test/helpers/stats-api.ts; today is 2026-03-15 UTC).

import { describe, expect, it } from 'vitest';
import { type TestWorkspace } from '../../test/helpers/test-app.js';
import { recordReputation } from '../interactions/interactions.repository.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { type Analytics } from './stats.schemas.js';
import { foldFinishedDays } from '../interactions/workspace-rollup.js';
import {
  BOB_EMAIL,
  clock,
  get,
  insertMailbox,
  mb,
  message,
  movedToPrimary,
  ok,
  t,
  useStatsApp,
  ws,
} from '../../test/helpers/stats-api.js';

useStatsApp();

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
