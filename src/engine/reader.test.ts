import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { abortedError } from '../mail/errors.js';
import { openImapSession } from '../mail/imap.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import {
  FakeImap,
  imapError,
  insertMailbox,
  insertMessage,
  insertPlan,
  insertWorkspace,
  mailWorkDeps,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { acquireLease } from './leases.js';
import { replyMessageIdFor } from './message-content.js';
import { REASON_REPLY_FIRST } from './send-budget.js';
import { humanDelay, intoWakingHours, MAX_TURNS, replyProbability, SYNC_INTERVAL_MS, syncMailboxes } from './reader.js';

const NOW = new Date('2026-03-12T10:00:00Z');
const minutes = (n: number) => n * 60_000;
const hours = (n: number) => n * 60 * 60_000;
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);
/** random() that always says yes. */
const always = () => 0;

let database: TestDatabase;
let imap: FakeImap;
let deps: FixtureDeps;
let erin: MailboxRow;
let frank: MailboxRow;

beforeEach(async () => {
  database = await createTestDatabase();
  imap = new FakeImap();
  deps = mailWorkDeps(database.db, database.dialect, { imap: imap.factory });
  const workspaceId = await insertWorkspace(database.db);
  erin = await insertMailbox(database.db, workspaceId, { email: 'erin@echo.test', name: 'Erin Echo' });
  frank = await insertMailbox(database.db, workspaceId, {
    email: 'frank@foxtrot.test',
    warmup: { replyRate: 100, timezone: 'UTC' },
  });
});

afterEach(async () => {
  await database.close();
});

/** A message Erin sent to Frank an hour ago, and its delivery into one of Frank's folders. */
async function sentToFrank(
  folder: 'INBOX' | 'Junk' | null,
  fixture: Partial<Parameters<typeof insertMessage>[1]> = {},
): Promise<WarmupMessageRow> {
  const row = await insertMessage(database.db, {
    sender: erin,
    recipient: frank,
    dueAt: at(-hours(1)),
    status: 'sent',
    sentAt: at(-hours(1)),
    subject: 'Planning',
    body: 'Hi Frank',
    ...fixture,
  });
  if (folder) imap.account('frank@foxtrot.test').deliver(folder, row.message_id);
  return row;
}

async function messageRow(id: string) {
  return database.db.selectFrom('warmup_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

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

async function mailbox(id: string) {
  return database.db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function daily(mailboxId: string) {
  return database.db.selectFrom('daily_stats').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
}

/** The silent servers below listen on loopback, which the default mail policy refuses. */
const LOOPBACK_ALLOWED = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };

describe('syncMailboxes', () => {
  it('finds mail by Message-ID, records where it landed, and acts later like a person', async () => {
    const row = await sentToFrank('INBOX');
    deps.random = always;

    const first = await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });

    expect(first).toMatchObject({ synced: 2, received: 1, opened: 0, filed: 0 });
    const found = await messageRow(row.id);
    expect(found).toMatchObject({ found_at: NOW.toISOString(), placement: 'inbox', engaged_at: null });
    // random() = 0: the shortest delay, 5 minutes
    expect(found.engage_after).toBe(at(minutes(5)).toISOString());
    expect(await interactionTypes(row.message_id)).toEqual(['received']);
    expect(await daily(frank.id)).toMatchObject({ received: 1 });
    expect(await daily(erin.id)).toMatchObject({ inbox: 1 });
    expect((await mailbox(frank.id)).last_sync_at).toBe(NOW.toISOString());

    const second = await syncMailboxes(deps, { now: at(minutes(6)), ignoreSchedule: false });

    expect(second).toMatchObject({ received: 0, opened: 1, flagged: 1, replied: 1, filed: 1 });
    expect(await interactionTypes(row.message_id)).toEqual(['flagged', 'opened', 'received', 'replied']);
    const stored = imap.account('frank@foxtrot.test').locate(row.message_id);
    expect(stored).toMatchObject({ folder: 'Warmup', message: { seen: true, flagged: true } });
    expect((await messageRow(row.id)).engaged_at).toBe(at(minutes(6)).toISOString());
    // engagement counts for the sender
    expect(await daily(erin.id)).toMatchObject({ inbox: 1, opened: 1, flagged: 1, replied: 1 });
  });

  it('plans a reply inside the replier’s send window: one read at night goes out the next morning', async () => {
    const row = await sentToFrank('INBOX', { dueAt: at(hours(10)), sentAt: at(hours(10)) });
    deps.random = always;
    // 21:00: found; read at 21:05 (waking hours end at 22:00); the answer would leave at 21:15
    await syncMailboxes(deps, { now: at(hours(11)), ignoreSchedule: false });
    await syncMailboxes(deps, { now: at(hours(11) + minutes(6)), ignoreSchedule: false });
    const reply = await database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('parent_message_id', '=', row.message_id)
      .executeTakeFirstOrThrow();
    // Frank's window is 08:00–18:00 UTC
    expect(reply).toMatchObject({ status: 'planned', plan_day: '2026-03-13', due_at: '2026-03-13T08:00:00.000Z' });
  });

  it('a reply comes before new threads: on a full day the last unsent new thread gives way, with its reason', async () => {
    const row = await sentToFrank('INBOX');
    await insertPlan(database.db, frank, '2026-03-12', 2);
    const early = await insertMessage(database.db, { sender: frank, recipient: erin, dueAt: at(hours(5)) });
    const late = await insertMessage(database.db, { sender: frank, recipient: erin, dueAt: at(hours(6)) });
    deps.random = always;
    await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    await syncMailboxes(deps, { now: at(minutes(6)), ignoreSchedule: false });
    const reply = await database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('parent_message_id', '=', row.message_id)
      .executeTakeFirstOrThrow();
    expect(reply).toMatchObject({ status: 'planned', plan_day: '2026-03-12', due_at: at(minutes(16)).toISOString() });
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
      message_id: replyMessageIdFor('frank@foxtrot.test', row.message_id),
      thread_id: row.thread_id,
      sender_mailbox_id: frank.id,
      recipient_mailbox_id: erin.id,
      kind: 'reply',
      turn: 2,
      status: 'planned',
      due_at: NOW.toISOString(),
      plan_day: '2026-03-12',
    });
    expect(reply.message_id).toMatch(/@foxtrot\.test>$/);
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

  it('sometimes only reads: no flag, no reply, still filed', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ warmup: JSON.stringify({ replyRate: 50 }) })
      .where('id', '=', frank.id)
      .execute();
    const row = await sentToFrank('INBOX');
    const answers = [0.5, 0.99, 0.6]; // open yes, flag no, reply no (0.6 ≥ 50 %)
    deps.random = () => answers.shift() ?? 0.99;
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    expect(summary).toMatchObject({ opened: 1, flagged: 0, replied: 0, filed: 1 });
    expect(imap.account('frank@foxtrot.test').locate(row.message_id)).toMatchObject({
      folder: 'Warmup',
      message: { seen: true, flagged: false },
    });
  });

  it('ends a thread after a few turns, each rarer than the one before', async () => {
    expect(replyProbability(30, 1)).toBeCloseTo(0.3);
    expect(replyProbability(30, 2)).toBeCloseTo(0.105);
    expect(replyProbability(30, 3)).toBeCloseTo(0.03675);
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

  it('backs off after a refused login and puts the mailbox into error on the third', async () => {
    await sentToFrank('INBOX');
    imap.failLogin.set(
      'frank@foxtrot.test',
      imapError(
        'auth',
        'IMAP login refused by 127.0.0.1:143: [AUTHENTICATIONFAILED] Authentication failed.',
        '[AUTHENTICATIONFAILED] Authentication failed.',
      ),
    );

    const first = await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    expect(first).toMatchObject({ failed: 1, synced: 1, mailboxErrors: [] });
    const afterFirst = await mailbox(frank.id);
    expect(afterFirst).toMatchObject({ status: 'active', sync_failures: 1 });
    expect(afterFirst.last_error).toMatch(/check the app password .* failure 1 of 3, then warmup stops$/);
    // 1 min after the first failure (drawn between half of it and all of it), then 2, 4…
    const retryAt = Date.parse(afterFirst.next_sync_at!);
    expect(retryAt - NOW.getTime()).toBeGreaterThanOrEqual(minutes(0.5));
    expect(retryAt - NOW.getTime()).toBeLessThanOrEqual(minutes(1));
    // during the backoff the mailbox is left alone
    const waiting = await syncMailboxes(deps, { now: new Date(retryAt - 1_000), ignoreSchedule: false });
    expect(waiting.failed).toBe(0);

    await syncMailboxes(deps, { now: new Date(retryAt), ignoreSchedule: false });
    const afterSecond = await mailbox(frank.id);
    expect(afterSecond.sync_failures).toBe(2);
    const secondRetry = Date.parse(afterSecond.next_sync_at!);
    expect(secondRetry - retryAt).toBeGreaterThanOrEqual(minutes(1));
    expect(secondRetry - retryAt).toBeLessThanOrEqual(minutes(2));
    const third = await syncMailboxes(deps, { now: new Date(secondRetry), ignoreSchedule: false });

    expect(third.mailboxErrors).toEqual([frank.id]);
    expect(await mailbox(frank.id)).toMatchObject({
      status: 'error',
      last_error: 'IMAP login refused: check the app password ([AUTHENTICATIONFAILED] Authentication failed.)',
      sync_failures: 0,
      next_sync_at: null,
    });
    expect((await mailbox(erin.id)).status).toBe('active');
  });

  it('a server that hangs fails that mailbox only', async () => {
    const silent: Socket[] = [];
    const server: Server = createServer((socket) => silent.push(socket)); // accepts, never greets
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const hanging = await insertMailbox(database.db, erin.workspace_id, { email: 'hank@hotel.test' });
      await insertMessage(database.db, {
        sender: erin,
        recipient: hanging,
        dueAt: at(-hours(1)),
        status: 'sent',
        sentAt: at(-hours(1)),
      });
      const row = await sentToFrank('INBOX');
      deps.settings = { ...deps.settings, imapTimeoutMs: 300 };
      deps.imap = (config, opts) =>
        config.username === 'hank@hotel.test'
          ? openImapSession({ ...config, port, policy: LOOPBACK_ALLOWED }, opts)
          : imap.factory(config);

      const started = performance.now();
      const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

      expect(performance.now() - started).toBeLessThan(5_000);
      expect(summary).toMatchObject({ failed: 1, synced: 2, received: 1 });
      expect((await messageRow(row.id)).found_at).toBe(NOW.toISOString());
      // a server that does not answer is a temporary failure: backoff, never a step towards `error`
      expect(await mailbox(hanging.id)).toMatchObject({ status: 'active', sync_failures: 0, sync_retries: 1 });
    } finally {
      for (const socket of silent) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives up a sync that outlasts its deadline: that mailbox fails for now, the others are read', async () => {
    const trickling = await insertMailbox(database.db, erin.workspace_id, { email: 'tina@hotel.test' });
    await insertMessage(database.db, {
      sender: erin,
      recipient: trickling,
      dueAt: at(-hours(1)),
      status: 'sent',
      sentAt: at(-hours(1)),
    });
    const row = await sentToFrank('INBOX');
    // every command would be answered within its own 30 s timeout: only the whole sync's deadline ends it
    deps.settings = { ...deps.settings, imapTimeoutMs: 30_000, syncDeadlineMs: 400 };
    deps.imap = async (config, opts) => {
      const session = await imap.factory(config);
      if (config.username !== 'tina@hotel.test') return session;
      return {
        ...session,
        findMessages: () =>
          new Promise((_, reject) => {
            const giveUp = () => reject(abortedError('imap', config));
            if (opts.signal?.aborted) giveUp();
            else opts.signal?.addEventListener('abort', giveUp, { once: true });
          }),
      };
    };

    const started = performance.now();
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(performance.now() - started).toBeLessThan(5_000);
    expect(summary).toMatchObject({ failed: 1, received: 1 });
    expect((await messageRow(row.id)).found_at).toBe(NOW.toISOString());
    expect(imap.openSessions).toBe(0);
    // a server too slow to finish is a temporary failure of its own mailbox: backoff, never `error`
    expect(await mailbox(trickling.id)).toMatchObject({ status: 'active', sync_failures: 0, sync_retries: 1 });
    expect((await mailbox(trickling.id)).last_error).toContain('did not finish within 0.4 s');
  });

  it('stopping drops a session waiting on a hung server at once and counts no failure', async () => {
    const silent: Socket[] = [];
    const server: Server = createServer((socket) => silent.push(socket)); // accepts, never greets
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      await sentToFrank('INBOX');
      deps.settings = { ...deps.settings, imapTimeoutMs: 30_000 };
      deps.imap = (config, opts) => openImapSession({ ...config, port, policy: LOOPBACK_ALLOWED }, opts);
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 300);

      const started = performance.now();
      const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true, signal: stop.signal });

      expect(performance.now() - started).toBeLessThan(3_000);
      expect(summary).toMatchObject({ failed: 0, synced: 0 });
      expect(await mailbox(frank.id)).toMatchObject({
        status: 'active',
        sync_retries: 0,
        sync_failures: 0,
        last_error: null,
        last_sync_at: null,
      });
    } finally {
      for (const socket of silent) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('goes on with the other messages when the server refuses an action on one', async () => {
    const vanishing = await sentToFrank('INBOX');
    const fine = await sentToFrank('INBOX');
    deps.random = always;
    deps.imap = async (config) => {
      const session = await imap.factory(config);
      const account = imap.account(config.username);
      return {
        ...session,
        // the owner deleted it between the search and the STORE
        markSeen: async (folder, uid) => {
          if (account.locate(vanishing.message_id)?.message.uid === uid)
            throw imapError('protocol', 'IMAP server refused STORE: NO message not found');
          return session.markSeen(folder, uid);
        },
      };
    };

    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ failed: 0, received: 2, opened: 1, filed: 1 });
    expect((await messageRow(vanishing.id)).engaged_at).toBeNull();
    expect((await messageRow(fine.id)).engaged_at).toBe(NOW.toISOString());
    expect(await mailbox(frank.id)).toMatchObject({
      sync_failures: 0,
      last_sync_at: NOW.toISOString(),
      next_sync_at: at(SYNC_INTERVAL_MS).toISOString(),
    });
  });

  it('skips a mailbox whose sync another worker holds', async () => {
    await sentToFrank('INBOX');
    expect(await acquireLease(database.db, `sync:${frank.id}`, 'other-worker', 60_000, NOW)).toBe(true);
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    expect(summary).toMatchObject({ skipped: 1, received: 0 });
    expect(imap.openSessions).toBe(0);
  });

  it('opens no connection for a mailbox with nothing to look for', async () => {
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    expect(summary.synced).toBe(2);
    expect(imap.sessions).toBe(0);
  });
});

describe('waking hours', () => {
  it('reads within the delay during the day', () => {
    const when = humanDelay(new Date('2026-03-12T10:00:00Z'), 'UTC', () => 0.5, 5, 90);
    expect(when.toISOString()).toBe('2026-03-12T10:47:30.000Z');
  });

  it('moves night-time reading to the next morning in the mailbox’s zone', () => {
    // 23:30 in Berlin (22:30 UTC): read after 07:00 Berlin time the next day
    const night = intoWakingHours(new Date('2026-03-12T22:30:00Z'), 'Europe/Berlin', () => 0.5);
    expect(night.toISOString()).toBe('2026-03-13T06:30:00.000Z');
    // 05:00 in New York: the same day's morning
    const early = intoWakingHours(new Date('2026-03-12T09:00:00Z'), 'America/New_York', () => 0);
    expect(early.toISOString()).toBe('2026-03-12T11:00:00.000Z');
    const day = new Date('2026-03-12T03:00:00Z'); // noon in Tokyo
    expect(intoWakingHours(day, 'Asia/Tokyo', () => 0).getTime()).toBe(day.getTime());
  });
});
