// Scale-out, proven with real processes: PostgreSQL, a `warmup serve --no-engine` API process and
// three `warmup worker` processes against the real mail stack. Each scenario is a fresh
// installation (its own PostgreSQL schema, API process and ten mailboxes created over HTTP) that
// runs one whole warmup day in seconds (`--ignore-schedule`: everything planned today is due now).
//
// The evidence comes from outside the engine: the database, each worker's own cycle log lines,
// Dovecot's log (IMAP sessions per mailbox) and Postfix's log (every message it accepted).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/test-database.js';
import { openImapSession } from '../../src/mail/imap.js';
import { getMailStack, mailServerConfigs, stackMailEnv, type MailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';
import {
  accounting,
  createMailboxes,
  dayDone,
  describeOverlaps,
  describeSessions,
  dovecotLog,
  imapSessions,
  overlappingSessions,
  postfixSubmissions,
  SECRET_KEY,
  sleep,
  startApi,
  startWorker,
  stopProcess,
  waitFor,
  workerTotals,
  workState,
  type ApiProcess,
  type MailboxSettings,
  type WorkerOptions,
  type WorkerProcess,
  type WorkState,
} from './cluster.js';

const users = MAIL_USERS.scale;

const skipReason =
  testDialect !== 'postgres'
    ? 'runs on PostgreSQL only (WARMUP_TEST_DB=postgres): on SQLite the engine is one process'
    : getMailStack() === null
      ? 'no mail stack in this run'
      : null;

interface Installation {
  database: TestDatabase;
  api: ApiProcess;
  /** What every process of the installation shares: the database and the secret key. */
  env: Record<string, string>;
  workers: WorkerProcess[];
}

describe.skipIf(skipReason !== null)(
  `scale-out: one API process and three workers on PostgreSQL${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let stack: MailStack;
    let current: Installation | undefined;
    let workerCount = 0;

    /** Dovecot log lines from here on are the workers' (the control session pair below comes before). */
    let workersFromLine = 0;

    beforeAll(async () => {
      stack = getMailStack()!;
      // The overlap check must be able to fail: two sessions of one mailbox held open together by
      // hand show up in Dovecot's log as exactly one overlap.
      const fromLine = dovecotLog(stack).length - 1;
      const { imap } = mailServerConfigs(stack, users[0]);
      const first = await openImapSession(imap, { timeoutMs: 10_000 });
      const second = await openImapSession(imap, { timeoutMs: 10_000 });
      await first.close();
      await second.close();
      const control = await waitFor(
        async () => {
          const sessions = imapSessions(stack, users, fromLine);
          return sessions.length === 2 && sessions.every((x) => x.logoutLine !== null) ? sessions : undefined;
        },
        10_000,
        () => JSON.stringify(imapSessions(stack, users, fromLine)),
        50,
      );
      expect(overlappingSessions(control)).toHaveLength(1);
      workersFromLine = Math.max(...control.map((x) => x.logoutLine!)) + 1;
    });

    afterEach(async () => {
      if (!current) return;
      const { database, api, workers } = current;
      current = undefined;
      await Promise.all(workers.map((w) => stopProcess(w.process, 'SIGKILL')));
      await api.stop();
      await database.close();
    });

    afterAll(() => {
      // The whole run's IMAP sessions of these mailboxes, killed workers included: never two at once.
      const overlaps = overlappingSessions(imapSessions(stack, users, workersFromLine));
      expect(overlaps, describeOverlaps(stack, overlaps)).toEqual([]);
    });

    async function install(warmup: MailboxSettings): Promise<Installation> {
      const database = await createTestDatabase();
      const env = { ...database.env, WARMUP_SECRET_KEY: SECRET_KEY, ...stackMailEnv(stack) };
      const api = await startApi(env);
      current = { database, api, env, workers: [] };
      await createMailboxes(api, stack, users, warmup);
      return current;
    }

    async function addWorker(installation: Installation, options: WorkerOptions): Promise<WorkerProcess> {
      workerCount += 1;
      const worker = await startWorker(`w${workerCount}`, installation.env, options);
      installation.workers.push(worker);
      // A test that failed while this worker was starting has already torn its installation down.
      if (current !== installation) await stopProcess(worker.process, 'SIGKILL');
      return worker;
    }

    async function runDay(installation: Installation, timeoutMs: number): Promise<WorkState> {
      const { db } = installation.database;
      return waitFor(
        async () => {
          const state = await workState(db);
          return dayDone(state) ? state : undefined;
        },
        timeoutMs,
        async () =>
          `day not done: ${JSON.stringify(await workState(db))}; workers: ${JSON.stringify(workerTotals(installation.workers))}`,
        250,
      );
    }

    /** Leases, mailboxes claimed for a sync (as `sync:<id>`) and claimed planned rows a worker holds right now. */
    async function heldBy(installation: Installation, workerId: string) {
      const { db } = installation.database;
      const [named, syncs, rows] = await Promise.all([
        db.selectFrom('leases').select(['key', 'expires_at']).where('owner', '=', workerId).execute(),
        db.selectFrom('mailboxes').select(['id', 'sync_claimed_until']).where('sync_owner', '=', workerId).execute(),
        db
          .selectFrom('warmup_messages')
          .select(['id', 'lease_expires_at', 'plan_day'])
          .where('lease_owner', '=', workerId)
          .where('status', '=', 'planned')
          .execute(),
      ]);
      const leases = [...named, ...syncs.map((m) => ({ key: `sync:${m.id}`, expires_at: m.sync_claimed_until ?? '' }))];
      return { leases, rows };
    }

    /** Waits for a random moment, then for a worker that holds work (a lease or claimed rows). */
    /**
     * A live worker holding a mailbox's sync or a send. `unfinished` names work an earlier kill left behind
     * that is not finished yet: a worker that took such work over is not a victim, or that work's
     * time to finish would count two kills.
     */
    async function workerHoldingWork(
      installation: Installation,
      unfinished: ReadonlySet<string> = new Set(),
    ): Promise<WorkerProcess> {
      await sleep(200 + Math.random() * 1_300);
      return waitFor(
        async () => {
          const alive = installation.workers.filter(
            (w) => w.process.child.exitCode === null && w.process.child.signalCode === null,
          );
          for (const worker of alive.sort(() => Math.random() - 0.5)) {
            const held = await heldBy(installation, worker.workerId);
            const keys = [...held.leases.map((l) => l.key), ...held.rows.map((r) => `send ${r.id}`)];
            if (keys.some((key) => unfinished.has(key))) continue;
            if (held.leases.some((l) => l.key.startsWith('sync:')) || held.rows.length > 0) return worker;
          }
          return undefined;
        },
        30_000,
        async () => `no worker holds work: ${JSON.stringify(await workState(installation.database.db))}`,
        20,
      );
    }

    /** Counting is exactly-once: per type one row per (mailbox, message), and the rollups agree with the rows. */
    async function expectExactlyOnce(installation: Installation, state: WorkState): Promise<void> {
      const { interactions, rollups } = await accounting(installation.database.db);
      for (const [type, counts] of Object.entries(interactions)) {
        expect(counts.rows, `${type}: one interaction per mailbox and message`).toBe(counts.distinctPairs);
      }
      expect(interactions.sent).toEqual({
        rows: state.total,
        distinctPairs: state.total,
        distinctMessages: state.total,
      });
      expect(interactions.received).toEqual({
        rows: state.found,
        distinctPairs: state.found,
        distinctMessages: state.found,
      });
      expect(rollups.sent).toBe(interactions.sent.rows);
      expect(rollups.received).toBe(interactions.received.rows);
      expect(rollups.inbox + rollups.spam + rollups.promotions + rollups.other).toBe(interactions.received.rows);
      for (const type of ['opened', 'flagged', 'rescued', 'replied', 'bounced', 'failed'] as const) {
        expect(rollups[type], `rollup ${type}`).toBe(interactions[type].rows);
      }
      // Every reply row was planned by exactly one `replied` interaction.
      expect(interactions.replied.rows).toBe(state.replies);
    }

    /** No mailbox was open in two IMAP sessions at once since that Dovecot log line; returns the sessions. */
    async function expectOneSessionPerMailbox(fromLine: number) {
      // Dovecot logs a disconnect after the worker's socket closes, which can be just after the
      // worker has exited: give the last lines time to reach the log (on a loaded two-core machine
      // that once took longer than 10 s).
      let sessions = imapSessions(stack, users, fromLine);
      for (let waited = 0; waited < 30_000 && sessions.some((x) => x.logoutLine === null); waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        sessions = imapSessions(stack, users, fromLine);
      }
      const unclosed = sessions.filter((x) => x.logoutLine === null);
      expect(unclosed, `IMAP sessions never closed:\n${describeSessions(stack, unclosed)}`).toEqual([]);
      const overlaps = overlappingSessions(sessions);
      expect(overlaps, describeOverlaps(stack, overlaps)).toEqual([]);
      return sessions;
    }

    async function messageIds(installation: Installation): Promise<string[]> {
      // a reply the day's budget had no room for waits for the next day: not part of this one
      const rows = await installation.database.db
        .selectFrom('warmup_messages')
        .select('message_id')
        .where('sent_at', 'is not', null)
        .execute();
      return rows.map((r) => r.message_id);
    }

    it('shares a day among three workers: every planned send sent once, every message received counted once', async () => {
      const logFrom = dovecotLog(stack).length - 1;
      const installation = await install({ startVolume: 6, replyRate: 50 });
      const options: WorkerOptions = { intervalMs: 200, leaseMs: 30_000, ignoreSchedule: true };
      const workers = await Promise.all([1, 2, 3].map(() => addWorker(installation, options)));

      const state = await runDay(installation, 60_000);
      // A few more cycles change nothing: the day is really over.
      await sleep(1_500);
      expect(await workState(installation.database.db)).toMatchObject({
        total: state.total,
        found: state.total,
        engaged: state.total,
        byStatus: { sent: state.total },
      });
      for (const worker of workers) await stopProcess(worker.process, 'SIGTERM');

      // Every planned send was sent: the planner's plans add up to the initial messages, all of them
      // and all replies went out, and each was handed to Postfix exactly once.
      expect(state.plans).toBe(users.length);
      expect(state.initial).toBe(state.plannedByPlans);
      expect(state.initial).toBeGreaterThanOrEqual(users.length * 3);
      expect(state.byStatus).toEqual({ sent: state.total });
      const submissions = postfixSubmissions(stack);
      const ids = await messageIds(installation);
      expect(
        ids.filter((id) => submissions.get(id) !== 1),
        'messages Postfix did not accept exactly once',
      ).toEqual([]);

      // Every message received was counted once, by exactly one worker.
      await expectExactlyOnce(installation, state);
      const totals = workerTotals(workers);
      expect(totals.reduce((sum, w) => sum + w.sent, 0)).toBe(state.total);
      expect(totals.reduce((sum, w) => sum + w.received, 0)).toBe(state.total);

      // The reading was shared: more than one worker read mail. (Sending need not be: with the whole
      // day due at once, the worker that planned it claims every mailbox's sends in its next step,
      // and the day's budget sends the replies the next day. Taking sends over is the next test's.)
      expect(totals.filter((w) => w.received > 0).length, JSON.stringify(totals)).toBeGreaterThan(1);

      // No mailbox was ever open in two IMAP sessions at once (Dovecot's own log), over several sessions
      // a mailbox (every cycle reads every mailbox here; how many cycles the day takes depends on the
      // machine's speed: 30 sessions for 10 mailboxes on a quiet one).
      const sessions = await expectOneSessionPerMailbox(logFrom);
      expect(sessions.length).toBeGreaterThanOrEqual(2 * users.length);
      console.info(
        `scale-out day: ${state.initial} planned + ${state.replies} replies, ${sessions.length} IMAP sessions; per worker ${JSON.stringify(totals)}`,
      );
    }, 120_000);

    it('takes over the work of a worker SIGKILLed mid-work after about one lease, three times, and counts nothing twice', async () => {
      // After the lease expires, a live worker takes the work over in its next cycle (cycles take
      // seconds on a busy 2-core machine: pickupMs), then does it (a mailbox left alone for a lease
      // has a backlog to read: doneMarginMs).
      const leaseMs = 10_000;
      const pickupMs = 8_000;
      const doneMarginMs = 15_000;
      const logFrom = dovecotLog(stack).length - 1;
      const installation = await install({ startVolume: 8, replyRate: 70 });
      const options: WorkerOptions = { intervalMs: 200, leaseMs, ignoreSchedule: true };
      await Promise.all([1, 2, 3].map(() => addWorker(installation, options)));
      const { db } = installation.database;

      interface Held {
        kill: number;
        what: string;
        expiresAt: number;
        /** Another worker holds it now (or already finished it). */
        claimed: () => Promise<boolean>;
        claimedAt?: number;
        /** Another worker finished it. */
        done: () => Promise<boolean>;
        doneAt?: number;
      }
      const held: Held[] = [];
      // replies a victim had moved to a later day before it died (see below)
      const movedOn: Array<{ id: string; victimId: string; killAt: number }> = [];
      const kills: Array<{ victim: string; killAt: number; leases: string[]; rows: number }> = [];

      // Watches the held work until another worker has finished it; 50 ms resolution.
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          for (const item of held.filter((h) => h.doneAt === undefined)) {
            if (item.claimedAt === undefined && (await item.claimed())) item.claimedAt = Date.now();
            if (await item.done()) {
              item.doneAt = Date.now();
              item.claimedAt ??= item.doneAt;
            }
          }
          await sleep(50);
        }
      })();

      for (let attempt = 0; kills.length < 3 && attempt < 10; attempt++) {
        const victim = await workerHoldingWork(
          installation,
          new Set(held.filter((h) => h.doneAt === undefined).map((h) => h.what)),
        );
        victim.process.child.kill('SIGKILL');
        const killAt = Date.now();
        await victim.process.exited;
        // What the dead worker still holds is exactly what nobody may touch until its lease expires.
        const left = await heldBy(installation, victim.workerId);
        await addWorker(installation, options);
        // the day the installation plans (its mailboxes are all on UTC)
        const { day: planDay } = await db
          .selectFrom('mailbox_plans')
          .select((eb) => eb.fn.max('day').as('day'))
          .executeTakeFirstOrThrow();
        // A reply the day's budget had no room for, which the victim had already moved to a later day,
        // keeps its lease until the end of the victim's call: nobody has it to take over today; its
        // lease runs out and that day's sender claims it (checked at the end).
        movedOn.push(
          ...left.rows
            .filter((row) => row.plan_day > (planDay ?? ''))
            .map((row) => ({ id: row.id, victimId: victim.workerId, killAt })),
        );
        const rows = left.rows.filter((row) => row.plan_day <= (planDay ?? ''));
        if (left.leases.length === 0 && rows.length === 0) continue; // it let go just before the kill
        kills.push({ victim: victim.label, killAt, leases: left.leases.map((l) => l.key), rows: rows.length });
        const killedAtIso = new Date(killAt).toISOString();
        const victimId = victim.workerId;
        const leaseTakenOver = (key: string) => async () => {
          const lease = await db.selectFrom('leases').select('owner').where('key', '=', key).executeTakeFirst();
          return lease !== undefined && lease.owner !== victimId;
        };
        // a mailbox's sync claim: another worker holds it now
        const syncTakenOver = (mailboxId: string) => async () => {
          const mailbox = await db
            .selectFrom('mailboxes')
            .select('sync_owner')
            .where('id', '=', mailboxId)
            .executeTakeFirst();
          return mailbox?.sync_owner != null && mailbox.sync_owner !== victimId;
        };
        for (const lease of left.leases) {
          const expiresAt = Date.parse(lease.expires_at);
          if (lease.key.startsWith('sync:')) {
            const mailboxId = lease.key.slice('sync:'.length);
            held.push({
              kill: kills.length,
              what: lease.key,
              expiresAt,
              claimed: syncTakenOver(mailboxId),
              // another worker synced that mailbox after the kill
              done: async () => {
                const row = await db
                  .selectFrom('mailboxes')
                  .select('last_sync_at')
                  .where('id', '=', mailboxId)
                  .executeTakeFirst();
                return (row?.last_sync_at ?? '') > killedAtIso;
              },
            });
          } else if (lease.key.startsWith('plan:')) {
            // a bucket of the day's planning (planner.ts)
            held.push({
              kill: kills.length,
              what: lease.key,
              expiresAt,
              claimed: leaseTakenOver(lease.key),
              done: async () => (await workState(db)).plans === users.length,
            });
          }
        }
        for (const row of rows) {
          const status = () =>
            db
              .selectFrom('warmup_messages')
              .select(['status', 'lease_owner', 'plan_day'])
              .where('id', '=', row.id)
              .executeTakeFirstOrThrow();
          held.push({
            kill: kills.length,
            what: `send ${row.id}`,
            expiresAt: Date.parse(row.lease_expires_at ?? ''),
            claimed: async () => {
              const now = await status();
              return now.status !== 'planned' || (now.lease_owner !== null && now.lease_owner !== victimId);
            },
            // sent, closed, or (a reply the day's budget had no room for) moved to the next day
            done: async () => {
              const now = await status();
              // (a reply already waiting for the next day counts once another worker has handled it)
              return now.status !== 'planned' || (now.plan_day > planDay && now.lease_owner !== victimId);
            },
          });
        }
      }
      expect(kills.length, 'three kills of a worker holding work').toBe(3);

      let state: WorkState;
      try {
        state = await runDay(installation, 90_000);
        await waitFor(
          async () => (held.every((h) => h.doneAt !== undefined) ? true : undefined),
          30_000,
          () => JSON.stringify(held),
        );
      } finally {
        // no query outlives the test's database
        watching = false;
        await watcher;
      }
      // What a victim had moved to a later day is still planned, for that day. The victim's lease on it
      // runs out at most one lease after the kill; then a live worker may take it (with the schedule
      // ignored, tomorrow's rows are due), so another worker may hold it by now.
      const later = await db
        .selectFrom('warmup_messages')
        .select(['id', 'status', 'lease_owner', 'lease_expires_at'])
        .where('id', 'in', ['', ...movedOn.map((row) => row.id)])
        .execute();
      expect(later).toHaveLength(movedOn.length);
      for (const row of later) {
        const { victimId, killAt } = movedOn.find((moved) => moved.id === row.id)!;
        expect(row.status).toBe('planned');
        if (row.lease_owner === victimId)
          expect(Date.parse(row.lease_expires_at!), row.id).toBeLessThanOrEqual(killAt + leaseMs);
      }
      for (const worker of installation.workers) await stopProcess(worker.process, 'SIGTERM');
      // Killed mid-sync or not, a mailbox never had two IMAP sessions at once.
      await expectOneSessionPerMailbox(logFrom);

      // All planned work completed, and nothing was counted twice.
      expect(state.initial).toBe(state.plannedByPlans);
      expect(state.byStatus).toEqual({ sent: state.total });
      await expectExactlyOnce(installation, state);
      // Sending is at-least-once: a worker killed between SMTP's OK and its commit causes a resend
      // (same Message-ID), which is fine as long as it is counted once (above).
      const submissions = postfixSubmissions(stack);
      const ids = await messageIds(installation);
      expect(
        ids.filter((id) => (submissions.get(id) ?? 0) < 1),
        'messages Postfix never accepted',
      ).toEqual([]);
      const resent = ids.reduce((sum, id) => sum + (submissions.get(id) ?? 0) - 1, 0);
      // … and only a message a killed worker held can have gone out twice.
      const heldRows = await db
        .selectFrom('warmup_messages')
        .select('message_id')
        .where('id', 'in', [
          '',
          ...held.filter((h) => h.what.startsWith('send ')).map((h) => h.what.slice('send '.length)),
        ])
        .execute();
      const mayRepeat = new Set(heldRows.map((r) => r.message_id));
      expect(
        ids.filter((id) => (submissions.get(id) ?? 0) > 1 && !mayRepeat.has(id)),
        'messages sent twice that no killed worker held',
      ).toEqual([]);

      const report = kills.map((kill, i) => {
        const items = held.filter((h) => h.kill === i + 1);
        return {
          held: items.length,
          leaseLeftMs: Math.max(...items.map((h) => h.expiresAt)) - kill.killAt,
          takenOverMs: Math.min(...items.map((h) => h.claimedAt!)) - kill.killAt,
          finishedMs: Math.max(...items.map((h) => h.doneAt!)) - kill.killAt,
        };
      });
      console.info(
        `takeover after SIGKILL (lease ${leaseMs} ms): ${JSON.stringify(report)}; kills ${JSON.stringify(kills.map(({ killAt: _k, ...k }) => k))}; ` +
          `${state.total} messages, ${resent} resent after a kill`,
      );
      // Taken over after the lease expired, never before, and finished within a lease and a margin of the kill.
      for (const item of held) {
        const killAt = kills[item.kill - 1].killAt;
        expect(item.claimedAt!, `${item.what} not taken over before its lease expired`).toBeGreaterThanOrEqual(
          item.expiresAt - 100,
        );
        expect(item.claimedAt! - killAt, `${item.what} taken over within lease + pickup`).toBeLessThanOrEqual(
          leaseMs + pickupMs,
        );
        expect(
          item.doneAt! - killAt,
          `${item.what} finished by another worker within lease + margin`,
        ).toBeLessThanOrEqual(leaseMs + doneMarginMs);
      }
    }, 150_000);

    it('stops a worker cleanly on SIGTERM: exit code 0 within seconds, its leases given back', async () => {
      // Leases longer than the whole test: work left behind under a lease would stall the day.
      const options: WorkerOptions = { intervalMs: 200, leaseMs: 120_000, ignoreSchedule: true };
      const logFrom = dovecotLog(stack).length - 1;
      const installation = await install({ startVolume: 5, replyRate: 30 });
      await Promise.all([1, 2, 3].map(() => addWorker(installation, options)));

      const victim = await workerHoldingWork(installation);
      const signalled = Date.now();
      victim.process.child.kill('SIGTERM');
      const exit = await victim.process.exited;
      const stopMs = Date.now() - signalled;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(stopMs).toBeLessThan(10_000);
      expect(victim.process.output()).toContain('shutting down');
      expect(await heldBy(installation, victim.workerId)).toEqual({ leases: [], rows: [] });
      const { db } = installation.database;
      expect(
        await db.selectFrom('warmup_messages').select('id').where('lease_owner', '=', victim.workerId).execute(),
      ).toEqual([]);

      // The two others finish the day long before any lease of the stopped worker could have expired.
      const state = await runDay(installation, 60_000);
      expect(Date.now() - signalled).toBeLessThan(options.leaseMs);
      for (const worker of installation.workers) await stopProcess(worker.process, 'SIGTERM');
      await expectOneSessionPerMailbox(logFrom);
      expect(state.byStatus).toEqual({ sent: state.total });
      await expectExactlyOnce(installation, state);
      const last = victim.cycles().at(-1);
      console.info(
        `SIGTERM: worker ${victim.label} exited 0 in ${stopMs} ms holding nothing (its last cycle: ${JSON.stringify(last)}); the others finished the day (${state.total} messages)`,
      );
    }, 120_000);
  },
);
