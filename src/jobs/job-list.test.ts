import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../clock.js';
import { createMailbox, proveAll, testEngineDeps } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { createEngine, cycleLogLevel, type CycleSummary } from './job-list.js';
import { acquireLease } from './leases.js';

// The mail work is replaced here: these tests are about the cycle around it (the real sender and
// reader run end to end in test/engine/).
const mail = vi.hoisted(() => ({
  calls: [] as string[],
  sendImpl: async (_signal?: AbortSignal): Promise<void> => {},
  syncImpl: async (_signal?: AbortSignal): Promise<void> => {},
}));

vi.mock('../engine/sender.js', () => ({
  sendDueMessages: async (_deps: unknown, options: { now: Date; ignoreSchedule: boolean; signal?: AbortSignal }) => {
    mail.calls.push(`send ${options.now.toISOString()} ${options.ignoreSchedule}`);
    await mail.sendImpl(options.signal);
    return { claimed: 0, sent: 0, bounced: 0, failed: 0, retried: 0, mailboxErrors: [] };
  },
}));

vi.mock('../engine/reader.js', () => ({
  syncMailboxes: async (_deps: unknown, options: { now: Date; ignoreSchedule: boolean; signal?: AbortSignal }) => {
    mail.calls.push(`sync ${options.now.toISOString()} ${options.ignoreSchedule}`);
    await mail.syncImpl(options.signal);
    return {
      synced: 0,
      skipped: 0,
      failed: 0,
      received: 0,
      rescued: 0,
      opened: 0,
      flagged: 0,
      replied: 0,
      filed: 0,
      bounced: 0,
      lost: 0,
      mailboxErrors: [],
    };
  },
}));

const AT = '2025-03-03T10:00:00.000Z';

describe('engine cycle', () => {
  let testApp: TestApp;
  let mailboxId: string;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(AT) });
    mailboxId = await createMailbox(testApp.workspace, 'ann@alpha.test');
    await createMailbox(testApp.workspace, 'bob@beta.test');
    await proveAll(testApp.database.db);
  });

  afterAll(async () => {
    await testApp.close();
  });

  beforeEach(() => {
    mail.calls = [];
    mail.sendImpl = async () => {};
    mail.syncImpl = async () => {};
  });

  it('plans, sends, syncs, sends the replies, then scores reputation and health, all at the given time', async () => {
    const engine = createEngine(testEngineDeps(testApp, { workerId: 'w-cycle' }));
    const summary = await engine.runCycle({ at: new Date(AT), ignoreSchedule: true });
    expect(mail.calls).toEqual([`send ${AT} true`, `sync ${AT} true`, `send ${AT} true`]);
    expect(summary).toMatchObject({
      at: AT,
      workerId: 'w-cycle',
      ignoreSchedule: true,
      // how many mailboxes it planned, not which: a day of 100,000 would be a log line of megabytes
      plan: { ran: true, mailboxes: 2, messages: expect.any(Number) },
      send: { claimed: 0 },
      sync: { synced: 0 },
      replies: { claimed: 0 },
      reputation: { scored: 2, updated: 2 },
      health: { slowedDown: [], restored: [], stopped: [], providerHeld: [] },
      errors: [],
      stopped: false,
    });
    expect(
      await testApp.database.db
        .selectFrom('mailbox_plans')
        .select('mailbox_id')
        .where('mailbox_id', '=', mailboxId)
        .execute(),
    ).toHaveLength(1);
    // the summary is what run-once prints
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });

  it('sends once per cycle on schedule, reading the time from the clock', async () => {
    const engine = createEngine(testEngineDeps(testApp));
    const summary = await engine.runCycle();
    expect(mail.calls).toEqual([`send ${AT} false`, `sync ${AT} false`]);
    expect(summary.replies).toBeNull();
  });

  it('reports a failing step and still runs the steps after it', async () => {
    mail.syncImpl = async () => {
      throw new Error('IMAP server exploded');
    };
    const summary = await createEngine(testEngineDeps(testApp)).runCycle({ at: new Date(AT), ignoreSchedule: true });
    expect(summary.errors).toEqual([{ step: 'sync', message: 'IMAP server exploded' }]);
    expect(summary.sync).toBeNull();
    expect(summary.replies).not.toBeNull();
    expect(summary.reputation).not.toBeNull();
    expect(summary.health).not.toBeNull();
  });

  it('stop lets the running step finish, skips the rest and gives back the worker’s leases', async () => {
    const deps = testEngineDeps(testApp, { workerId: 'w-stop' });
    const engine = createEngine(deps);
    await acquireLease(deps.db, 'sync:someone', 'w-stop', 60_000, new Date(AT));
    await acquireLease(deps.db, 'sync:other', 'another-worker', 60_000, new Date(AT));
    let release!: () => void;
    const syncing = new Promise<void>((resolve) => (release = resolve));
    let inSync!: () => void;
    const entered = new Promise<void>((resolve) => (inSync = resolve));
    mail.syncImpl = async () => {
      inSync();
      await syncing;
    };
    const cycle = engine.runCycle({ at: new Date(AT), ignoreSchedule: true });
    await entered;
    const stopped = engine.stop();
    release();
    const [summary] = await Promise.all([cycle, stopped]);
    expect(summary.stopped).toBe(true);
    expect(summary.sync).not.toBeNull();
    expect(summary.replies).toBeNull();
    expect(summary.reputation).toBeNull();
    const leases = await deps.db.selectFrom('leases').select(['key', 'owner']).execute();
    expect(leases).toEqual([{ key: 'sync:other', owner: 'another-worker' }]);
  });

  it('stop aborts the step in flight at once: a sync waiting on a hung server does not hold it up', async () => {
    const deps = testEngineDeps(testApp, { workerId: 'w-abort' });
    const engine = createEngine(deps);
    await acquireLease(deps.db, 'sync:hung', 'w-abort', 60_000, new Date(AT));
    let inSync!: () => void;
    const entered = new Promise<void>((resolve) => (inSync = resolve));
    // a sync that only ends when the engine gives it up, like one waiting on a frozen server
    mail.syncImpl = (signal) =>
      new Promise<void>((resolve) => {
        inSync();
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    const cycle = engine.runCycle({ at: new Date(AT), ignoreSchedule: true });
    await entered;
    await engine.stop();
    const summary = await cycle;
    expect(summary).toMatchObject({ stopped: true, replies: null, reputation: null });
    expect(await deps.db.selectFrom('leases').select('key').where('owner', '=', 'w-abort').execute()).toEqual([]);
  });

  it('start runs cycles on its own until stop', async () => {
    const engine = createEngine(testEngineDeps(testApp), { intervalMs: 5, jitter: 0 });
    engine.start();
    const end = performance.now() + 5000;
    while (mail.calls.filter((c) => c.startsWith('sync')).length < 2 && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await engine.stop();
    const syncs = mail.calls.filter((c) => c.startsWith('sync')).length;
    expect(syncs).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(mail.calls.filter((c) => c.startsWith('sync')).length).toBe(syncs);
  });

  it('removes OAuth consents and unconfirmed connections past their expiry, and keeps those still running', async () => {
    const db = testApp.database.db;
    const row = (id: string, expiresAt: string) => ({
      id,
      workspace_id: testApp.workspace.id,
      provider: 'google' as const,
      mailbox_id: null,
      created_at: '2025-03-03T09:00:00.000Z',
      expires_at: expiresAt,
    });
    const expired = '2025-03-03T09:50:00.000Z';
    const running = '2025-03-03T10:05:00.000Z';
    await db
      .insertInto('oauth_states')
      .values([
        { ...row('state-expired', expired), code_verifier_encrypted: 'x' },
        { ...row('state-running', running), code_verifier_encrypted: 'x' },
      ])
      .execute();
    await db
      .insertInto('oauth_confirmations')
      .values([
        { ...row('confirm-expired', expired), email: 'ann@alpha.test', tokens_encrypted: 'x' },
        { ...row('confirm-running', running), email: 'ann@alpha.test', tokens_encrypted: 'x' },
      ])
      .execute();
    const summary = await createEngine(testEngineDeps(testApp, { workerId: 'w-oauth' })).runCycle({ at: new Date(AT) });
    expect(summary.oauthRetention).toEqual({ removed: 2 });
    expect((await db.selectFrom('oauth_states').select('id').execute()).map((r) => r.id)).toEqual(['state-running']);
    expect((await db.selectFrom('oauth_confirmations').select('id').execute()).map((r) => r.id)).toEqual([
      'confirm-running',
    ]);
  });
});

describe('cycleLogLevel', () => {
  const quiet: CycleSummary = {
    at: AT,
    workerId: 'w',
    ignoreSchedule: false,
    loop: 'engine',
    prove: null,
    plan: { ran: true, mailboxes: 0, messages: 0 },
    send: { claimed: 0, sent: 0, bounced: 0, failed: 0, retried: 0, deferred: 0, dropped: 0, mailboxErrors: [] },
    sync: null,
    replies: null,
    placement: null,
    reputation: null,
    health: null,
    rollup: null,
    errors: [],
    stopped: false,
    durationMs: 1,
  };

  it('is debug for an idle cycle, info when mail went out, warn when a send or sync failed', () => {
    expect(cycleLogLevel(quiet)).toBe('debug');
    expect(cycleLogLevel({ ...quiet, send: { ...quiet.send!, claimed: 2, sent: 2 } })).toBe('info');
    expect(cycleLogLevel({ ...quiet, send: { ...quiet.send!, claimed: 2, sent: 1, retried: 1 } })).toBe('warn');
    expect(
      cycleLogLevel({
        ...quiet,
        sync: {
          synced: 3,
          skipped: 0,
          failed: 1,
          received: 0,
          rescued: 0,
          promoted: 0,
          important: 0,
          opened: 0,
          flagged: 0,
          replied: 0,
          filed: 0,
          bounced: 0,
          lost: 0,
          humanReplies: 0,
          autoReplies: 0,
          pruned: 0,
          mailboxErrors: [],
        },
      }),
    ).toBe('warn');
    expect(cycleLogLevel({ ...quiet, errors: [{ step: 'plan', message: 'x' }] })).toBe('warn');
  });
});
