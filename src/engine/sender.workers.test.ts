// The sender with several workers and lanes at once: no message sent twice, leases held while they send, claims through indexes.
import { CompiledQuery, type KyselyPlugin, type QueryId, type RootOperationNode } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import type { MailboxRow } from '../db/schema.js';
import type { OutgoingMail } from '../mail/smtp.js';
import type { InteractionType } from '../interactions/interactions.schemas.js';
import type { TestDatabase } from '../../test/helpers/test-database.js';
import { at, createSenderWorld, interactionsOf, minutes, NOW } from '../../test/helpers/sender-world.js';
import {
  type FakeSmtp,
  insertMailbox,
  insertMessage,
  insertPlan,
  mailWorkDeps,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { REASON_NO_ROOM } from './send-budget.js';
import { sendDueMessages } from './sender.js';

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

const interactions = (type?: InteractionType) => interactionsOf(database, type);

/** The fake SMTP server's sessions, with `beforeSend` run before each message is handed over. */
function smtpWith(beforeSend: (mail: OutgoingMail) => Promise<void>): NonNullable<FixtureDeps['smtp']> {
  return (config) => {
    const session = smtp.factory(config);
    return {
      send: async (mail) => {
        await beforeSend(mail);
        return session.send(mail);
      },
      close: () => session.close(),
    };
  };
}

describe('sendDueMessages with several workers and lanes', () => {
  it('never lets two workers send the same message', async () => {
    const senders = [erin, frank, grace];
    const ids: string[] = [];
    for (let i = 0; i < 60; i += 1) {
      const sender = senders[i % 3];
      const recipient = senders[(i + 1) % 3];
      ids.push((await insertMessage(database.db, { sender, recipient, dueAt: at(-minutes(i % 7)) })).message_id);
    }
    const one = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-one' });
    const two = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-two' });

    const [a, b] = await Promise.all([
      sendDueMessages(one, { now: NOW, ignoreSchedule: true, limit: 40 }),
      sendDueMessages(two, { now: NOW, ignoreSchedule: true, limit: 40 }),
    ]);
    // a sender busy in the other worker waits for the next call
    const c = await sendDueMessages(one, { now: NOW, ignoreSchedule: true });

    expect(a.sent + b.sent + c.sent).toBe(60);
    const sentIds = smtp.sent.map((s) => s.mail.messageId);
    expect(new Set(sentIds).size).toBe(sentIds.length);
    expect([...sentIds].sort()).toEqual([...ids].sort());
    expect(await interactions('sent')).toHaveLength(60);
  });

  it('leaves rows another worker holds alone until its lease expires', async () => {
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    await database.db
      .updateTable('warmup_messages')
      .set({ lease_owner: 'someone-else', lease_expires_at: at(minutes(2)).toISOString() })
      .where('id', '=', row.id)
      .execute();
    expect((await sendDueMessages(deps, { now: NOW, ignoreSchedule: true })).claimed).toBe(0);
    // the other worker died: after the lease the row is taken over (same Message-ID)
    const summary = await sendDueMessages(deps, { now: at(minutes(3)), ignoreSchedule: false });
    expect(summary.sent).toBe(1);
    expect(smtp.sent[0].mail.messageId).toBe(row.message_id);
  });

  it('a worker claims only the senders its lanes work on; another worker sends the rest meanwhile', async () => {
    const mailboxes = [erin, frank, grace];
    for (let i = 0; i < 5; i += 1) {
      const more = await insertMailbox(database.db, erin.workspace_id, { email: `s${i}@sierra${i}.test` });
      await insertPlan(database.db, more, '2026-03-12', 100);
      mailboxes.push(more);
    }
    const ids: string[] = [];
    for (const [i, sender] of mailboxes.entries()) {
      const recipient = mailboxes[(i + 1) % mailboxes.length];
      ids.push((await insertMessage(database.db, { sender, recipient, dueAt: at(-minutes(1)) })).message_id);
    }
    // worker one's sessions hang (a provider far away) until released
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let hanging = 0;
    const one = mailWorkDeps(database.db, database.dialect, {
      workerId: 'worker-one',
      smtp: smtpWith(async () => {
        hanging += 1;
        await released;
      }),
    });
    const two = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-two' });
    const heldByOne = () =>
      database.db.selectFrom('warmup_messages').select('id').where('lease_owner', '=', 'worker-one').execute();

    const first = sendDueMessages(one, { now: NOW, ignoreSchedule: true });
    for (const started = Date.now(); hanging < 4 && Date.now() - started < 5_000;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(hanging).toBe(4);
    // one row for each of its four lanes, no more
    expect(await heldByOne()).toHaveLength(4);

    const second = await sendDueMessages(two, { now: NOW, ignoreSchedule: true });
    expect(second).toMatchObject({ claimed: 4, sent: 4 });
    release();
    expect(await first).toMatchObject({ claimed: 4, sent: 4 });

    const sentIds = smtp.sent.map((s) => s.mail.messageId);
    expect([...sentIds].sort()).toEqual([...ids].sort());
    expect(await interactions('sent')).toHaveLength(8);
    expect(await heldByOne()).toHaveLength(0);
  });

  it('dates each lease from the moment it is taken: the last senders of a long call are still held while they send', async () => {
    const senders = [erin, frank, grace];
    for (let i = 0; i < 5; i += 1) {
      const more = await insertMailbox(database.db, erin.workspace_id, { email: `l${i}@lima${i}.test` });
      await insertPlan(database.db, more, '2026-03-12', 100);
      senders.push(more);
    }
    // one due time each, a second apart: the senders are claimed in this order
    for (const [i, sender] of senders.entries())
      await insertMessage(database.db, {
        sender,
        recipient: senders[(i + 1) % senders.length],
        dueAt: at(-minutes(10) + i * 1000),
      });
    // Each send keeps a far-away provider's 10 s, and the sends take turns in the order the senders
    // are claimed, whatever the lanes' timing: a sender sends at most four sends after its claim (four
    // lanes), 40 s, while the last ones send 70 and 80 s after the call's start, after a 60 s lease
    // dated from the call's start has run out.
    const claimOrder = senders.map((sender) => sender.email);
    const turns = claimOrder.map(() => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    const clock = fixedClock(NOW);
    const heldWhileSending: Array<{ row: boolean; sender: boolean }> = [];
    const leftAt = new Map<string, string>();
    const slow = mailWorkDeps(database.db, database.dialect, {
      clock,
      smtp: smtpWith(async (mail) => {
        const turn = claimOrder.indexOf(mail.from.address);
        if (turn > 0) await turns[turn - 1].promise;
        clock.advance(10_000);
        const nowIso = clock.now().toISOString();
        const row = await database.db
          .selectFrom('warmup_messages')
          .select(['lease_expires_at', 'sender_mailbox_id'])
          .where('message_id', '=', mail.messageId)
          .executeTakeFirstOrThrow();
        const lease = await database.db
          .selectFrom('leases')
          .select('expires_at')
          .where('key', '=', `send:${row.sender_mailbox_id}`)
          .executeTakeFirst();
        heldWhileSending.push({
          row: row.lease_expires_at !== null && row.lease_expires_at > nowIso,
          sender: lease !== undefined && lease.expires_at > nowIso,
        });
        leftAt.set(mail.messageId, nowIso);
        turns[turn].resolve();
      }),
    });

    expect(await sendDueMessages(slow, { now: NOW, ignoreSchedule: true })).toMatchObject({ claimed: 8, sent: 8 });
    expect(heldWhileSending).toHaveLength(8);
    expect(heldWhileSending.filter((held) => !held.row || !held.sender)).toEqual([]);
    // and each send is dated when it left, not at the call's start: the next send's gap is measured from there
    const sent = await database.db.selectFrom('warmup_messages').select(['message_id', 'sent_at']).execute();
    const logged = await database.db
      .selectFrom('interactions')
      .select(['message_id', 'occurred_at'])
      .where('type', '=', 'sent')
      .execute();
    expect(sent).toHaveLength(8);
    expect(logged).toHaveLength(8);
    for (const row of sent) expect(row.sent_at! >= leftAt.get(row.message_id)!, row.message_id).toBe(true);
    for (const row of logged) expect(row.occurred_at >= leftAt.get(row.message_id!)!, row.message_id!).toBe(true);
    expect(Math.max(...sent.map((row) => Date.parse(row.sent_at!)))).toBe(NOW.getTime() + 80_000);
  });

  it('judges each sender’s window when a lane takes it up, not at the call’s start', async () => {
    // eight senders, a new thread each, due before the window's end (18:00 UTC); the call starts 25 s before it
    const windowEnd = new Date('2026-03-12T18:00:00Z');
    const callStart = new Date(windowEnd.getTime() - 25_000);
    const senders: MailboxRow[] = [];
    for (let i = 0; i < 8; i += 1) {
      const sender = await insertMailbox(database.db, erin.workspace_id, { email: `w${i}@whisky${i}.test` });
      await insertPlan(database.db, sender, '2026-03-12', 100);
      senders.push(sender);
    }
    for (const [i, sender] of senders.entries())
      await insertMessage(database.db, {
        sender,
        recipient: senders[(i + 1) % senders.length],
        dueAt: new Date(callStart.getTime() - minutes(10) + i * 1000),
      });
    // Each send keeps a far-away provider's 10 s. Four lanes take up the first four senders at the
    // call's start; a lane takes up the next sender only once its own has sent, so the seventh and
    // eighth are taken up after at least three and four sends: 18:00:05 or later, past the window.
    const clock = fixedClock(callStart);
    const slow = mailWorkDeps(database.db, database.dialect, {
      clock,
      smtp: smtpWith(async () => {
        clock.advance(10_000);
      }),
    });

    await sendDueMessages(slow, { now: callStart, ignoreSchedule: false });
    const sentFrom = new Set(smtp.sent.map((s) => s.mail.from.address));
    for (const sender of senders.slice(0, 4)) expect(sentFrom.has(sender.email), sender.email).toBe(true);
    for (const sender of senders.slice(6)) {
      expect(sentFrom.has(sender.email), sender.email).toBe(false);
      const [row] = await database.db
        .selectFrom('warmup_messages')
        .select(['status', 'last_error'])
        .where('sender_mailbox_id', '=', sender.id)
        .execute();
      expect(row).toEqual({ status: 'expired', last_error: REASON_NO_ROOM });
    }
  });

  it('never has two lanes on one sender, also when its rows take more than one claim', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 200);
    const ids: string[] = [];
    for (let i = 0; i < 105; i += 1)
      ids.push(
        (await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) })).message_id,
      );
    ids.push(
      (await insertMessage(database.db, { sender: grace, recipient: frank, dueAt: at(-minutes(1)) })).message_id,
    );
    const sending = new Map<string, number>();
    let overlaps = 0;
    deps.smtp = smtpWith(async (mail) => {
      const inFlight = (sending.get(mail.from.address) ?? 0) + 1;
      sending.set(mail.from.address, inFlight);
      if (inFlight > 1) overlaps += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
      sending.set(mail.from.address, inFlight - 1);
    });

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ claimed: 106, sent: 106 });
    expect(overlaps).toBe(0);
    expect([...smtp.sent.map((s) => s.mail.messageId)].sort()).toEqual([...ids].sort());
  });

  it('finds the next senders and claims their rows through indexes, not by reading every row (SQLite plan)', async (context) => {
    // the plan of PostgreSQL depends on its statistics; SQLite's is fixed by the schema
    if (database.dialect !== 'sqlite') context.skip();
    await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    const statements: Array<{ node: RootOperationNode; queryId: QueryId }> = [];
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        statements.push({ node: args.node, queryId: args.queryId });
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const recorded = database.db.withPlugin(recorder);
    expect((await sendDueMessages({ ...deps, db: recorded }, { now: NOW, ignoreSchedule: false })).sent).toBe(1);
    const plan = async (pattern: RegExp) => {
      const found = statements
        .map(({ node, queryId }) => database.db.getExecutor().compileQuery(node, queryId))
        .find((compiled) => pattern.test(compiled.sql));
      if (!found) throw new Error(`no statement matches ${pattern}`);
      const { rows } = await database.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${found.sql}`, [...found.parameters]),
      );
      return rows.map((r) => r.detail).join(' | ');
    };
    // the next senders: the first due rows in due order, each sender's lease looked up by its key
    const find = await plan(/^select .* from "warmup_messages" as "w" .*"leases"/s);
    expect(find).toMatch(/SEARCH w USING INDEX warmup_messages_due \(status=\? AND due_at<\?\)/);
    expect(find).toMatch(/SEARCH l USING INDEX sqlite_autoindex_leases_1 \(key=\?\)/);
    expect(find).not.toMatch(/TEMP B-TREE|SCAN/);
    // one sender's due rows, then those rows by their key
    const claim = await plan(/^update "warmup_messages" set "lease_owner" = .* in \(select/s);
    expect(claim).toMatch(
      /SEARCH warmup_messages USING (COVERING )?INDEX sqlite_autoindex_warmup_messages_1 \(id=\?\)/,
    );
    expect(claim).toMatch(
      /SEARCH w USING INDEX warmup_messages_sender_due \(sender_mailbox_id=\? AND status=\? AND due_at<\?\)/,
    );
    expect(claim).not.toMatch(/TEMP B-TREE|SCAN/);
  });

  it('a failed claim gives back what was claimed before it, rather than holding it until its leases run out', async () => {
    await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    await insertMessage(database.db, { sender: grace, recipient: frank, dueAt: at(-minutes(1)) });
    // the second look for the next senders fails (the first found both)
    let looks = 0;
    const failing: KyselyPlugin = {
      transformQuery: (args) => {
        const compiled = database.db.getExecutor().compileQuery(args.node, args.queryId);
        if (/^select .*"leases"/s.test(compiled.sql) && ++looks === 2) throw new Error('database went away');
        return args.node;
      },
      transformResult: async (args) => args.result,
    };

    await expect(
      sendDueMessages({ ...deps, db: database.db.withPlugin(failing) }, { now: NOW, ignoreSchedule: true }),
    ).rejects.toThrow('database went away');

    expect(smtp.sent).toHaveLength(0);
    const leased = await database.db.selectFrom('warmup_messages').select('id').where('lease_owner', 'is not', null);
    expect(await leased.execute()).toEqual([]);
    expect(await database.db.selectFrom('leases').selectAll().execute()).toEqual([]);
  });
});
