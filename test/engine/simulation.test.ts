// Fourteen simulated days of warmup on the real mail stack: one `run-once --ignore-schedule`
// cycle per day (in process through the same code path as the command, and once as the real
// command), then a run-once killed with SIGKILL in the middle of its cycle and run again.
// The volume of every mailbox on every day must be exactly what the planner's arithmetic says,
// everything planned must go out, and nothing may ever be counted twice.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { runOnce, type CycleSummary } from '../../src/jobs/job-list.js';
import { PAIR_SPACING_MS, PAIR_THREADS_PER_DAY } from '../../src/engine/partners.js';
import { addDays } from '../../src/calendar.js';
import { dailyTarget } from '../../src/engine/plan-volume.js';
import { seededRandom } from '../../src/engine/random.js';
import { createEngineFor } from '../../src/main.js';
import { createStackMailbox, silentLogger } from '../helpers/engine.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, requireMailStack, stackMailEnv } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';

const BIN = fileURLToPath(new URL('../../bin/warmup.js', import.meta.url));
const FIRST_DAY = '2025-03-03';
const DAYS = 14;
/** The cycle of this day runs as a real `warmup run-once` child process. */
const CLI_DAY = 6;
const users = MAIL_USERS.engineSim;

// A ramp this pool always carries: a sender has n − 1 partners, each taking at least one new
// thread a day (the pair rules), and a third of them leaves the receivers' caps room for everyone.
const dailyLimit = Math.max(1, Math.floor((users.length - 1) / 3));
const WARMUP = {
  startVolume: 1,
  rampUpIncrement: 1,
  dailyLimit,
  replyRate: 50,
  timezone: 'UTC',
  sendWindow: { start: '08:00', end: '18:00' },
};

function dayAt(index: number, time = '10:00:00'): Date {
  return new Date(`${addDays(FIRST_DAY, index)}T${time}Z`);
}

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describeWithMailStack('a simulated warmup on the real mail stack', () => {
  const stack = requireMailStack();
  let testApp: TestApp;
  let db: Kysely<Database>;
  const mailboxIds: string[] = [];
  const clock = fixedClock(dayAt(0, '07:00:00'));

  function childEnv(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: '',
      ...testApp.database.env,
      WARMUP_SECRET_KEY: TEST_SECRET_KEY,
      // the operator's settings for the loopback stack, as the test app has them
      ...stackMailEnv(stack),
      LOG_LEVEL: 'warn',
    };
  }

  /** `warmup run-once` as a child process; `onStart` may kill it. */
  function runCli(args: string[], onStart?: (child: ReturnType<typeof spawn>) => void): Promise<ChildRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'run-once', ...args], {
        env: childEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
      onStart?.(child);
    });
  }

  /** One cycle in this process, through the code path `warmup run-once` takes. */
  async function runInProcess(at: Date, seed: number): Promise<CycleSummary> {
    clock.set(at);
    const engine = createEngineFor(
      { database: testApp.database, services: testApp.services, logger: silentLogger, clock },
      { random: seededRandom(seed), workerId: `sim-${seed}` },
    );
    return runOnce(engine, { at, ignoreSchedule: true });
  }

  async function count(query: Promise<{ n: number } | undefined>): Promise<number> {
    return Number((await query)?.n ?? 0);
  }

  /** Replies a mailbox sends on its day: they count against the day's budget before its new threads. */
  function repliesOfDay(mailboxId: string, day: string): Promise<number> {
    return count(
      db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('sender_mailbox_id', '=', mailboxId)
        .where('kind', '=', 'reply')
        .where('plan_day', '=', day)
        .executeTakeFirst(),
    );
  }

  /** Rollups equal the interactions they count, and each message is counted once per type. */
  async function expectExactlyOnceCounting(): Promise<void> {
    const perType = await db
      .selectFrom('interactions')
      .select([
        'type',
        sql<number>`cast(count(*) as integer)`.as('entries'),
        sql<number>`cast(count(distinct ${sql.ref('mailbox_id')} || ' ' || ${sql.ref('message_id')}) as integer)`.as(
          'messages',
        ),
      ])
      .groupBy('type')
      .execute();
    for (const row of perType) expect(Number(row.entries), `${row.type} entries`).toBe(Number(row.messages));

    // every message that left counts one `sent`, every message found one `received`
    const sentRows = await count(
      db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('sent_at', 'is not', null)
        .executeTakeFirst(),
    );
    const sentEntries = await count(
      db
        .selectFrom('interactions')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('type', '=', 'sent')
        .executeTakeFirst(),
    );
    expect(sentEntries).toBe(sentRows);
    const foundRows = await count(
      db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('found_at', 'is not', null)
        .executeTakeFirst(),
    );
    const receivedEntries = await count(
      db
        .selectFrom('interactions')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('type', '=', 'received')
        .executeTakeFirst(),
    );
    expect(receivedEntries).toBe(foundRows);

    // the daily rollups, mailbox by mailbox and day by day, against the interactions
    const own = await db
      .selectFrom('interactions')
      .select([
        'mailbox_id',
        'day',
        sql<number>`cast(sum(case when type = 'sent' then 1 else 0 end) as integer)`.as('sent'),
        sql<number>`cast(sum(case when type = 'received' then 1 else 0 end) as integer)`.as('received'),
      ])
      .groupBy(['mailbox_id', 'day'])
      .execute();
    const senderSide = await db
      .selectFrom('interactions')
      .select([
        'counterpart_mailbox_id as mailbox_id',
        'day',
        sql<number>`cast(sum(case when type = 'received' then 1 else 0 end) as integer)`.as('found'),
        sql<number>`cast(sum(case when type = 'opened' then 1 else 0 end) as integer)`.as('opened'),
        sql<number>`cast(sum(case when type = 'flagged' then 1 else 0 end) as integer)`.as('flagged'),
        sql<number>`cast(sum(case when type = 'replied' then 1 else 0 end) as integer)`.as('replied'),
        sql<number>`cast(sum(case when type = 'rescued' then 1 else 0 end) as integer)`.as('rescued'),
      ])
      .groupBy(['counterpart_mailbox_id', 'day'])
      .execute();
    const expected = new Map<string, Record<string, number>>();
    const entry = (mailboxId: string | null, day: string) => {
      const key = `${mailboxId} ${day}`;
      const found = expected.get(key) ?? {
        sent: 0,
        received: 0,
        found: 0,
        opened: 0,
        flagged: 0,
        replied: 0,
        rescued: 0,
      };
      expected.set(key, found);
      return found;
    };
    for (const row of own)
      Object.assign(entry(row.mailbox_id, row.day), { sent: Number(row.sent), received: Number(row.received) });
    for (const row of senderSide) {
      Object.assign(entry(row.mailbox_id, row.day), {
        found: Number(row.found),
        opened: Number(row.opened),
        flagged: Number(row.flagged),
        replied: Number(row.replied),
        rescued: Number(row.rescued),
      });
    }
    const rollups = await db.selectFrom('daily_stats').selectAll().execute();
    const actual = new Map<string, Record<string, number>>();
    for (const r of rollups) {
      const counters = {
        sent: r.sent,
        received: r.received,
        found: r.inbox + r.spam + r.promotions + r.other,
        opened: r.opened,
        flagged: r.flagged,
        replied: r.replied,
        rescued: r.rescued,
      };
      // rows that only carry a reputation score count nothing
      if (Object.values(counters).some((v) => Number(v) !== 0))
        actual.set(
          `${r.mailbox_id} ${r.day}`,
          Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, Number(v)])),
        );
    }
    expect(actual).toEqual(expected);
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    for (const user of users)
      mailboxIds.push(await createStackMailbox(testApp.workspace, stack, user, { warmup: WARMUP }));
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it(
    `ramps up for ${DAYS} days exactly as planned, sends everything it planned, and counts each message once`,
    { timeout: 180_000 },
    async () => {
      const started = performance.now();
      const curve: Array<{ day: string; expected: number; planned: number; sent: number; replies: number }> = [];
      for (let index = 0; index < DAYS; index++) {
        const at = dayAt(index);
        const day = addDays(FIRST_DAY, index);
        let summary: CycleSummary;
        if (index === CLI_DAY) {
          const run = await runCli(['--at', at.toISOString(), '--ignore-schedule']);
          expect(run.code, run.stderr).toBe(0);
          summary = JSON.parse(run.stdout) as CycleSummary;
        } else {
          summary = await runInProcess(at, 1000 + index);
        }
        expect(summary.errors, `day ${day}`).toEqual([]);
        expect(summary.at).toBe(at.toISOString());

        let expectedTotal = 0;
        let plannedTotal = 0;
        for (const mailboxId of mailboxIds) {
          // every day so far had sends, so this is warmup day index + 1
          const expected = dailyTarget({ settings: WARMUP, warmupDay: index + 1, mailboxId, day, volumeFactor: 1 });
          expectedTotal += expected;
          const plan = await db
            .selectFrom('mailbox_plans')
            .selectAll()
            .where('mailbox_id', '=', mailboxId)
            .where('day', '=', day)
            .executeTakeFirst();
          expect(plan, `plan of ${mailboxId} on ${day}`).toMatchObject({ warmup_day: index + 1, target: expected });
          // the day's budget holds its replies (yesterday's answers, sent first) and its new threads
          const replies = await repliesOfDay(mailboxId, day);
          expect(plan!.planned + replies, `sends of ${mailboxId} on ${day}`).toBe(expected);
          plannedTotal += plan!.planned;
          const sentThatDay = await count(
            db
              .selectFrom('warmup_messages')
              .select(sql<number>`cast(count(*) as integer)`.as('n'))
              .where('sender_mailbox_id', '=', mailboxId)
              .where('sent_at', '=', at.toISOString())
              .executeTakeFirst(),
          );
          expect(sentThatDay).toBe(expected);
          const initial = await db
            .selectFrom('warmup_messages')
            .select(['status', 'recipient_mailbox_id'])
            .where('sender_mailbox_id', '=', mailboxId)
            .where('plan_day', '=', day)
            .where('kind', '=', 'initial')
            .execute();
          expect(initial.map((r) => r.status)).toEqual(Array(plan!.planned).fill('sent'));
        }
        const initialSent = await count(
          db
            .selectFrom('warmup_messages')
            .select(sql<number>`cast(count(*) as integer)`.as('n'))
            .where('kind', '=', 'initial')
            .where('plan_day', '=', day)
            .where('status', '=', 'sent')
            .executeTakeFirst(),
        );
        const repliesSent = await count(
          db
            .selectFrom('warmup_messages')
            .select(sql<number>`cast(count(*) as integer)`.as('n'))
            .where('kind', '=', 'reply')
            .where('sent_at', '=', at.toISOString())
            .executeTakeFirst(),
        );
        expect(summary.plan?.messages).toBe(plannedTotal);
        curve.push({
          day,
          expected: expectedTotal,
          planned: summary.plan?.messages ?? 0,
          sent: initialSent + repliesSent,
          replies: repliesSent,
        });
      }
      const seconds = (performance.now() - started) / 1000;
      console.info(
        `simulation: ${users.length} mailboxes, dailyLimit ${dailyLimit}, ${DAYS} days in ${seconds.toFixed(1)} s`,
      );
      console.table(curve);

      // the whole ramp went out as planned, replies included; replies flowed
      expect(curve.map((d) => d.sent)).toEqual(curve.map((d) => d.expected));
      expect(curve.reduce((sum, d) => sum + d.replies, 0)).toBeGreaterThan(0);

      // what the API says at the end
      for (const mailboxId of mailboxIds) {
        const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailboxId}` });
        const mailbox = (
          response.json() as {
            mailbox: { status: string; warmupDay: number; reputation: number; lastError: string | null };
          }
        ).mailbox;
        expect(mailbox).toMatchObject({ status: 'active', warmupDay: DAYS, lastError: null });
        // clean peers, all mail found in the inbox
        expect(mailbox.reputation).toBe(100);
      }
      // the peer rules held: another domain (the pool has enough of them), at most
      // PAIR_THREADS_PER_DAY threads of a pair a day, PAIR_SPACING_MS apart
      const pairs = await db
        .selectFrom('warmup_messages as w')
        .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
        .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
        .select([
          'w.sender_mailbox_id',
          'w.recipient_mailbox_id',
          'w.plan_day',
          'w.due_at',
          's.email as sender',
          'r.email as recipient',
        ])
        .where('w.kind', '=', 'initial')
        .execute();
      for (const pair of pairs) {
        expect(pair.sender.split('@')[1]).not.toBe(pair.recipient.split('@')[1]);
        const sameDay = pairs.filter(
          (p) =>
            p.sender_mailbox_id === pair.sender_mailbox_id &&
            p.recipient_mailbox_id === pair.recipient_mailbox_id &&
            p.plan_day === pair.plan_day,
        );
        expect(sameDay.length).toBeLessThanOrEqual(PAIR_THREADS_PER_DAY);
        for (const other of sameDay)
          if (other !== pair)
            expect(Math.abs(Date.parse(other.due_at) - Date.parse(pair.due_at))).toBeGreaterThanOrEqual(
              PAIR_SPACING_MS,
            );
      }
      await expectExactlyOnceCounting();
    },
  );

  it(
    'a run-once killed in the middle of its cycle and run again counts nothing twice',
    { timeout: 120_000 },
    async () => {
      const at = dayAt(DAYS);
      const day = addDays(FIRST_DAY, DAYS);
      const sentBefore = await count(
        db
          .selectFrom('interactions')
          .select(sql<number>`cast(count(*) as integer)`.as('n'))
          .where('type', '=', 'sent')
          .executeTakeFirst(),
      );

      // Kill it as soon as its first send is counted: the sends, the sync and the replies are still ahead.
      let killedMidCycle = false;
      const killed = await runCli(['--at', at.toISOString(), '--ignore-schedule'], (child) => {
        const poll = setInterval(() => {
          void db
            .selectFrom('interactions')
            .select(sql<number>`cast(count(*) as integer)`.as('n'))
            .where('type', '=', 'sent')
            .executeTakeFirst()
            .then((row) => {
              if (Number(row?.n ?? 0) > sentBefore && !killedMidCycle) {
                killedMidCycle = child.kill('SIGKILL');
                clearInterval(poll);
              }
            });
        }, 5);
        child.on('exit', () => clearInterval(poll));
      });
      expect(killed.signal).toBe('SIGKILL');
      expect(killedMidCycle).toBe(true);
      // it never got to print its summary
      expect(killed.stdout).toBe('');
      const dayStatus = async () =>
        (
          await db
            .selectFrom('warmup_messages')
            .select('status')
            .where('kind', '=', 'initial')
            .where('plan_day', '=', day)
            .execute()
        ).map((r) => r.status);
      const atKill = await dayStatus();
      const leftLeases = await db.selectFrom('leases').select('key').execute();
      console.info(
        `killed run-once: ${atKill.filter((s) => s === 'sent').length} of ${atKill.length} of the day's sends done, ${leftLeases.length} leases left behind`,
      );

      // Run again once the dead worker's leases have expired (default lease: 5 minutes).
      const rerunAt = new Date(at.getTime() + 10 * 60_000);
      const rerun = await runCli(['--at', rerunAt.toISOString(), '--ignore-schedule']);
      expect(rerun.code, rerun.stderr).toBe(0);
      const summary = JSON.parse(rerun.stdout) as CycleSummary;
      expect(summary.errors).toEqual([]);
      // the day was planned once, by the killed run; the rerun did the rest of the cycle
      expect(summary.plan?.messages).toBe(0);
      expect(summary.send?.sent).toBeGreaterThanOrEqual(atKill.filter((s) => s !== 'sent').length);
      expect(summary.sync?.received).toBeGreaterThan(0);

      let plannedTotal = 0;
      for (const mailboxId of mailboxIds) {
        const expected = dailyTarget({ settings: WARMUP, warmupDay: DAYS + 1, mailboxId, day, volumeFactor: 1 });
        const plans = await db
          .selectFrom('mailbox_plans')
          .selectAll()
          .where('mailbox_id', '=', mailboxId)
          .where('day', '=', day)
          .execute();
        expect(plans).toHaveLength(1);
        expect(plans[0]).toMatchObject({ warmup_day: DAYS + 1, target: expected });
        expect(plans[0].planned + (await repliesOfDay(mailboxId, day))).toBe(expected);
        plannedTotal += plans[0].planned;
      }
      expect(await dayStatus()).toEqual(Array(plannedTotal).fill('sent'));

      // one more ordinary day finds and answers whatever the two runs sent
      const next = await runInProcess(dayAt(DAYS + 1), 4242);
      expect(next.errors).toEqual([]);
      await expectExactlyOnceCounting();
    },
  );
});
