import { describe, expect, it } from 'vitest';
import { recordReputation } from '../interactions/interactions.repository.js';
import type { DashboardStats } from './stats.schemas.js';
import { get, insertMailbox, message, ok, t } from '../../test/helpers/stats-api.js';
import { useStatsApp } from '../../test/helpers/stats-api.js';

/*
 * The overview's headline figures: a period against the same number of days just before it, read
 * from rollups the engine's own writes made. Today is 2026-03-15 (UTC): `7d` is 03-09 .. 03-15 and
 * the period before it 03-02 .. 03-08.
 */

useStatsApp();

async function dashboard(query: string, workspace: Parameters<typeof get>[1]) {
  return ok<{ stats: DashboardStats }>(await get(`/api/stats/dashboard?${query}`, workspace)).stats;
}

describe('GET /api/stats/dashboard with a period', () => {
  it('answers sent, inbox rate, spam rate and reputation of both periods and their change', async () => {
    const team = await t.createWorkspace('headline');
    const a = await insertMailbox(team.id, 'a@one.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@two.test', 'outlook');
    // Before both periods: counted in neither.
    await message(a, b, '2026-03-01T23:59:59Z', 'spam');
    // The previous period: 5 sent, 4 in the inbox, 1 in spam, the last a second before midnight.
    await message(a, b, '2026-03-02T00:00:00Z', 'inbox');
    await message(a, b, '2026-03-04T10:00:00Z', 'inbox');
    await message(a, b, '2026-03-06T10:00:00Z', 'spam');
    await message(a, b, '2026-03-07T10:00:00Z', 'inbox');
    await message(a, b, '2026-03-08T23:59:59Z', 'inbox');
    // The current period: 6 sent, all in the inbox, the first at its first midnight.
    await message(a, b, '2026-03-09T00:00:00Z', 'inbox');
    for (const day of ['10', '11', '12', '13']) await message(a, b, `2026-03-${day}T10:00:00Z`, 'inbox');
    await message(b, a, '2026-03-15T08:00:00Z', 'inbox');
    await recordReputation(t.database.db, a, '2026-03-05', 60);
    await recordReputation(t.database.db, b, '2026-03-05', 70);
    await recordReputation(t.database.db, a, '2026-03-12', 75);
    await recordReputation(t.database.db, b, '2026-03-12', 81);

    const stats = await dashboard('period=7d', team);
    expect(stats.headline).toStrictEqual({
      current: {
        startDate: '2026-03-09',
        endDate: '2026-03-15',
        sent: 6,
        inboxRate: 100,
        spamRate: 0,
        reputation: 78,
      },
      previous: {
        startDate: '2026-03-02',
        endDate: '2026-03-08',
        sent: 5,
        inboxRate: 80,
        spamRate: 20,
        reputation: 65,
      },
      change: { sent: 20, inboxRate: 20, spamRate: -20, reputation: 13 },
    });
    // The figures of today stay as they were.
    expect(stats).toMatchObject({ totalMailboxes: 2, activeMailboxes: 2, todaySent: 1, todayReceived: 1 });
  });

  it('compares a chosen range with as many days before it', async () => {
    const team = await t.createWorkspace('headline-range');
    const a = await insertMailbox(team.id, 'a@three.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@four.test', 'yahoo');
    await message(a, b, '2026-03-12T10:00:00Z', 'inbox');
    await message(a, b, '2026-03-13T10:00:00Z', 'spam');
    await message(a, b, '2026-03-13T11:00:00Z', 'spam');
    await message(a, b, '2026-03-14T10:00:00Z', 'inbox');

    const { headline } = await dashboard('startDate=2026-03-14&endDate=2026-03-15', team);
    expect(headline?.previous).toMatchObject({ startDate: '2026-03-12', endDate: '2026-03-13', sent: 3 });
    expect(headline?.previous.inboxRate).toBe(33.3);
    expect(headline?.previous.spamRate).toBe(66.7);
    expect(headline?.current).toMatchObject({ sent: 1, inboxRate: 100, spamRate: 0 });
    // Points from the rounded rates, one decimal; sent fell by two thirds.
    expect(headline?.change).toStrictEqual({ sent: -66.7, inboxRate: 66.7, spamRate: -66.7, reputation: null });
  });

  it('says nothing of a change where the period before had nothing to compare with', async () => {
    const team = await t.createWorkspace('headline-new');
    const a = await insertMailbox(team.id, 'a@five.test', 'gmail');
    const b = await insertMailbox(team.id, 'b@six.test', 'outlook');
    await message(a, b, '2026-03-15T09:00:00Z', 'inbox');

    const { headline } = await dashboard('period=30d', team);
    expect(headline?.previous).toStrictEqual({
      startDate: '2026-01-15',
      endDate: '2026-02-13',
      sent: 0,
      inboxRate: null,
      spamRate: null,
      reputation: null,
    });
    expect(headline?.change).toStrictEqual({ sent: null, inboxRate: null, spamRate: null, reputation: null });
  });

  it('leaves the headline out when no period is asked for', async () => {
    const team = await t.createWorkspace('headline-bare');
    expect(await dashboard('', team)).not.toHaveProperty('headline');
  });
});
