import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createMailbox } from '../../test/helpers/engine.js';
import { insertDeliveryDay, type DeliveryDay } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { applyHealthGuard, assessHealth } from './health.js';
import { addDays } from '../calendar.js';
import type { DeliveryCounts } from '../interactions/interactions.repository.js';

function counts(overrides: Partial<DeliveryCounts>): DeliveryCounts {
  return { sent: 20, found: 20, spam: 0, bounced: 0, lost: 0, ...overrides };
}

describe('assessHealth', () => {
  it('halves the volume above 20% spam with at least 20 samples', () => {
    expect(assessHealth('a@x.test', counts({ spam: 5 }), 1)).toEqual({ action: 'slow-down', volumeFactor: 0.5 });
    // exactly 20% is not over it
    expect(assessHealth('a@x.test', counts({ spam: 4 }), 1)).toEqual({ action: 'none' });
    // 7 of 19 is over 20 % as a bare rate, but 19 samples are too few for it and its lower bound (19 %) is not
    expect(assessHealth('a@x.test', counts({ found: 19, spam: 7 }), 1)).toEqual({ action: 'none' });
    // already halved
    expect(assessHealth('a@x.test', counts({ spam: 5 }), 0.5)).toEqual({ action: 'none' });
  });

  it('restores the volume once spam is back at 20% or below', () => {
    expect(assessHealth('a@x.test', counts({ spam: 4 }), 0.5)).toEqual({ action: 'restore', volumeFactor: 1 });
    expect(assessHealth('a@x.test', counts({ sent: 0, found: 0 }), 0.5)).toEqual({
      action: 'restore',
      volumeFactor: 1,
    });
    // still high on fewer samples: stays halved
    expect(assessHealth('a@x.test', counts({ found: 10, spam: 5 }), 0.5)).toEqual({ action: 'none' });
  });

  it('slows down mail found (nearly) all in spam on few samples, by the lower 95 % Wilson bound', () => {
    // 8 of 8, 5 of 5 and 4 of 5 in spam: the lowest plausible rate (68 %, 57 %, 38 %) is over 20 %
    for (const [found, spam] of [
      [8, 8],
      [5, 5],
      [5, 4],
    ]) {
      expect(assessHealth('a@x.test', counts({ sent: found, found, spam }), 1), `${spam} of ${found}`).toEqual({
        action: 'slow-down',
        volumeFactor: 0.5,
      });
    }
    // carol: 31 of 31 is stopped, saying why
    const carol = assessHealth('carol@gamma.test', counts({ sent: 31, found: 31, spam: 31 }), 1);
    expect(carol.action === 'stop' && carol.lastError).toMatch(/100% .* spam .*\(31 of 31\)/);
    // 3 of 3 is under the minimum of 5 found; 2 of 5 could well be under 20 %
    expect(assessHealth('a@x.test', counts({ sent: 3, found: 3, spam: 3 }), 1)).toEqual({ action: 'none' });
    expect(assessHealth('a@x.test', counts({ sent: 5, found: 5, spam: 2 }), 1)).toEqual({ action: 'none' });
  });

  it('stops warmup above 40% spam or 10% bounces, saying what to fix', () => {
    const spam = assessHealth('ann@alpha.test', counts({ found: 25, spam: 11 }), 1);
    expect(spam.action).toBe('stop');
    expect(spam.action === 'stop' && spam.lastError).toMatch(
      /44% .* spam .* \(11 of 25\)\. Check SPF, DKIM and DMARC for alpha\.test/,
    );
    const bounces = assessHealth('ann@alpha.test', counts({ sent: 30, bounced: 4 }), 1);
    expect(bounces.action).toBe('stop');
    expect(bounces.action === 'stop' && bounces.lastError).toMatch(
      /13% .* bounced .* \(4 of 30\)\. Check that the account may send/,
    );
    expect(assessHealth('ann@alpha.test', counts({ sent: 30, bounced: 3 }), 1)).toEqual({ action: 'none' });
    expect(assessHealth('ann@alpha.test', counts({ sent: 10, found: 10, bounced: 5 }), 1)).toEqual({ action: 'none' });
  });
});

describe('applyHealthGuard', () => {
  const TODAY = '2025-03-20';
  let testApp: TestApp;

  let peer: string;

  /** A day of the mailbox's mail, to a peer of its own workspace: as the rollup and as the messages. */
  async function stats(mailboxId: string, day: string, values: DeliveryDay) {
    await insertDeliveryDay(testApp.database.db, { senderId: mailboxId, receiverId: peer, day, ...values });
  }

  async function mailbox(id: string) {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` });
    return (response.json() as { mailbox: { status: string; lastError: string | null } }).mailbox;
  }

  async function volumeFactor(id: string): Promise<number> {
    const row = await testApp.database.db
      .selectFrom('mailboxes')
      .select('volume_factor')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return Number(row.volume_factor);
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(`${TODAY}T12:00:00Z`) });
    // receives everyone's mail; paused, so the guard does not judge it
    peer = await createMailbox(testApp.workspace, 'peer@echo.test');
    await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${peer}/pause` });
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('halves a spammy mailbox, stops a very spammy or bouncing one, and leaves the rest alone', async () => {
    const fine = await createMailbox(testApp.workspace, 'fine@alpha.test');
    const spammy = await createMailbox(testApp.workspace, 'spammy@beta.test');
    const junk = await createMailbox(testApp.workspace, 'junk@gamma.test');
    const bouncing = await createMailbox(testApp.workspace, 'bouncing@delta.test');
    await stats(fine, TODAY, { sent: 20, inbox: 19, spam: 1 });
    await stats(spammy, addDays(TODAY, -6), { sent: 10, inbox: 8, spam: 2 });
    await stats(spammy, TODAY, { sent: 10, inbox: 6, spam: 4 });
    // 12 of 20 in spam, but 7 days ago: outside the window, so only today's 1 of 10 counts
    await stats(junk, addDays(TODAY, -7), { sent: 20, inbox: 8, spam: 12 });
    await stats(junk, TODAY, { sent: 30, inbox: 17, spam: 13 });
    await stats(bouncing, TODAY, { sent: 20, inbox: 17, bounced: 3 });

    const summary = await applyHealthGuard(testApp.database, new Date(`${TODAY}T12:00:00Z`));
    expect(summary).toEqual({
      slowedDown: [spammy],
      restored: [],
      stopped: expect.arrayContaining([junk, bouncing]),
      providerHeld: [],
    });
    expect(summary.stopped).toHaveLength(2);
    expect(await volumeFactor(spammy)).toBe(0.5);
    expect(await volumeFactor(fine)).toBe(1);
    expect(await mailbox(fine)).toMatchObject({ status: 'active', lastError: null });
    expect((await mailbox(junk)).status).toBe('error');
    expect((await mailbox(junk)).lastError).toMatch(
      /43% of this mailbox's warmup emails landed in spam .*gamma\.test.*resume the mailbox/,
    );
    expect((await mailbox(bouncing)).lastError).toMatch(/15% of this mailbox's warmup emails bounced/);

    // the next run changes nothing; a week later spammy has recovered
    expect(await applyHealthGuard(testApp.database, new Date(`${TODAY}T13:00:00Z`))).toEqual({
      slowedDown: [],
      restored: [],
      stopped: [],
      providerHeld: [],
    });
    const later = await applyHealthGuard(testApp.database, new Date(`${addDays(TODAY, 7)}T12:00:00Z`));
    expect(later.restored).toEqual([spammy]);
    expect(await volumeFactor(spammy)).toBe(1);
  });

  it('goes by trusted evidence: one other workspace junking everything neither slows nor stops a mailbox', async () => {
    const at = new Date(`${addDays(TODAY, 20)}T12:00:00Z`);
    const day = addDays(TODAY, 20);
    const victim = await createMailbox(testApp.workspace, 'victim@victor.test');
    const hostile = await testApp.createWorkspace('hostile');
    const junker = await createMailbox(hostile, 'junker@junk.test');
    const refuser = await createMailbox(hostile, 'refuser@refuse.test');
    await stats(victim, day, { sent: 5, inbox: 5 });
    const { db } = testApp.database;
    await insertDeliveryDay(db, { senderId: victim, receiverId: junker, day, sent: 30, spam: 30 });
    await insertDeliveryDay(db, { senderId: victim, receiverId: refuser, day, sent: 30, bounced: 30 });

    const summary = await applyHealthGuard(testApp.database, at);
    expect([...summary.slowedDown, ...summary.stopped]).not.toContain(victim);
    expect(await mailbox(victim)).toMatchObject({ status: 'active', lastError: null });
    expect(await volumeFactor(victim)).toBe(1);
  });

  it('a problem three independent parties on three mail servers agree on stops the mailbox', async () => {
    const at = new Date(`${addDays(TODAY, 40)}T12:00:00Z`);
    const day = addDays(TODAY, 40);
    const sender = await createMailbox(testApp.workspace, 'shared@sierra.test');
    const { db } = testApp.database;
    // established receivers: proven, in workspaces a month old, each on a network of its own
    const monthAgo = `${addDays(TODAY, 10)}T00:00:00.000Z`;
    for (const [index, name] of ['kilo', 'lima', 'mike'].entries()) {
      const workspace = await testApp.createWorkspace(name);
      const receiver = await createMailbox(workspace, `${name}@${name}.test`);
      await db.updateTable('workspaces').set({ created_at: monthAgo }).where('id', '=', workspace.id).execute();
      await db
        .updateTable('mailboxes')
        .set({ proven_at: monthAgo, imap_address: `198.51.${index}.25` })
        .where('id', '=', receiver)
        .execute();
      await insertDeliveryDay(db, { senderId: sender, receiverId: receiver, day, sent: 10, inbox: 5, spam: 5 });
    }

    const summary = await applyHealthGuard(testApp.database, at);
    expect(summary.stopped).toContain(sender);
    expect((await mailbox(sender)).lastError).toMatch(/50% of this mailbox's warmup emails landed in spam/);
  });
});
