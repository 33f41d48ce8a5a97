import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MailboxRow } from '../db/schema.js';
import type { TestDatabase } from '../../test/helpers/test-database.js';
import {
  always,
  at,
  createReaderWorld,
  hours,
  mailboxRowOf,
  minutes,
  NOW,
  sentToFrankIn,
} from '../../test/helpers/reader-world.js';
import {
  type FakeImap,
  insertMessage,
  insertPlan,
  messageRowOf,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { clientProfileOf, messageIdHost } from './client-profile.js';
import { DUE_AT_ONCE } from '../db/migrations/023-work-claims.js';
import { replyMessageIdFor } from './message-content.js';
import { MAX_TURNS, replyProbability } from './habits.js';
import { seededRandom } from './random.js';
import { SYNC_INTERVAL_MS, syncMailboxes } from './reader.js';
import { REASON_REPLY_FIRST } from './send-budget.js';

let database: TestDatabase;
let imap: FakeImap;
let deps: FixtureDeps;
let erin: MailboxRow;
let frank: MailboxRow;

beforeEach(async () => {
  ({ database, imap, deps, erin, frank } = await createReaderWorld());
});

afterEach(async () => {
  await database.close();
});

const sentToFrank = (folder: 'INBOX' | 'Junk' | null, fixture: Partial<Parameters<typeof insertMessage>[1]> = {}) =>
  sentToFrankIn({ database, imap, deps, erin, frank }, folder, fixture);
const messageRow = (id: string) => messageRowOf(database, id);
const mailbox = (id: string) => mailboxRowOf(database, id);

async function interactionTypes(messageId: string, mailboxId = frank.id): Promise<string[]> {
  const rows = await database.db
    .selectFrom('interactions')
    .select('type')
    .where('message_id', '=', messageId)
    .where('mailbox_id', '=', mailboxId)
    .orderBy('type')
    .execute();
  return rows.map((r) => r.type);
}

async function daily(mailboxId: string) {
  return database.db.selectFrom('daily_stats').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
}

describe('syncMailboxes', () => {
  it('finds mail by Message-ID, records where it landed, and acts later like a person, one step at a time', async () => {
    const row = await sentToFrank('INBOX');
    // random() = 0.5: every delay is Frank's own median (open 15 min–4 h after finding, reply
    // 20 min–4 h after opening, file 5 min–2 h after that); he opens and answers, he does not flag
    deps.random = () => 0.5;
    let frankLogins = 0;
    deps.imap = async (config) => {
      if (config.username === 'frank@foxtrot.test') frankLogins += 1;
      return imap.factory(config);
    };

    const first = await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });

    expect(first).toMatchObject({ synced: 2, received: 1, opened: 0, filed: 0 });
    const found = await messageRow(row.id);
    expect(found).toMatchObject({
      found_at: NOW.toISOString(),
      placement: 'inbox',
      engaged_at: null,
      rescue_due_at: null,
      flag_due_at: null,
    });
    const openAt = Date.parse(found.open_due_at!);
    const replyAt = Date.parse(found.reply_due_at!);
    const fileAt = Date.parse(found.file_due_at!);
    expect(found.engage_after).toBe(found.open_due_at);
    expect(openAt - NOW.getTime()).toBeGreaterThanOrEqual(minutes(15));
    expect(replyAt - openAt).toBeGreaterThanOrEqual(minutes(20));
    expect(fileAt - replyAt).toBeGreaterThanOrEqual(minutes(5));
    expect(await interactionTypes(row.message_id)).toEqual(['received']);
    expect(await daily(frank.id)).toMatchObject({ received: 1 });
    expect(await daily(erin.id)).toMatchObject({ inbox: 1 });
    expect((await mailbox(frank.id)).last_sync_at).toBe(NOW.toISOString());

    // the engine syncs Frank every few minutes; he acts on the message in three of those syncs
    const acted: Array<{ at: number; opened: number; replied: number; filed: number }> = [];
    let syncs = 0;
    for (
      let t = NOW.getTime() + SYNC_INTERVAL_MS;
      (await messageRow(row.id)).engaged_at === null;
      t += SYNC_INTERVAL_MS
    ) {
      expect(t - NOW.getTime()).toBeLessThan(hours(12));
      syncs += 1;
      const summary = await syncMailboxes(deps, { now: new Date(t), ignoreSchedule: false });
      if (summary.opened + summary.replied + summary.filed > 0) acted.push({ at: t, ...summary });
    }
    const firstSyncFrom = (due: number) =>
      NOW.getTime() + Math.ceil((due - NOW.getTime()) / SYNC_INTERVAL_MS) * SYNC_INTERVAL_MS;
    expect(acted.map(({ at, opened, replied, filed }) => ({ at, opened, replied, filed }))).toEqual([
      { at: firstSyncFrom(openAt), opened: 1, replied: 0, filed: 0 },
      { at: firstSyncFrom(replyAt), opened: 0, replied: 1, filed: 0 },
      { at: firstSyncFrom(fileAt), opened: 0, replied: 0, filed: 1 },
    ]);
    // one login to find it, one per step: the syncs in between had nothing due and logged in nowhere
    expect(syncs).toBeGreaterThan(10);
    expect(frankLogins).toBe(4);

    expect(await interactionTypes(row.message_id)).toEqual(['opened', 'received', 'replied']);
    const stored = imap.account('frank@foxtrot.test').locate(row.message_id);
    expect(stored).toMatchObject({ folder: 'Warmup', message: { seen: true, flagged: false } });
    // the reply is wanted once its delay is over
    const reply = await database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('parent_message_id', '=', row.message_id)
      .executeTakeFirstOrThrow();
    expect(reply.due_at).toBe(new Date(firstSyncFrom(replyAt)).toISOString());
    // engagement counts for the sender
    expect(await daily(erin.id)).toMatchObject({ inbox: 1, opened: 1, replied: 1 });
  });

  it('takes each step exactly once across a crash and a restart: the plan is kept with the message', async () => {
    const row = await sentToFrank('Junk');
    deps.random = seededRandom(11);
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    const planned = await messageRow(row.id);
    expect(planned.rescue_due_at).not.toBeNull();
    const steps = [
      planned.rescue_due_at,
      planned.open_due_at,
      planned.flag_due_at,
      planned.reply_due_at,
      planned.file_due_at,
    ].filter((due) => due !== null);
    expect(new Set(steps).size).toBe(steps.length);

    // the rescue went through on the server, then the worker died before counting it
    const account = imap.account('frank@foxtrot.test');
    const moved = account.take('Junk', account.locate(row.message_id)!.message.uid);
    account.folder('INBOX').messages.push({ ...moved, uid: account.newUid() });

    // another worker, other random numbers: the same plan, each step taken once
    deps.random = seededRandom(999);
    let t = NOW.getTime();
    while ((await messageRow(row.id)).engaged_at === null) {
      t += SYNC_INTERVAL_MS;
      expect(t - NOW.getTime()).toBeLessThan(hours(72));
      await syncMailboxes(deps, { now: new Date(t), ignoreSchedule: false });
    }
    // and a sync that died after filing, before noting it, is repeated without a second count
    await database.db.updateTable('warmup_messages').set({ engaged_at: null }).where('id', '=', row.id).execute();
    // (its claim ran out: due again)
    await database.db.updateTable('mailboxes').set({ next_sync_at: null, sync_due_at: DUE_AT_ONCE }).execute();
    const again = await syncMailboxes(deps, { now: new Date(t + 1_000), ignoreSchedule: false });
    expect(again).toMatchObject({ rescued: 0, opened: 0, flagged: 0, replied: 0, filed: 0 });
    const types = await interactionTypes(row.message_id);
    expect(types).toContain('rescued');
    expect(types).toEqual([...new Set(types)]);
    expect(types.includes('opened')).toBe(planned.open_due_at !== null);
    expect(types.includes('flagged')).toBe(planned.flag_due_at !== null);
    expect(types.includes('replied')).toBe(planned.reply_due_at !== null);
    expect(await daily(erin.id)).toMatchObject({ spam: 1, rescued: 1 });
    expect(Date.parse((await messageRow(row.id)).engaged_at!)).toBeGreaterThan(Date.parse(planned.file_due_at!));
    expect(account.locate(row.message_id)?.folder).toBe('Warmup');
  });

  it('acts only in waking hours: mail found late at night waits for the morning', async () => {
    const late = new Date('2026-03-12T21:59:00Z'); // Frank's zone is UTC
    const row = await sentToFrank('INBOX');
    deps.random = always;
    await syncMailboxes(deps, { now: late, ignoreSchedule: false });
    const morning = '2026-03-13T07:00:00.000Z';
    expect(await messageRow(row.id)).toMatchObject({ engage_after: morning, open_due_at: morning });
    // Frank is not logged in at night (Erin may be: the hourly look for answers to her mail)
    const logins = imap.logins.get('frank@foxtrot.test');
    expect((await syncMailboxes(deps, { now: new Date('2026-03-13T03:00:00Z'), ignoreSchedule: false })).opened).toBe(
      0,
    );
    expect(imap.logins.get('frank@foxtrot.test')).toBe(logins);
    expect((await syncMailboxes(deps, { now: new Date(morning), ignoreSchedule: false })).opened).toBe(1);
  });

  it('a step that fell due during downtime waits for the morning when the sync comes back at night', async () => {
    const row = await sentToFrank('INBOX');
    deps.random = always;
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    const night = new Date('2026-03-12T23:30:00Z');
    expect(await syncMailboxes(deps, { now: night, ignoreSchedule: false })).toMatchObject({ opened: 0 });
    const waits = Date.parse((await messageRow(row.id)).engage_after!);
    expect(waits).toBeGreaterThanOrEqual(Date.parse('2026-03-13T07:00:00Z'));
    expect(waits).toBeLessThanOrEqual(Date.parse('2026-03-13T08:00:00Z'));
    // every step is overdue by then; still one per sync, not all in one second
    const taken: string[] = [];
    for (let t = waits; taken.length < 4; t += SYNC_INTERVAL_MS) {
      expect(t - waits).toBeLessThan(hours(1));
      const summary = await syncMailboxes(deps, { now: new Date(t), ignoreSchedule: false });
      const step = (['opened', 'flagged', 'replied', 'filed'] as const).filter((type) => summary[type] > 0);
      expect(step.length).toBeLessThanOrEqual(1);
      taken.push(...step);
    }
    expect(taken).toEqual(['opened', 'flagged', 'replied', 'filed']);
  });

  it('after hours of downtime in the day, each message still takes one step per sync', async () => {
    const rows = [await sentToFrank('INBOX'), await sentToFrank('INBOX')];
    deps.random = always;
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    // the engine was down for five hours of Frank's day: every step of both messages is overdue
    let t = NOW.getTime() + hours(5);
    const perSync: number[] = [];
    while ((await Promise.all(rows.map((row) => messageRow(row.id)))).some((row) => row.engaged_at === null)) {
      expect(t - NOW.getTime()).toBeLessThan(hours(6));
      const summary = await syncMailboxes(deps, { now: new Date(t), ignoreSchedule: false });
      perSync.push(summary.opened + summary.flagged + summary.replied + summary.filed);
      t += SYNC_INTERVAL_MS;
    }
    // open, flag, answer, file: four syncs, one step of each message in each
    expect(perSync).toEqual([2, 2, 2, 2]);
    for (const row of rows) {
      const steps = await database.db
        .selectFrom('interactions')
        .select(['type', 'occurred_at'])
        .where('message_id', '=', row.message_id)
        .where('mailbox_id', '=', frank.id)
        .where('type', 'in', ['opened', 'flagged', 'replied'])
        .orderBy('occurred_at')
        .execute();
      expect(steps.map((step) => step.type)).toEqual(['opened', 'flagged', 'replied']);
      expect(new Set(steps.map((step) => step.occurred_at)).size).toBe(3);
    }
  });

  /** Syncs every sync interval from `from` until the answer to `parentMessageId` is planned; when it was. */
  async function syncUntilReplied(from: Date, parentMessageId: string) {
    for (let t = from.getTime(); t < from.getTime() + hours(24); t += SYNC_INTERVAL_MS) {
      await syncMailboxes(deps, { now: new Date(t), ignoreSchedule: false });
      const reply = await database.db
        .selectFrom('warmup_messages')
        .selectAll()
        .where('parent_message_id', '=', parentMessageId)
        .executeTakeFirst();
      if (reply) return { reply, plannedAt: new Date(t) };
    }
    throw new Error(`no reply to ${parentMessageId} planned within a day`);
  }

  it('plans a reply inside the replier’s send window: one read at night goes out the next morning', async () => {
    const row = await sentToFrank('INBOX', { dueAt: at(hours(10)), sentAt: at(hours(10)) });
    deps.random = always;
    // found at 21:00, after Frank's window (08:00–18:00 UTC): whenever he answers, it leaves in the next window
    const { reply, plannedAt } = await syncUntilReplied(at(hours(11)), row.message_id);
    expect(plannedAt.getTime()).toBeLessThan(Date.parse('2026-03-13T08:00:00Z'));
    expect(reply).toMatchObject({ status: 'planned', plan_day: '2026-03-13', due_at: '2026-03-13T08:00:00.000Z' });
  });

  it('a reply comes before new threads: on a full day the last unsent new thread gives way, with its reason', async () => {
    const row = await sentToFrank('INBOX');
    await insertPlan(database.db, frank, '2026-03-12', 2);
    const early = await insertMessage(database.db, { sender: frank, recipient: erin, dueAt: at(hours(7)) });
    const late = await insertMessage(database.db, { sender: frank, recipient: erin, dueAt: at(hours(7.5)) });
    deps.random = always;
    const { reply, plannedAt } = await syncUntilReplied(NOW, row.message_id);
    // answered inside the window: it leaves at once, within the day's budget of 2
    expect(plannedAt.getTime()).toBeLessThan(at(hours(7)).getTime());
    expect(reply).toMatchObject({ status: 'planned', plan_day: '2026-03-12', due_at: plannedAt.toISOString() });
    expect((await messageRow(early.id)).status).toBe('planned');
    expect(await messageRow(late.id)).toMatchObject({ status: 'expired', last_error: REASON_REPLY_FIRST });
  });

  it('rescues mail from spam into the inbox before filing it, and plans an in-thread reply', async () => {
    const row = await sentToFrank('Junk');
    deps.random = always;

    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ received: 1, rescued: 1, opened: 1, flagged: 1, replied: 1, filed: 1 });
    expect(await messageRow(row.id)).toMatchObject({
      placement: 'spam',
      rescued_at: NOW.toISOString(),
      engaged_at: NOW.toISOString(),
    });
    expect(await daily(erin.id)).toMatchObject({ spam: 1, rescued: 1 });
    expect(imap.account('frank@foxtrot.test').locate(row.message_id)?.folder).toBe('Warmup');

    const reply = await database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('parent_message_id', '=', row.message_id)
      .executeTakeFirstOrThrow();
    expect(reply).toMatchObject({
      // Outlook's Message-ID carries the send moment, so the expected one is built with it
      message_id: replyMessageIdFor('frank@foxtrot.test', row.message_id, clientProfileOf(frank).name, NOW),
      thread_id: row.thread_id,
      sender_mailbox_id: frank.id,
      recipient_mailbox_id: erin.id,
      kind: 'reply',
      turn: 2,
      status: 'planned',
      due_at: NOW.toISOString(),
      plan_day: '2026-03-12',
    });
    expect(reply.message_id.endsWith(`@${messageIdHost(clientProfileOf(frank).name, 'frank@foxtrot.test')}>`)).toBe(
      true,
    );
  });

  it('counts the rescue of mail found in spam that an interrupted sync already moved to the inbox', async () => {
    const row = await sentToFrank('INBOX');
    await database.db
      .updateTable('warmup_messages')
      .set({ found_at: at(-minutes(10)).toISOString(), placement: 'spam', engage_after: at(-minutes(5)).toISOString() })
      .where('id', '=', row.id)
      .execute();

    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ received: 0, rescued: 1, filed: 1 });
    expect(await messageRow(row.id)).toMatchObject({ rescued_at: NOW.toISOString(), engaged_at: NOW.toISOString() });
    expect(await daily(erin.id)).toMatchObject({ rescued: 1 });
    expect(imap.account('frank@foxtrot.test').locate(row.message_id)?.folder).toBe('Warmup');
  });

  it('does nothing twice, however often it runs', async () => {
    const row = await sentToFrank('Junk');
    deps.random = always;
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    const counts = await database.db.selectFrom('daily_stats').selectAll().orderBy('mailbox_id').execute();

    // the row is finished: it is not looked for again
    const sessions = imap.sessions;
    const again = await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true });
    expect(again).toMatchObject({ received: 0, rescued: 0, opened: 0, replied: 0, filed: 0 });
    expect(imap.sessions).toBe(sessions);

    // a crash after filing but before noting it: found in Warmup, noted, nothing counted again
    await database.db.updateTable('warmup_messages').set({ engaged_at: null }).where('id', '=', row.id).execute();
    const recovered = await syncMailboxes(deps, { now: at(minutes(2)), ignoreSchedule: true });
    expect(recovered).toMatchObject({ received: 0, rescued: 0, opened: 0, flagged: 0, replied: 0, filed: 0 });
    expect((await messageRow(row.id)).engaged_at).toBe(at(minutes(2)).toISOString());
    expect(await database.db.selectFrom('daily_stats').selectAll().orderBy('mailbox_id').execute()).toEqual(counts);
    const replies = await database.db
      .selectFrom('warmup_messages')
      .select('id')
      .where('parent_message_id', '=', row.message_id)
      .execute();
    expect(replies).toHaveLength(1);
  });

  it('leaves warmup mail its owner moved into a folder of their own where the owner put it', async () => {
    const row = await sentToFrank('INBOX');
    deps.random = always;
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    const frankBox = imap.account('frank@foxtrot.test');
    expect(frankBox.locate(row.message_id)?.folder).toBe('Warmup');
    // the owner files it into Archive
    frankBox.folders.set('Archive', { role: 'archive', specialUse: '\\Archive', messages: [] });
    const filed = frankBox.take('Warmup', frankBox.locate(row.message_id)!.message.uid);
    frankBox.folder('Archive').messages.push(filed);

    // more mail comes, so the next sync reads the mailbox again, and the first message is finished
    await sentToFrank('INBOX', { subject: 'Next' });
    const next = await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true });
    expect(next).toMatchObject({ received: 1, filed: 1 });
    expect(frankBox.locate(row.message_id)?.folder).toBe('Archive');
  });

  it('sometimes only reads: no flag, no reply, still filed', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ warmup: JSON.stringify({ replyRate: 50 }) })
      .where('id', '=', frank.id)
      .execute();
    const row = await sentToFrank('INBOX');
    const answers = [0.5, 0.99, 0.7]; // open yes, flag no, reply no (0.7 ≥ 50 % × at most 1.2)
    deps.random = () => answers.shift() ?? 0.99;
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    expect(summary).toMatchObject({ opened: 1, flagged: 0, replied: 0, filed: 1 });
    expect(imap.account('frank@foxtrot.test').locate(row.message_id)).toMatchObject({
      folder: 'Warmup',
      message: { seen: true, flagged: false },
    });
  });

  it('ends a thread after a few turns', async () => {
    expect(replyProbability(100, MAX_TURNS)).toBe(0);
    const last = await sentToFrank('INBOX', { turn: MAX_TURNS, kind: 'reply' });
    deps.random = always;
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    expect(summary).toMatchObject({ opened: 1, replied: 0 });
    expect(await interactionTypes(last.message_id)).not.toContain('replied');
  });

  it('never replies from a mailbox with replyRate 0', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ warmup: JSON.stringify({ replyRate: 0 }) })
      .where('id', '=', frank.id)
      .execute();
    await sentToFrank('INBOX');
    deps.random = always;
    expect((await syncMailboxes(deps, { now: NOW, ignoreSchedule: true })).replied).toBe(0);
  });

  it('never replies to a mailbox whose owner answers automatically, until the rule ends', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ auto_reply_at: at(-hours(1)).toISOString() })
      .where('id', '=', erin.id)
      .execute();
    const row = await sentToFrank('INBOX');
    deps.random = always;
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    // read and filed as ever, but not answered: erin receives no warmup mail meanwhile
    expect(summary).toMatchObject({ received: 1, opened: 1, replied: 0, filed: 1 });
    const replies = await database.db
      .selectFrom('warmup_messages')
      .select('id')
      .where('parent_message_id', '=', row.message_id)
      .execute();
    expect(replies).toEqual([]);

    // four days without an automatic reply: the next email is answered again
    await database.db
      .updateTable('mailboxes')
      .set({ auto_reply_at: at(-hours(96)).toISOString() })
      .where('id', '=', erin.id)
      .execute();
    await sentToFrank('INBOX');
    expect((await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true })).replied).toBe(1);
  });

  it('leaves mail that has not arrived yet for the next sync', async () => {
    const row = await sentToFrank(null);
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    expect(summary).toMatchObject({ synced: 2, received: 0 });
    expect((await messageRow(row.id)).found_at).toBeNull();
    imap.account('frank@foxtrot.test').deliver('INBOX', row.message_id);
    expect((await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true })).received).toBe(1);
  });

  it('records delivery reports in the sender’s own mailbox as bounces', async () => {
    const bounced = await sentToFrank(null);
    const fine = await sentToFrank(null);
    const erinsAccount = imap.account('erin@echo.test');
    const uid = erinsAccount.deliver('INBOX', '<dsn@mailer.test>');
    erinsAccount.bounces = [
      {
        messageId: bounced.message_id,
        recipient: 'frank@foxtrot.test',
        diagnostic: 'smtp; 550 5.1.1 user unknown',
        folder: 'INBOX',
        uid,
      },
    ];

    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(summary.bounced).toBe(1);
    expect(await messageRow(bounced.id)).toMatchObject({
      status: 'bounced',
      last_error: 'smtp; 550 5.1.1 user unknown',
    });
    expect((await messageRow(fine.id)).status).toBe('sent');
    expect(await interactionTypes(bounced.message_id, erin.id)).toEqual(['bounced']);
    expect(await daily(erin.id)).toMatchObject({ bounced: 1 });
    // the report is filed with the rest of the warmup mail
    expect(erinsAccount.locate('<dsn@mailer.test>')?.folder).toBe('Warmup');
    expect((await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true })).bounced).toBe(0);
  });

  it('counts mail never found within 48 hours as lost, once, on the day it was sent', async () => {
    const lost = await sentToFrank(null, { sentAt: at(-hours(49)), dueAt: at(-hours(49)) });
    const recent = await sentToFrank(null, { sentAt: at(-hours(47)), dueAt: at(-hours(47)) });
    // Frank has not synced since: nothing can be called lost yet
    expect((await syncMailboxes(deps, { now: NOW, ignoreSchedule: true })).lost).toBe(0);

    const summary = await syncMailboxes(deps, { now: at(minutes(1)), ignoreSchedule: true });

    expect(summary.lost).toBe(1);
    expect((await messageRow(lost.id)).status).toBe('lost');
    expect((await messageRow(recent.id)).status).toBe('sent');
    const sentDay = at(-hours(49)).toISOString().slice(0, 10);
    expect(
      await database.db
        .selectFrom('daily_stats')
        .select(['day', 'lost'])
        .where('mailbox_id', '=', erin.id)
        .where('lost', '>', 0)
        .execute(),
    ).toEqual([{ day: sentDay, lost: 1 }]);
    expect((await syncMailboxes(deps, { now: at(minutes(2)), ignoreSchedule: true })).lost).toBe(0);
  });
});
