// The send bounds as the sender applies them: the day's budget, the window, the gap, late shares and recipients' days.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MailboxRow } from '../db/schema.js';
import type { TestDatabase } from '../../test/helpers/test-database.js';
import { at, createSenderWorld, minutes, NOW } from '../../test/helpers/sender-world.js';
import {
  type FakeSmtp,
  insertMailbox,
  insertMessage,
  messageRowOf,
  insertPlan,
  mailWorkDeps,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import {
  MIN_SEND_GAP_MS,
  REASON_LATE_SHARE,
  REASON_NO_ROOM,
  REASON_OTHER_RECIPIENT_DAY,
  REASON_RECIPIENT_AWAY,
  REASON_REPLY_FIRST,
} from './send-budget.js';
import { sendDueMessages } from './sender.js';
import { REASON_PAIR_SPACING } from './pair-spacing.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';

let database: TestDatabase;
let smtp: FakeSmtp;
let deps: FixtureDeps;
let erin: MailboxRow;
let frank: MailboxRow;
let grace: MailboxRow;

beforeEach(async () => {
  ({ database, smtp, deps, erin, frank, grace } = await createSenderWorld());
});

afterEach(async () => {
  await database.close();
});

const messageRow = (id: string) => messageRowOf(database, id);

describe('send bounds at the sender', () => {
  async function replyTo(sender: MailboxRow, recipient: MailboxRow, dueAt: Date) {
    const parent = await insertMessage(database.db, {
      sender: recipient,
      recipient: sender,
      dueAt: at(-minutes(300)),
      status: 'sent',
      sentAt: at(-minutes(300)),
      subject: 'Hello',
      body: 'Hi',
    });
    return insertMessage(database.db, { sender, recipient, dueAt, parent });
  }

  /** Runs the sender every two minutes in [from, to); the time of each send. */
  async function sendEveryTwoMinutes(from: Date, to: Date): Promise<number[]> {
    const times: number[] = [];
    for (let t = from.getTime(); t < to.getTime(); t += minutes(2)) {
      const before = smtp.sent.length;
      await sendDueMessages(deps, { now: new Date(t), ignoreSchedule: false });
      for (let i = before; i < smtp.sent.length; i += 1) times.push(t);
    }
    return times;
  }

  /** Why each of the sender's closed rows was not sent. */
  async function closedReasons(sender: MailboxRow): Promise<Array<string | null>> {
    const closed = await database.db
      .selectFrom('warmup_messages')
      .select('last_error')
      .where('sender_mailbox_id', '=', sender.id)
      .where('status', '=', 'expired')
      .execute();
    return closed.map((row) => row.last_error);
  }

  it('never sends more than the day’s budget, replies first', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 2);
    const threads = [];
    for (let i = 0; i < 3; i += 1)
      threads.push(await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(10 * i)) }));
    const reply = await replyTo(erin, grace, at(minutes(1)));
    for (let t = 0; t <= 60; t += 2) await sendDueMessages(deps, { now: at(minutes(t)), ignoreSchedule: false });
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([threads[0].message_id, reply.message_id]);
    const rest = await Promise.all(threads.slice(1).map((r) => messageRow(r.id)));
    // the day had room for one more: the threads planned for later gave way to the reply
    expect(rest.map((r) => [r.status, r.last_error])).toEqual([
      ['expired', REASON_REPLY_FIRST],
      ['expired', REASON_REPLY_FIRST],
    ]);
  });

  it('a new thread sent late keeps 90 minutes from the pair’s last one; where that leaves the window it is not sent', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 4);
    // the pair's first thread of the day left at 10:00; the next one is due at 10:30, held late behind other mail
    await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: NOW, status: 'sent', sentAt: NOW });
    const next = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(30)) });
    const toGrace = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(minutes(30)) });
    await sendEveryTwoMinutes(at(minutes(30)), at(minutes(40)));
    // another colleague is not held; frank's waits until 11:30
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([toGrace.message_id]);
    expect(await messageRow(next.id)).toMatchObject({ status: 'planned', due_at: at(minutes(90)).toISOString() });
    await sendEveryTwoMinutes(at(minutes(90)), at(minutes(92)));
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([toGrace.message_id, next.message_id]);

    // a thread due at 17:00, 15 minutes after the pair's last: 90 minutes later is past the 18:00 window end
    const evening = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(minutes(420)) });
    await database.db
      .updateTable('warmup_messages')
      .set({ sent_at: at(minutes(405)).toISOString() })
      .where('id', '=', toGrace.id)
      .execute();
    await sendEveryTwoMinutes(at(minutes(420)), at(minutes(424)));
    expect(smtp.sent).toHaveLength(2);
    expect(await messageRow(evening.id)).toMatchObject({ status: 'expired', last_error: REASON_PAIR_SPACING });
  });

  it('sends nothing on a day without a plan; a reply waits for the next window', async () => {
    const day = '2026-03-14'; // a Saturday
    const saturday = new Date(`${day}T10:00:00Z`);
    const weekdays = await insertMailbox(database.db, erin.workspace_id, {
      email: 'wes@whiskey.test',
      warmup: { weekdaysOnly: true, sendWindow: { start: '09:00', end: '17:00' } },
    });
    const reply = await replyTo(weekdays, frank, saturday);
    const summary = await sendDueMessages(deps, { now: saturday, ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, deferred: 1 });
    expect(await messageRow(reply.id)).toMatchObject({
      status: 'planned',
      plan_day: '2026-03-16',
      due_at: '2026-03-16T09:00:00.000Z',
    });
  });

  it('sends nothing to a recipient that answers automatically: mail planned before it was noticed is closed', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 3);
    await database.db
      .updateTable('mailboxes')
      .set({ auto_reply_at: at(-minutes(60)).toISOString() })
      .where('id', '=', frank.id)
      .execute();
    const toFrank = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: NOW });
    const replyToFrank = await replyTo(erin, frank, NOW);
    const toGrace = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: NOW });
    for (let t = 0; t <= 10; t += 2) await sendDueMessages(deps, { now: at(minutes(t)), ignoreSchedule: false });
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([toGrace.message_id]);
    for (const row of [toFrank, replyToFrank])
      expect(await messageRow(row.id)).toMatchObject({ status: 'expired', last_error: REASON_RECIPIENT_AWAY });
  });

  it('sends nothing outside the window; a new thread due after it is closed with its reason', async () => {
    const evening = new Date('2026-03-12T18:30:00Z');
    const thread = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(500)) });
    const summary = await sendDueMessages(deps, { now: evening, ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, dropped: 1 });
    expect(await messageRow(thread.id)).toMatchObject({ status: 'expired', last_error: REASON_NO_ROOM });
  });

  it('two workers at once never send for one mailbox within the gap', async () => {
    // one new thread per pair and then replies: a pair's next thread would wait 90 minutes (the pair
    // spacing), while the gap binds every send of a mailbox
    for (let i = 0; i < 12; i += 1) {
      const sender = [erin, frank, grace][i % 3];
      const recipient = [frank, grace, erin][i % 3];
      const dueAt = at(-minutes(i % 5));
      if (i < 3) await insertMessage(database.db, { sender, recipient, dueAt });
      else await replyTo(sender, recipient, dueAt);
    }
    const one = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-one' });
    const two = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-two' });
    const sentAt: Array<{ from: string; t: number }> = [];
    for (let t = 0; t <= 60; t += 1) {
      const before = smtp.sent.length;
      await Promise.all([
        sendDueMessages(one, { now: at(minutes(t)), ignoreSchedule: false }),
        sendDueMessages(two, { now: at(minutes(t)), ignoreSchedule: false }),
      ]);
      for (const sent of smtp.sent.slice(before)) sentAt.push({ from: sent.mail.from.address, t: minutes(t) });
    }
    expect(sentAt).toHaveLength(12);
    for (const address of new Set(sentAt.map((s) => s.from))) {
      const times = sentAt.filter((s) => s.from === address).map((s) => s.t);
      for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
    }
  });

  it('a mailbox back late in its planned day (paused since before its window) sends only the late share', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 8);
    const hour = (h: number) => new Date(`2026-03-12T${String(h).padStart(2, '0')}:00:00Z`);
    for (let h = 9; h <= 16; h += 1)
      await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: hour(h) });
    // back at 13:00: half of the 08:00–18:00 window is left, so half of the 8
    const times = await sendEveryTwoMinutes(hour(13), hour(18));
    expect(times.length).toBeLessThanOrEqual(4);
    expect(times.length).toBeGreaterThan(0);
    for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
    const closed = await closedReasons(erin);
    expect(closed.length).toBe(8 - times.length);
    for (const reason of closed) expect(reason).toMatch(/^not sent: /);
  });

  it('a mailbox proven a minute ago keeps the gap after its round trip’s check message', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ proven_at: at(-minutes(1)).toISOString() })
      .where('id', '=', erin.id)
      .execute();
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: NOW });
    expect(await sendDueMessages(deps, { now: NOW, ignoreSchedule: false })).toMatchObject({ sent: 0, deferred: 1 });
    expect(await messageRow(row.id)).toMatchObject({
      status: 'planned',
      due_at: at(MIN_SEND_GAP_MS - minutes(1)).toISOString(),
    });
    expect(await sendDueMessages(deps, { now: at(MIN_SEND_GAP_MS - minutes(1)), ignoreSchedule: false })).toMatchObject(
      { sent: 1 },
    );
  });

  it('a mailbox resumed inside its window sends only the late share, though nothing fell due while it was paused', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 8);
    const time = (hhmm: string) => new Date(`2026-03-12T${hhmm}:00Z`);
    await applyMailboxEvent(database.db, erin.id, { type: 'paused' }, { at: time('07:30') });
    // all eight due after the resume at 13:00, half an hour apart: none is overdue
    for (let i = 0; i < 8; i += 1)
      await insertMessage(database.db, {
        sender: erin,
        recipient: frank,
        dueAt: new Date(time('13:05').getTime() + minutes(30 * i)),
      });
    await applyMailboxEvent(database.db, erin.id, { type: 'resumed', at: time('13:00') }, { at: time('13:00') });
    // half of the 08:00–18:00 window is left, so half of the 8
    const times = await sendEveryTwoMinutes(time('13:00'), time('18:00'));
    expect(times.length).toBe(4);
    const closed = await closedReasons(erin);
    expect(closed).toHaveLength(4);
    expect(closed).toContain(REASON_LATE_SHARE);
    for (const reason of closed) expect(reason).toMatch(/^not sent: /);
  });

  it('a new thread due before its recipient’s midnight does not leave after it (it would count on the next day)', async () => {
    const night = await insertMailbox(database.db, erin.workspace_id, {
      email: 'nia@november.test',
      warmup: { sendWindow: { start: '00:00', end: '23:59' } },
    });
    await insertPlan(database.db, night, '2026-03-12', 5);
    // 22:58 UTC is 23:58 in Berlin; at 23:00:30 UTC Grace's next day has begun
    const thread = await insertMessage(database.db, {
      sender: night,
      recipient: grace,
      dueAt: new Date('2026-03-12T22:58:00Z'),
    });
    const summary = await sendDueMessages(deps, { now: new Date('2026-03-12T23:00:30Z'), ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, dropped: 1 });
    expect(await messageRow(thread.id)).toMatchObject({ status: 'expired', last_error: REASON_OTHER_RECIPIENT_DAY });
  });
});
