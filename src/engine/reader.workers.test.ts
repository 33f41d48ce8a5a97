// The reader with several workers and lanes: sync claims held while they read, one lane per mailbox.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MailboxRow } from '../db/schema.js';
import { fixedClock } from '../clock.js';
import type { TestDatabase } from '../../test/helpers/test-database.js';
import { at, createReaderWorld, hours, mailboxRowOf, NOW, sentToFrankIn } from '../../test/helpers/reader-world.js';
import { type FakeImap, insertMailbox, insertMessage, type FixtureDeps } from '../../test/helpers/engine-fixtures.js';
import { claimSyncs } from './mailbox-engine-state.repository.js';
import { syncMailboxes } from './reader.js';

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
const mailbox = (id: string) => mailboxRowOf(database, id);

/** Frank and new mailboxes named so, each with a message from Erin an hour ago in its inbox. */
async function erinWroteToFrankAnd(names: string[]): Promise<MailboxRow[]> {
  const recipients = [frank];
  for (const name of names) {
    recipients.push(await insertMailbox(database.db, erin.workspace_id, { email: `${name}@golf.test` }));
  }
  for (const recipient of recipients) {
    const row = await insertMessage(database.db, {
      sender: erin,
      recipient,
      dueAt: at(-hours(1)),
      status: 'sent',
      sentAt: at(-hours(1)),
    });
    imap.account(recipient.email).deliver('INBOX', row.message_id);
  }
  return recipients;
}

describe('syncMailboxes with several workers and lanes', () => {
  it('skips a mailbox whose sync another worker holds, and takes it over once that claim runs out', async () => {
    await sentToFrank('INBOX');
    const [claimed] = await claimSyncs(database.db, {
      dialect: database.dialect,
      owner: 'other-worker',
      now: NOW,
      until: at(60_000),
      limit: 1,
      everyActiveAfter: erin.id < frank.id ? erin.id : '',
    });
    expect(claimed).toBe(frank.id);
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    // only erin (looking for bounces of her mail) was read
    expect(summary).toMatchObject({ synced: 1, received: 0 });
    expect(await mailbox(frank.id)).toMatchObject({ sync_owner: 'other-worker', last_sync_at: null });
    // the other worker died: after its claim, this one reads the mailbox
    const later = await syncMailboxes(deps, { now: at(60_000), ignoreSchedule: false });
    expect(later).toMatchObject({ received: 1 });
    expect(await mailbox(frank.id)).toMatchObject({ sync_owner: null, sync_claimed_until: null });
  });

  it('a slow mailbox holds up only its own lane: the others are all read before it finishes', async () => {
    // five mailboxes with mail to find, and Erin looking for bounces of hers: six syncs on four lanes
    const recipients = await erinWroteToFrankAnd(['gina', 'hugo', 'iris', 'jack']);
    // the first in id order is among the first claimed whatever the lanes: its provider is far away
    const slow = [...recipients].sort((a, b) => a.id.localeCompare(b.id))[0];
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    deps.imap = async (config) => {
      if (config.username === slow.email) await answered;
      return imap.factory(config);
    };
    const others = [erin, ...recipients].filter((m) => m.id !== slow.id).map((m) => m.id);
    const readOthers = async () =>
      database.db
        .selectFrom('mailboxes')
        .select('id')
        .where('id', 'in', others)
        .where('last_sync_at', 'is not', null)
        .execute();

    const syncing = syncMailboxes(deps, { now: NOW, ignoreSchedule: true });
    let readMeanwhile = 0;
    let slowReadMeanwhile: string | null = null;
    try {
      // in lockstep the two mailboxes after the first claim of four would wait for the slow one
      const deadline = performance.now() + 5_000;
      while ((readMeanwhile = (await readOthers()).length) < others.length && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      slowReadMeanwhile = (await mailbox(slow.id)).last_sync_at;
    } finally {
      answer();
    }
    const summary = await syncing;

    expect(readMeanwhile).toBe(others.length);
    expect(slowReadMeanwhile).toBeNull();
    expect(summary).toMatchObject({ synced: 6, failed: 0, received: 5 });
    // every mailbox read once, none twice by two lanes
    for (const m of [erin, ...recipients]) expect(imap.logins.get(m.email) ?? 0).toBeLessThanOrEqual(1);
    for (const m of recipients) expect(imap.logins.get(m.email)).toBe(1);
    expect(await mailbox(slow.id)).toMatchObject({ last_sync_at: NOW.toISOString(), sync_owner: null });
  });

  it('dates each sync claim from the moment it is taken: the last mailboxes of a long call are still held while they are read', async () => {
    const recipients = await erinWroteToFrankAnd(['gina', 'hugo', 'iris', 'jack', 'kate', 'liam']);
    // Each login keeps a far-away provider's 10 s, and the logins take turns in the order the mailboxes
    // are claimed (id order), whatever the lanes' timing: a mailbox is read at most five logins after
    // its claim (four lanes), 50 s, while the last ones are read 70 and 80 s after the call's start,
    // after a 60 s claim dated from the call's start has run out.
    const clock = fixedClock(NOW);
    deps.clock = clock;
    const claimOrder = (
      await database.db.selectFrom('mailboxes').select('email').where('status', '=', 'active').orderBy('id').execute()
    ).map((m) => m.email);
    expect(claimOrder).toHaveLength(8);
    const turns = claimOrder.map(() => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    const heldWhileReading: boolean[] = [];
    const loggedInAt = new Map<string, string>();
    deps.imap = async (config) => {
      const turn = claimOrder.indexOf(config.username);
      if (turn > 0) await turns[turn - 1].promise;
      clock.advance(10_000);
      loggedInAt.set(config.username, clock.now().toISOString());
      const row = await database.db
        .selectFrom('mailboxes')
        .select('sync_claimed_until')
        .where('email', '=', config.username)
        .executeTakeFirstOrThrow();
      heldWhileReading.push(row.sync_claimed_until !== null && row.sync_claimed_until > clock.now().toISOString());
      turns[turn].resolve();
      return imap.factory(config);
    };

    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ synced: 8, failed: 0, received: 7 });
    expect(heldWhileReading).toHaveLength(8);
    expect(heldWhileReading.filter((held) => !held)).toEqual([]);
    // what a mailbox's sync found is dated when its lane took it up (before its login), not at the call's
    // start: the four lanes took up the first four mailboxes at the start, the others after logins
    const received = await database.db
      .selectFrom('interactions')
      .innerJoin('mailboxes', 'mailboxes.id', 'interactions.mailbox_id')
      .select(['mailboxes.email', 'interactions.occurred_at'])
      .where('interactions.type', '=', 'received')
      .execute();
    expect(received).toHaveLength(7);
    expect(received.filter((row) => claimOrder.indexOf(row.email) >= 4).length).toBeGreaterThan(0);
    for (const row of received) {
      if (claimOrder.indexOf(row.email) >= 4) expect(row.occurred_at > NOW.toISOString(), row.email).toBe(true);
      expect(row.occurred_at < loggedInAt.get(row.email)!, row.email).toBe(true);
    }
    // given back with the due time it earned, as ever
    for (const m of [erin, ...recipients])
      expect(await mailbox(m.id)).toMatchObject({ sync_owner: null, sync_claimed_until: null });
  });

  it('opens no connection for a mailbox with nothing to look for', async () => {
    const summary = await syncMailboxes(deps, { now: NOW, ignoreSchedule: false });
    expect(summary.synced).toBe(2);
    expect(imap.sessions).toBe(0);
  });
});
