// Why a mailbox sends less than its ramp is stored with its plan, so the API can say it (and the
// dashboard can show it) instead of a line in the server log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { DEFAULT_ENGINE_SETTINGS } from '../../src/engine/engine-deps.js';
import { planDay } from '../../src/engine/planner.js';
import { seededRandom } from '../../src/engine/random.js';
import { createMailbox, proveAll, silentLogger } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

describe('the outlook of a planned mailbox', () => {
  let t: TestApp;
  const clock = fixedClock('2025-03-03T06:00:00Z');

  beforeAll(async () => {
    t = await createTestApp({ clock });
  });

  afterAll(async () => {
    await t.close();
  });

  it('a pool of one: nothing planned, the API says the pool is too small and how many mailboxes to add', async () => {
    const id = await createMailbox(t.workspace, 'solo@alpha.test', {
      warmup: { startVolume: 3, rampUpIncrement: 1, dailyLimit: 40 },
    });
    await proveAll(t.database.db);
    const deps = {
      db: t.database.db,
      random: seededRandom(3),
      logger: silentLogger,
      clock: t.clock,
      workerId: 'outlook',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
    await planDay(deps, new Date('2025-03-03T07:00:00Z'));
    const plan = await t.database.db
      .selectFrom('mailbox_plans')
      .selectAll()
      .where('mailbox_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(plan.planned)).toBe(0);

    const { mailbox } = (await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` })).json();
    expect(mailbox.dailyTarget).toBe(0);
    expect(mailbox.outlook).toMatchObject({
      rampTarget: Number(plan.target),
      limitedBy: 'pool_too_small',
      limitReason: `The pool carries 0 of the ${Number(plan.target)} emails a day its ramp wants: connect mailboxes on 1 more domain.`,
      readyForCampaigns: false,
    });
    expect(mailbox.outlook.attention.map((a: { kind: string }) => a.kind)).toEqual(['pool_too_small']);
    // planned today, nothing due: the next sends wait for tomorrow's window
    expect(mailbox.outlook.summary).toBe('Next sends from Tue 08:00 UTC, when its send window opens.');

    // a second mailbox on another domain: the next plan is not cut, and the reason goes
    await createMailbox(t.workspace, 'duo@beta.test', {
      warmup: { startVolume: 1, rampUpIncrement: 0, dailyLimit: 1 },
    });
    await proveAll(t.database.db);
    clock.set('2025-03-04T07:00:00Z');
    await planDay(deps, clock.now());
    const after = (await t.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox;
    // The new pair writes once on its first day, but the pool carries the whole ramp once it has
    // earned its threads (duo takes in its budget + 2): not a hold, and nothing to add.
    expect(after.dailyTarget).toBe(1);
    expect(after.outlook.rampTarget).toBeGreaterThan(1);
    expect(after.outlook).toMatchObject({ limitedBy: null, limitReason: null, attention: [] });
    expect(after.outlook.state.kind).not.toBe('held_by_pool');
    expect(after.outlook.nextSendAt).toEqual(expect.any(String));
    expect(after.outlook.summary).toMatch(/^Next send at \d\d:\d\d UTC/);
  });
});
