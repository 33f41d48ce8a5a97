// The reader when servers fail: refused logins, hung servers, a sync past its deadline, a stop, a refused action.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MailboxRow } from '../db/schema.js';
import { abortedError } from '../mail/errors.js';
import { openImapSession } from '../mail/imap.js';
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
  imapError,
  insertMailbox,
  insertMessage,
  messageRowOf,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { SYNC_INTERVAL_MS, syncMailboxes } from './reader.js';

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

/** The silent servers below listen on loopback, which the default mail policy refuses. */
const LOOPBACK_ALLOWED = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };

describe('syncMailboxes when servers fail', () => {
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
});
