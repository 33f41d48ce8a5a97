import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createMailbox, proveAll, testEngineDeps } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { StatementCounter } from '../../test/helpers/statement-counter.js';
import { DUE_AT_ONCE } from '../db/migrations/023-work-claims.js';
import type { EngineDeps } from './engine-deps.js';
import { applyHealthGuard } from './health.js';
import {
  claimJudgements,
  claimMailboxConnection,
  claimSyncs,
  finishSyncClaim,
  pullSyncDue,
  releaseMailboxConnection,
  releaseSyncClaims,
} from './mailbox-engine-state.repository.js';
import { planDay } from './planner.js';
import { IDLE_CHECK_MS, syncMailboxes } from './reader.js';
import { updateReputation } from './reputation.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const IDLE = 1_000;

describe('work is claimed, not scanned', () => {
  let testApp: TestApp;
  let deps: EngineDeps;
  let ids: string[];

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(T0.toISOString()) });
    const first = await createMailbox(testApp.workspace, 'idle-0@idle.test');
    const { db } = testApp.database;
    const row = await db.selectFrom('mailboxes').selectAll().where('id', '=', first).executeTakeFirstOrThrow();
    // the rest as copies of the first, straight into the table (the API would take minutes)
    const { id: _id, email: _email, email_normalized: _normalized, ...rest } = row;
    for (let start = 1; start < IDLE; start += 250) {
      const values = [];
      for (let i = start; i < Math.min(IDLE, start + 250); i += 1) {
        values.push({
          ...rest,
          id: `mbx_idle_${String(i).padStart(4, '0')}`,
          email: `idle-${i}@idle.test`,
          email_normalized: `idle-${i}@idle.test`,
        });
      }
      await db.insertInto('mailboxes').values(values).execute();
    }
    await proveAll(db);
    ids = (await db.selectFrom('mailboxes').select('id').orderBy('id').execute()).map((r) => r.id);
    deps = testEngineDeps(testApp, { workerId: 'w-idle' });
    // the first cycle: every new mailbox is due once (read, scored, judged), then expects nothing
    expect((await syncMailboxes(deps, { now: T0, ignoreSchedule: false })).synced).toBe(IDLE);
    expect((await updateReputation(deps, T0)).scored).toBe(IDLE);
    await applyHealthGuard(deps, T0);
    // every mailbox's day is planned (the mail itself is not this test's business), and the run after
    // that finds nothing due until each one's next local day
    expect((await planDay(deps, T0)).mailboxes).toHaveLength(IDLE);
    await db.deleteFrom('warmup_messages').execute();
    expect((await planDay(deps, T0)).mailboxes).toHaveLength(0);
  }, 300_000);

  afterAll(async () => {
    await testApp?.close();
  });

  it(`a cycle over ${IDLE} idle mailboxes runs a handful of statements and reads or writes no mailbox row`, async () => {
    const counting = new StatementCounter();
    const counted: EngineDeps = { ...deps, db: testApp.database.db.withPlugin(counting) };
    const now = at(10 * 60_000);
    const plan = await planDay(counted, now);
    const sync = await syncMailboxes(counted, { now, ignoreSchedule: false });
    const reputation = await updateReputation(counted, now);
    const health = await applyHealthGuard(counted, now);
    expect(plan.mailboxes).toEqual([]);
    expect(sync.synced).toBe(0);
    expect(reputation.scored).toBe(0);
    expect(health).toEqual({ slowedDown: [], restored: [], stopped: [], providerHeld: [] });
    // is any day due for planning (one read), lost mail (one UPDATE), one claim of syncs, one claim
    // each for reputation and health: nothing per mailbox
    expect(counting.statements).toBeLessThanOrEqual(6);
    expect(counting.rows).toBe(0);
  });

  it('finds the due mailboxes through their index, not by reading every mailbox', async (context) => {
    // the plan of PostgreSQL depends on its statistics; SQLite's is fixed by the schema
    if (testApp.database.dialect !== 'sqlite') context.skip();
    const explain = async (query: string) => {
      const { rows } = await sql<{ detail: string }>`${sql.raw(`explain query plan ${query}`)}`.execute(
        testApp.database.db,
      );
      return rows.map((r) => r.detail).join(' | ');
    };
    const nowIso = at(10 * 60_000).toISOString();
    const detail = await explain(
      `select id from mailboxes where status = 'active' and sync_due_at <= '${nowIso}' order by sync_due_at limit 4`,
    );
    expect(detail).toMatch(/SEARCH mailboxes USING INDEX mailboxes_sync_due_at \(status=\? AND sync_due_at<\?\)/);
    // in due order straight from the index: no sort of every active mailbox
    expect(detail).not.toMatch(/TEMP B-TREE/);
    const planning = await explain(
      `select id from mailboxes where status = 'active' and plan_due_at <= '${nowIso}' and proven_at is not null limit 1`,
    );
    expect(planning).toMatch(/USING INDEX mailboxes_plan_due_at \(status=\? AND plan_due_at<\?\)/);
    for (const column of ['reputation_due_at', 'health_due_at']) {
      const judged = await explain(
        `select id from mailboxes where status = 'active' and ${column} <= '${nowIso}' order by ${column} limit 200`,
      );
      expect(judged).toMatch(new RegExp(`USING INDEX mailboxes_${column} \\(status=\\? AND ${column}<\\?\\)`));
      expect(judged).not.toMatch(/TEMP B-TREE/);
    }
  });

  it('a send makes its recipient due a minute later; the sync then reads that one mailbox and no other', async () => {
    const recipient = ids[500];
    await pullSyncDue(testApp.database.db, [recipient], at(21 * 60_000));
    expect((await syncMailboxes(deps, { now: at(20 * 60_000), ignoreSchedule: false })).synced).toBe(0);
    const counting = new StatementCounter();
    const summary = await syncMailboxes(
      { ...deps, db: testApp.database.db.withPlugin(counting) },
      { now: at(21 * 60_000), ignoreSchedule: false },
    );
    expect(summary.synced).toBe(1);
    const row = await testApp.database.db
      .selectFrom('mailboxes')
      .select(['last_sync_at', 'sync_due_at', 'sync_owner', 'sync_claimed_until'])
      .where('id', '=', recipient)
      .executeTakeFirstOrThrow();
    // nothing arrived after all: back to the periodic check
    expect(row).toEqual({
      last_sync_at: at(21 * 60_000).toISOString(),
      sync_due_at: at(21 * 60_000 + IDLE_CHECK_MS).toISOString(),
      sync_owner: null,
      sync_claimed_until: null,
    });
  });

  it('the periodic check comes back within its bound', async () => {
    const summary = await syncMailboxes(deps, { now: at(IDLE_CHECK_MS), ignoreSchedule: false });
    // all but the one read at minute 21 (due 21 minutes later)
    expect(summary.synced).toBe(IDLE - 1);
  }, 120_000);

  it('two workers never hold one mailbox: concurrent claims take disjoint batches, a claim runs out after its lease', async () => {
    const { db, dialect } = testApp.database;
    const now = at(2 * IDLE_CHECK_MS);
    const until = new Date(now.getTime() + 60_000);
    // 8 workers claiming side by side (on PostgreSQL over separate connections)
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        Promise.all(
          Array.from({ length: 5 }, () => claimSyncs(db, { dialect, owner: `w${i}`, now, until, limit: 20 })),
        ).then((batches) => batches.flat()),
      ),
    );
    const all = claims.flat();
    expect(all.length).toBeGreaterThan(0);
    expect(new Set(all).size).toBe(all.length);
    // nobody takes a held mailbox before its claim runs out…
    const held = all[0];
    const before = await claimSyncs(db, {
      dialect,
      owner: 'late',
      now: new Date(until.getTime() - 1),
      until: new Date(until.getTime() + 60_000),
      limit: IDLE,
      everyActiveAfter: '',
    });
    expect(before).not.toContain(held);
    // …then another worker does (its owner died), and the dead owner's finish changes nothing
    const after = await claimSyncs(db, {
      dialect,
      owner: 'late',
      now: until,
      until: new Date(until.getTime() + 60_000),
      limit: IDLE,
      everyActiveAfter: '',
    });
    expect(after).toContain(held);
    const owner = claims.findIndex((batch) => batch.includes(held));
    await finishSyncClaim(db, held, `w${owner}`, { claimedUntil: until, nextDueAt: at(10 * IDLE_CHECK_MS) });
    expect(
      await db.selectFrom('mailboxes').select('sync_owner').where('id', '=', held).executeTakeFirstOrThrow(),
    ).toEqual({ sync_owner: 'late' });
    // a worker that stops gives its mailboxes back, due at once
    await releaseSyncClaims(db, 'late');
    const released = await db
      .selectFrom('mailboxes')
      .select(['sync_owner', 'sync_due_at'])
      .where('id', '=', held)
      .executeTakeFirstOrThrow();
    expect(released).toEqual({ sync_owner: null, sync_due_at: DUE_AT_ONCE });
  });

  it('mail sent during a sync keeps its recipient due: the end of the sync does not push it back', async () => {
    const { db, dialect } = testApp.database;
    const now = at(3 * IDLE_CHECK_MS);
    const until = new Date(now.getTime() + 60_000);
    await pullSyncDue(db, [ids[7]], now);
    expect(await claimSyncs(db, { dialect, owner: 'w', now, until, limit: IDLE })).toContain(ids[7]);
    await pullSyncDue(db, [ids[7]], new Date(now.getTime() + 30_000));
    await finishSyncClaim(db, ids[7], 'w', { claimedUntil: until, nextDueAt: new Date(now.getTime() + IDLE_CHECK_MS) });
    expect(
      await db.selectFrom('mailboxes').select('sync_due_at').where('id', '=', ids[7]).executeTakeFirstOrThrow(),
    ).toEqual({ sync_due_at: new Date(now.getTime() + 30_000).toISOString() });
  });

  it('judgement buckets claimed side by side never overlap', async () => {
    const { db, dialect } = testApp.database;
    const now = at(48 * 60 * 60_000);
    const until = new Date(now.getTime() + 60_000);
    const buckets = await Promise.all(
      Array.from({ length: 6 }, () => claimJudgements(db, 'health_due_at', { dialect, now, until, limit: 200 })),
    );
    const all = buckets.flat();
    expect(all.length).toBe(IDLE);
    expect(new Set(all).size).toBe(IDLE);
  });

  it("a placement test reading a seed and the seed's own sync never hold its IMAP side at once", async () => {
    const { db, dialect } = testApp.database;
    const now = at(5 * IDLE_CHECK_MS);
    const until = new Date(now.getTime() + 60_000);
    const seed = ids[11];
    await pullSyncDue(db, [seed], now);
    const dueBefore = await db
      .selectFrom('mailboxes')
      .select('sync_due_at')
      .where('id', '=', seed)
      .executeTakeFirstOrThrow();
    // the runner holds the seed: no sync claims it, and a second runner does not get it either
    expect(await claimMailboxConnection(db, seed, 'runner', now, until)).toBe(true);
    expect(await claimMailboxConnection(db, seed, 'other-runner', now, until)).toBe(false);
    expect(await claimSyncs(db, { dialect, owner: 'w', now, until, limit: IDLE })).not.toContain(seed);
    // given back, the seed is still due as it was, and its sync takes it
    await releaseMailboxConnection(db, seed, 'runner');
    expect(
      await db.selectFrom('mailboxes').select('sync_due_at').where('id', '=', seed).executeTakeFirstOrThrow(),
    ).toEqual(dueBefore);
    expect(await claimSyncs(db, { dialect, owner: 'w', now, until, limit: IDLE })).toContain(seed);
    // while the sync holds it, the runner waits for a later cycle
    expect(await claimMailboxConnection(db, seed, 'runner', now, until)).toBe(false);
    await finishSyncClaim(db, seed, 'w', { claimedUntil: until, nextDueAt: at(10 * IDLE_CHECK_MS) });
    expect(await claimMailboxConnection(db, seed, 'runner', now, until)).toBe(true);
    await releaseMailboxConnection(db, seed, 'runner');
  });
});
