// People differ, on the real mail stack (Postfix + Dovecot, Sieve filing a junk sender's mail into
// Junk): each mailbox takes its steps on a message — rescue, open, reply, file — at its own
// separate delays, in separate engine cycles, only in waking hours; a worker that dies between
// cycles leaves the next one to carry on the same plan, each step taken once; and the third turn
// of a thread is written from a `followup` template. And the benchmarks' `rescueOnly` reader takes
// the rescue and the filing, nothing else.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays, localDay } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database, WarmupMessageRow } from '../../src/db/schema.js';
import type { EngineDeps } from '../../src/engine/engine-deps.js';
import { isWakingHours } from '../../src/engine/habits.js';
import { newMessageId } from '../../src/engine/planner.js';
import { syncMailboxes, type SyncSummary } from '../../src/engine/reader.js';
import { sendDueMessages } from '../../src/engine/sender.js';
import { openImapSession, WARMUP_FOLDER, type FoundMessage } from '../../src/mail/imap.js';
import { createStackMailbox, proveAll, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../mailstack/users.js';

const [pia, rex, sly] = MAIL_USERS.people;
const minutes = (n: number) => n * 60_000;
const STEP = minutes(2);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fixed-offset zone in which `at` is 08:00, so a whole waking day lies ahead of the test. From
 * 21:00 UTC on that zone is east of UTC, on the next date: the engine keeps each mailbox's own day.
 */
function morningZone(at: Date): string {
  let offset = 8 - at.getUTCHours();
  if (offset < -12) offset += 24;
  return offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

describeWithMailStack('people differ, on the real mail stack', () => {
  const stack = requireMailStack();
  // Business time starts at real time: delivery and IMAP dates are the server's.
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const timezone = morningZone(start);
  const clock = fixedClock(start);
  let testApp: TestApp;
  let db: Kysely<Database>;
  const ids = new Map<string, string>(); // email → mailbox id

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    for (const user of [pia, rex, sly]) {
      const id = await createStackMailbox(testApp.workspace, stack, user, {
        warmup: { replyRate: 100, timezone, sendWindow: { start: '07:00', end: '22:00' } },
      });
      ids.set(user.email, id);
    }
    // their round trips are the pool's business (tested there): here they count as proven
    await proveAll(db);
    // the planner's business too: each may send 5 a day, today and tomorrow (the threads need 2 each)
    const today = localDay(start, timezone);
    for (const id of ids.values()) {
      for (const day of [today, addDays(today, 1)]) {
        await db
          .insertInto('mailbox_plans')
          .values({ mailbox_id: id, day, warmup_day: 1, target: 5, planned: 0, created_at: start.toISOString() })
          .execute();
      }
    }
  });

  afterAll(async () => {
    await testApp?.close();
  });

  function worker(name: string): EngineDeps {
    // random() = 0.25 for every choice and delay: each mailbox opens, answers a first message and a
    // reply (0.25 is below 100 % × its factor, and below 35 % of that), never flags (flagging is
    // below 12 %), never answers a third turn; every delay is a quarter-quantile of its own.
    return { ...testEngineDeps(testApp, { workerId: name }), random: () => 0.25 };
  }

  async function insertInitial(from: MailUser, to: MailUser, at: Date): Promise<string> {
    const messageId = newMessageId(from.email);
    await db
      .insertInto('warmup_messages')
      .values({
        id: `msg_people_${from.email.split('@')[0]}`,
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: ids.get(from.email)!,
        recipient_mailbox_id: ids.get(to.email)!,
        kind: 'initial',
        turn: 1,
        plan_day: localDay(at, timezone), // the sender's own day, as the planner writes it
        due_at: at.toISOString(),
        status: 'planned',
        created_at: at.toISOString(),
      })
      .execute();
    return messageId;
  }

  async function row(messageId: string): Promise<WarmupMessageRow> {
    return db.selectFrom('warmup_messages').selectAll().where('message_id', '=', messageId).executeTakeFirstOrThrow();
  }

  async function locate(user: MailUser, messageId: string): Promise<FoundMessage | undefined> {
    const session = await openImapSession(mailServerConfigs(stack, user).imap, { timeoutMs: 10_000 });
    try {
      const [found] = await session.findMessages([messageId], { includeFolders: [WARMUP_FOLDER] });
      return found;
    } finally {
      await session.close();
    }
  }

  async function stepTimes(mailboxId: string, messageId: string): Promise<Map<string, number>> {
    const rows = await db
      .selectFrom('interactions')
      .select(['type', 'occurred_at'])
      .where('mailbox_id', '=', mailboxId)
      .where('message_id', '=', messageId)
      .execute();
    return new Map(rows.map((r) => [r.type, Date.parse(r.occurred_at)]));
  }

  it(
    'takes each step at its own time, in separate cycles, exactly once across a crash, and follows up on turn 3',
    { timeout: 240_000 },
    async () => {
      const toRex = await insertInitial(pia, rex, start);
      const toPia = await insertInitial(sly, pia, start);
      let deps = worker('worker-a');
      const cycles: Array<{ at: number; sync: SyncSummary; rexRead: boolean }> = [];
      let crashed = false;
      let crashedAt = 0;
      let seenBeforeFiling: FoundMessage | undefined;
      let rescuedBeforeOpening: FoundMessage | undefined;

      const threadDone = async () => {
        const third = await db
          .selectFrom('warmup_messages')
          .selectAll()
          .where('thread_id', '=', toRex)
          .where('turn', '=', 3)
          .executeTakeFirst();
        // Rex files Pia's first message at a time of his own, which can come after the third turn arrives
        return (
          third?.found_at != null && (await row(toPia)).engaged_at !== null && (await row(toRex)).engaged_at !== null
        );
      };

      while (!(await threadDone())) {
        const now = new Date(clock.now().getTime() + STEP);
        expect(now.getTime() - start.getTime(), 'the threads end within a waking day').toBeLessThan(minutes(20 * 60));
        clock.set(now);
        await sendDueMessages(deps, { now, ignoreSchedule: false });
        await sleep(100); // Postfix hands mail to Dovecot asynchronously
        const sync = await syncMailboxes(deps, { now, ignoreSchedule: false });
        const rexRead = await db
          .selectFrom('mailboxes')
          .select('last_sync_at')
          .where('id', '=', ids.get(rex.email)!)
          .executeTakeFirstOrThrow();
        cycles.push({ at: now.getTime(), sync, rexRead: rexRead.last_sync_at === now.toISOString() });

        // Between the steps, the server shows a person's pace: read but not yet filed; rescued but not yet read.
        const rexOpened = (await stepTimes(ids.get(rex.email)!, toRex)).has('opened');
        if (!seenBeforeFiling && rexOpened && (await row(toRex)).engaged_at === null)
          seenBeforeFiling = await locate(rex, toRex);
        const piaRow = await row(toPia);
        if (!rescuedBeforeOpening && piaRow.rescued_at !== null && piaRow.engaged_at === null) {
          const opened = (await stepTimes(ids.get(pia.email)!, toPia)).has('opened');
          if (!opened) rescuedBeforeOpening = await locate(pia, toPia);
        }

        // Worker A dies in the middle of Rex's sync, after his first step, holding its claim on him.
        if (!crashed && rexOpened) {
          crashed = true;
          const claimedUntil = new Date(now.getTime() + deps.settings.leaseMs).toISOString();
          await db
            .updateTable('mailboxes')
            .set({ sync_owner: 'worker-a', sync_claimed_until: claimedUntil, sync_due_at: claimedUntil })
            .where('id', '=', ids.get(rex.email)!)
            .execute();
          crashedAt = now.getTime();
          deps = worker('worker-b');
        }
      }
      expect(crashed).toBe(true);
      // the next worker left Rex alone while the dead one's claim ran, then carried on
      const leaseEnd = crashedAt + deps.settings.leaseMs;
      expect(cycles.filter((c) => c.at > crashedAt && c.at < leaseEnd && c.rexRead)).toEqual([]);
      expect(cycles.some((c) => c.at >= leaseEnd && c.rexRead)).toBe(true);

      // Rex on Pia's first message: found, opened, answered and filed at separate times, in separate
      // cycles, each in waking hours.
      const rexId = ids.get(rex.email)!;
      const first = await row(toRex);
      const rexSteps = await stepTimes(rexId, toRex);
      const found = Date.parse(first.found_at!);
      const opened = rexSteps.get('opened')!;
      const replied = rexSteps.get('replied')!;
      const filed = Date.parse(first.engaged_at!);
      expect(rexSteps.has('flagged')).toBe(false);
      expect(found).toBeLessThan(opened);
      expect(opened).toBeLessThan(replied);
      expect(replied).toBeLessThanOrEqual(filed);
      expect(cycles.filter((c) => c.at === opened || c.at === replied).length).toBe(2);
      for (const at of [found, opened, replied, filed]) expect(isWakingHours(new Date(at), timezone)).toBe(true);
      // The planned times, kept with the message, are when it happened (at the first cycle from then on),
      // the crash's lease wait aside.
      expect(opened).toBeGreaterThanOrEqual(Date.parse(first.open_due_at!));
      expect(replied).toBeGreaterThanOrEqual(Date.parse(first.reply_due_at!));
      expect(filed).toBeGreaterThanOrEqual(Date.parse(first.file_due_at!));
      // Read before it was filed, on the server itself.
      expect(seenBeforeFiling).toMatchObject({ folder: 'INBOX', seen: true, flagged: false });
      expect(await locate(rex, toRex)).toMatchObject({ folder: WARMUP_FOLDER, seen: true, flagged: false });

      // Pia on the junk sender's message: out of spam first, read later, filed last.
      const piaId = ids.get(pia.email)!;
      const fromJunk = await row(toPia);
      expect(fromJunk.placement).toBe('spam');
      const piaSteps = await stepTimes(piaId, toPia);
      expect(piaSteps.get('rescued')!).toBeLessThan(piaSteps.get('opened')!);
      expect(piaSteps.get('opened')!).toBeLessThan(Date.parse(fromJunk.engaged_at!));
      expect(rescuedBeforeOpening).toMatchObject({ folder: 'INBOX', seen: false });
      expect(await locate(pia, toPia)).toMatchObject({ folder: WARMUP_FOLDER, seen: true });

      // Exactly once, across the crash: one interaction of a type per message, one reply per
      // message answered, and the rollups equal the interactions.
      const interactions = await db
        .selectFrom('interactions')
        .select(['mailbox_id', 'message_id', 'type', sql<number>`cast(count(*) as integer)`.as('n')])
        .groupBy(['mailbox_id', 'message_id', 'type'])
        .execute();
      expect(interactions.filter((i) => Number(i.n) !== 1)).toEqual([]);
      const replies = await db.selectFrom('warmup_messages').selectAll().where('kind', '=', 'reply').execute();
      const answered = interactions.filter((i) => i.type === 'replied').map((i) => i.message_id);
      expect(replies.map((r) => r.parent_message_id).sort()).toEqual([...answered].sort());
      const rollups = await db
        .selectFrom('daily_stats')
        .select([
          sql<number>`cast(sum(opened) as integer)`.as('opened'),
          sql<number>`cast(sum(replied) as integer)`.as('replied'),
        ])
        .executeTakeFirstOrThrow();
      expect(Number(rollups.opened)).toBe(interactions.filter((i) => i.type === 'opened').length);
      expect(Number(rollups.replied)).toBe(answered.length);

      // The thread's third turn, Pia's answer to Rex's reply, is a follow-up, in the thread; the
      // conversation generator wrote all three (no template: the workspace has none of its own).
      const thread = await db
        .selectFrom('warmup_messages as w')
        .leftJoin('templates as t', 't.id', 'w.template_id')
        .select(['w.turn', 'w.message_id', 'w.parent_message_id', 'w.sender_mailbox_id', 't.type as template_type'])
        .where('w.thread_id', '=', toRex)
        .orderBy('w.turn')
        .execute();
      expect(thread.map((m) => [m.turn, m.sender_mailbox_id, m.template_type])).toEqual([
        [1, piaId, null],
        [2, rexId, null],
        [3, piaId, null],
      ]);
      const followup = await locate(rex, thread[2].message_id);
      expect(followup?.inReplyTo).toBe(thread[1].message_id);
      // the answer's prefix is its client's (Outlook writes RE:, or AW: in German), written once
      expect(followup?.subject).toMatch(/^(Re|RE|AW): /);
      expect(followup?.subject).not.toMatch(/^(Re|RE|AW): (Re|RE|AW):/i);
    },
  );
});

// The benchmarks' `rescueOnly` (bench/effectiveness.bench.ts measures what a rescue alone teaches a
// filter): the same habits that open and answer above take the rescue and the filing, nothing else.
describeWithMailStack('a reader that only rescues (the benchmarks’ rescueOnly), on the real mail stack', () => {
  const stack = requireMailStack();
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clock = fixedClock(start);
  const today = localDay(start, 'UTC');
  let testApp: TestApp;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    for (const user of [pia, sly]) {
      const id = await createStackMailbox(testApp.workspace, stack, user, {
        warmup: { replyRate: 100, timezone: 'UTC', sendWindow: { start: '00:00', end: '23:59' } },
      });
      ids.set(user.email, id);
      await testApp.database.db
        .insertInto('mailbox_plans')
        .values({ mailbox_id: id, day: today, warmup_day: 1, target: 5, planned: 0, created_at: start.toISOString() })
        .execute();
    }
    await proveAll(testApp.database.db);
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it('moves the junk sender’s message out of spam and files it unread, unflagged and unanswered', async () => {
    const db = testApp.database.db;
    const messageId = newMessageId(sly.email);
    await db
      .insertInto('warmup_messages')
      .values({
        id: 'msg_rescue_only',
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: ids.get(sly.email)!,
        recipient_mailbox_id: ids.get(pia.email)!,
        kind: 'initial',
        turn: 1,
        plan_day: today,
        due_at: start.toISOString(),
        status: 'planned',
        created_at: start.toISOString(),
      })
      .execute();
    // random() = 0.25: without rescueOnly Pia would open and answer it (see the test above)
    const deps: EngineDeps = { ...testEngineDeps(testApp), random: () => 0.25, rescueOnly: true };
    await sendDueMessages(deps, { now: start, ignoreSchedule: true });
    const row = () => db.selectFrom('warmup_messages').selectAll().where('id', '=', 'msg_rescue_only');
    for (let attempt = 0; attempt < 40 && (await row().executeTakeFirstOrThrow()).engaged_at === null; attempt += 1) {
      await sleep(250); // Postfix hands mail to Dovecot asynchronously
      await syncMailboxes(deps, { now: start, ignoreSchedule: true });
    }
    const message = await row().executeTakeFirstOrThrow();
    expect(message).toMatchObject({ placement: 'spam', rescued_at: start.toISOString() });
    expect(message.engaged_at).not.toBeNull();
    const steps = await db.selectFrom('interactions').select('type').where('message_id', '=', messageId).execute();
    // the reader's steps (the send and the delivery are recorded too)
    const taken = steps.map((s) => s.type).filter((type) => ['rescued', 'opened', 'flagged', 'replied'].includes(type));
    expect(taken).toEqual(['rescued']);
    expect(await db.selectFrom('warmup_messages').select('id').where('kind', '=', 'reply').execute()).toEqual([]);
    const session = await openImapSession(mailServerConfigs(stack, pia).imap, { timeoutMs: 10_000 });
    try {
      const [filed] = await session.findMessages([messageId], { includeFolders: [WARMUP_FOLDER] });
      expect(filed).toMatchObject({ folder: WARMUP_FOLDER, seen: false, flagged: false });
    } finally {
      await session.close();
    }
  });
});
