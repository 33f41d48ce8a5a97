// Warmup end to end on the real mail stack (Postfix + Dovecot, Sieve filing a junk sender's mail
// into Junk): mailboxes made through the API, engine cycles as `run-once --ignore-schedule` runs
// them, and then the result checked twice: through the API and database, and in the mailboxes
// themselves over IMAP (placement, rescue, \Seen, \Flagged, the threads of the replies, the
// Warmup folder).
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database, WarmupMessageRow } from '../../src/db/schema.js';
import { createEngine, type CycleSummary, type Engine } from '../../src/jobs/job-list.js';
import { newMessageId, planDay } from '../../src/engine/planner.js';
import { messageIdHost, replyPrefix, type ClientProfileName } from '../../src/engine/client-profile.js';
import { syncMailboxes } from '../../src/engine/reader.js';
import { sendDueMessages } from '../../src/engine/sender.js';
import { openImapSession, WARMUP_FOLDER, type FoundMessage } from '../../src/mail/imap.js';
import { countOpenMessages, createStackMailbox, storedClientProfile, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../mailstack/use-mail-stack.js';
import { JUNK_SENDERS, MAIL_USERS, type MailUser } from '../mailstack/users.js';

const users = MAIL_USERS.engine;
const WARMUP = { startVolume: 3, rampUpIncrement: 0, dailyLimit: 3, replyRate: 100, timezone: 'UTC' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithMailStack('warmup end to end on the real mail stack', () => {
  const stack = requireMailStack();
  // Real time: IMAP dates (SINCE) are the server's, so business time must not drift far from them.
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clock = fixedClock(start);
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids = new Map<string, string>(); // email → mailbox id
  const emailOf = new Map<string, string>(); // mailbox id → email
  const profileOf = new Map<string, ClientProfileName>(); // mailbox id → its mail program
  let minute = 0;

  function tick(): Date {
    minute += 1;
    clock.set(new Date(start.getTime() + minute * 60_000));
    return clock.now();
  }

  /**
   * Replies count against the day's budget like every send. This suite is about the mail flow, not
   * the bounds (send-bounds-e2e.test.ts), so the day gets room for every answer once it is planned.
   */
  async function roomForAnswers(extra: number): Promise<void> {
    await db
      .updateTable('mailbox_plans')
      .set({ target: sql<number>`target + ${extra}` })
      .where('day', '=', clock.now().toISOString().slice(0, 10))
      .execute();
  }

  /** Cycles until every planned message went out and every sent one was read and filed. */
  async function settle(): Promise<CycleSummary[]> {
    const cycles: CycleSummary[] = [];
    await planDay(engine.deps, tick(), { ignoreSchedule: true });
    await roomForAnswers(10);
    for (let i = 0; i < 15; i += 1) {
      const summary = await engine.runCycle({ at: tick(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      cycles.push(summary);
      if ((await countOpenMessages(db)) === 0) return cycles;
      // Postfix hands mail to Dovecot asynchronously; give it a moment before the next sync
      await sleep(200);
    }
    throw new Error(`not settled after ${cycles.length} cycles: ${await countOpenMessages(db)} messages open`);
  }

  async function snapshot() {
    const interactions = await db
      .selectFrom('interactions')
      .select(['mailbox_id', 'type', sql<number>`cast(count(*) as integer)`.as('n')])
      .groupBy(['mailbox_id', 'type'])
      .orderBy('mailbox_id')
      .orderBy('type')
      .execute();
    const rollups = await db.selectFrom('daily_stats').selectAll().orderBy('mailbox_id').orderBy('day').execute();
    const messages = await db
      .selectFrom('warmup_messages')
      .select(['id', 'status', 'found_at', 'engaged_at'])
      .orderBy('id')
      .execute();
    return { interactions, rollups, messages };
  }

  /** Where each message is in its recipient's mailbox, over IMAP (Warmup included). */
  async function locate(user: MailUser, messageIds: string[]): Promise<Map<string, FoundMessage>> {
    const session = await openImapSession(mailServerConfigs(stack, user).imap, { timeoutMs: 10_000 });
    try {
      const found = await session.findMessages(messageIds, { includeFolders: [WARMUP_FOLDER] });
      return new Map(found.map((f) => [f.messageId, f]));
    } finally {
      await session.close();
    }
  }

  function userOf(mailboxId: string): MailUser {
    const user = users.find((u) => u.email === emailOf.get(mailboxId));
    if (!user) throw new Error(`no stack user for ${mailboxId}`);
    return user;
  }

  beforeAll(async () => {
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    for (const user of users) {
      const id = await createStackMailbox(testApp.workspace, stack, user, { warmup: WARMUP });
      ids.set(user.email, id);
      emailOf.set(id, user.email);
      profileOf.set(id, (await storedClientProfile(db, id)).name);
    }
    engine = createEngine(testEngineDeps(testApp, { seed: 7, workerId: 'e2e-worker' }));
  });

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
  });

  it(
    'warms every mailbox up: sends its plan, files, rescues, reads, flags and answers in-thread',
    { timeout: 60_000 },
    async () => {
      const started = performance.now();
      const cycles = await settle();
      const seconds = (performance.now() - started) / 1000;

      const rows = await db.selectFrom('warmup_messages').selectAll().execute();
      const initial = rows.filter((r) => r.kind === 'initial');
      const replies = rows.filter((r) => r.kind === 'reply');
      console.info(
        `e2e: ${users.length} mailboxes, ${initial.length} initial messages and ${replies.length} replies ` +
          `settled in ${cycles.length} cycles, ${seconds.toFixed(1)} s`,
      );

      // Every mailbox sent exactly what the planner planned for it, and the API log says so.
      const today = start.toISOString().slice(0, 10);
      for (const [email, mailboxId] of ids) {
        const plan = await db
          .selectFrom('mailbox_plans')
          .selectAll()
          .where('mailbox_id', '=', mailboxId)
          .where('day', '=', today)
          .executeTakeFirstOrThrow();
        const own = initial.filter((r) => r.sender_mailbox_id === mailboxId);
        expect(plan.planned, email).toBeGreaterThanOrEqual(1);
        expect(
          own.map((r) => r.status),
          email,
        ).toEqual(Array(plan.planned).fill('sent'));
        const sentByIt = rows.filter((r) => r.sender_mailbox_id === mailboxId && r.status === 'sent').length;
        const log = await testApp.workspace.request({
          method: 'GET',
          url: `/api/mailboxes/${mailboxId}/interactions?type=sent&limit=100`,
        });
        expect(log.statusCode).toBe(200);
        expect((log.json() as { pagination: { total: number } }).pagination.total, email).toBe(sentByIt);
      }
      expect(rows.every((r) => r.status === 'sent' && r.found_at !== null && r.engaged_at !== null)).toBe(true);

      // Placement as the server filed it: the junk sender's mail in spam, everyone else's in the inbox.
      const junkId = ids.get(JUNK_SENDERS[0]);
      expect(junkId).toBeDefined();
      for (const row of rows) {
        expect(row.placement, `${emailOf.get(row.sender_mailbox_id)} → ${emailOf.get(row.recipient_mailbox_id)}`).toBe(
          row.sender_mailbox_id === junkId ? 'spam' : 'inbox',
        );
      }
      const fromJunk = rows.filter((r) => r.sender_mailbox_id === junkId);
      expect(fromJunk.length).toBeGreaterThan(0);

      const types = await db
        .selectFrom('interactions')
        .select(['mailbox_id', 'type', 'message_id', 'counterpart_mailbox_id'])
        .execute();
      const has = (mailboxId: string, type: string, messageId: string) =>
        types.some((t) => t.mailbox_id === mailboxId && t.type === type && t.message_id === messageId);

      // In the mailboxes themselves: everything is in Warmup, nothing left in INBOX or Junk; \Seen and
      // \Flagged exactly where opened and flagged were recorded; spam was rescued.
      const byRecipient = new Map<string, WarmupMessageRow[]>();
      for (const row of rows)
        byRecipient.set(row.recipient_mailbox_id, [...(byRecipient.get(row.recipient_mailbox_id) ?? []), row]);
      let opened = 0;
      for (const [recipientId, received] of byRecipient) {
        const where = await locate(
          userOf(recipientId),
          received.map((r) => r.message_id),
        );
        for (const row of received) {
          const found = where.get(row.message_id);
          expect(found?.folder, row.message_id).toBe(WARMUP_FOLDER);
          expect(has(recipientId, 'received', row.message_id)).toBe(true);
          expect(found?.seen, `\\Seen of ${row.message_id}`).toBe(has(recipientId, 'opened', row.message_id));
          expect(found?.flagged, `\\Flagged of ${row.message_id}`).toBe(has(recipientId, 'flagged', row.message_id));
          if (found?.seen) opened += 1;
          if (found?.flagged) expect(found.seen, `flagged, so read: ${row.message_id}`).toBe(true);
          if (row.sender_mailbox_id === junkId) {
            expect(has(recipientId, 'rescued', row.message_id)).toBe(true);
            expect(row.rescued_at).not.toBeNull();
          } else {
            expect(has(recipientId, 'rescued', row.message_id)).toBe(false);
          }
          if (row.kind === 'reply') {
            // a reply in the thread, as the original sender's server received it
            const parent = rows.find((r) => r.message_id === row.parent_message_id);
            expect(parent?.sender_mailbox_id).toBe(recipientId);
            expect(found?.inReplyTo).toBe(row.parent_message_id);
            expect(found?.references?.[0]).toBe(row.thread_id);
            expect(found?.references?.at(-1)).toBe(row.parent_message_id);
            const prefix = replyPrefix(profileOf.get(row.sender_mailbox_id)!, 'en');
            expect(found?.subject).toBe(`${prefix} ${rows.find((r) => r.message_id === row.thread_id)?.subject}`);
            // on the host the sender's mail client gives its Message-IDs (its domain, or Google's for the Gmail app)
            const host = messageIdHost(profileOf.get(row.sender_mailbox_id)!, emailOf.get(row.sender_mailbox_id) ?? '');
            expect(row.message_id.endsWith(`@${host}>`)).toBe(true);
          }
        }
      }
      // each mailbox opens and flags at its own rate (flagging 2–12 %: with this few messages, often none)
      expect(opened).toBeGreaterThan(0);

      // replyRate 100 times each mailbox's factor (0.8–1.2): most first messages were answered; each
      // answer is in the thread and was received by the original sender, and nothing else was answered
      const answered = initial.filter((row) => has(row.recipient_mailbox_id, 'replied', row.message_id));
      expect(answered.length).toBeGreaterThanOrEqual(initial.length / 2);
      for (const row of initial) {
        const reply = replies.find((r) => r.parent_message_id === row.message_id);
        if (!answered.includes(row)) {
          expect(reply, `no reply to ${row.message_id}`).toBeUndefined();
          continue;
        }
        expect(reply?.turn).toBe(2);
        expect(has(row.sender_mailbox_id, 'received', reply?.message_id ?? '')).toBe(true);
      }
      // nothing in any INBOX or Junk is ours any more
      for (const user of users) {
        const session = await openImapSession(mailServerConfigs(stack, user).imap, { timeoutMs: 10_000 });
        try {
          expect(await session.findMessages(rows.map((r) => r.message_id))).toEqual([]);
        } finally {
          await session.close();
        }
      }

      // Rollups equal the interactions they count (deliverability counts for the sender).
      const rollups = await db.selectFrom('daily_stats').selectAll().execute();
      const sum = (
        mailboxId: string,
        column: 'sent' | 'received' | 'inbox' | 'spam' | 'rescued' | 'opened' | 'flagged' | 'replied',
      ) => rollups.filter((r) => r.mailbox_id === mailboxId).reduce((total, r) => total + Number(r[column]), 0);
      for (const mailboxId of ids.values()) {
        const sentBy = rows.filter((r) => r.sender_mailbox_id === mailboxId);
        const peers = (type: string) =>
          types.filter((t) => t.type === type && t.counterpart_mailbox_id === mailboxId && t.mailbox_id !== mailboxId)
            .length;
        expect(sum(mailboxId, 'sent')).toBe(sentBy.length);
        expect(sum(mailboxId, 'received')).toBe(rows.filter((r) => r.recipient_mailbox_id === mailboxId).length);
        expect(sum(mailboxId, mailboxId === junkId ? 'spam' : 'inbox')).toBe(sentBy.length);
        for (const column of ['rescued', 'opened', 'flagged', 'replied'] as const)
          expect(sum(mailboxId, column), column).toBe(peers(column));
      }

      // The junk sender's reputation ends below everyone else's.
      const reputations = new Map<string, number>();
      for (const [email, mailboxId] of ids) {
        const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailboxId}` });
        reputations.set(email, (response.json() as { mailbox: { reputation: number } }).mailbox.reputation);
      }
      const junkReputation = reputations.get(JUNK_SENDERS[0]) ?? 100;
      const others = [...reputations.entries()]
        .filter(([email]) => email !== JUNK_SENDERS[0])
        .map(([, score]) => score);
      console.info(
        `e2e reputations: ${[...reputations.entries()].map(([email, score]) => `${email} ${score}`).join(', ')}`,
      );
      expect(junkReputation).toBeLessThan(Math.min(...others));
    },
  );

  it('changes no count when a cycle runs again', { timeout: 30_000 }, async () => {
    const before = await snapshot();
    const summary = await engine.runCycle({ at: tick(), ignoreSchedule: true });
    expect(summary.errors).toEqual([]);
    expect(summary.send).toMatchObject({ claimed: 0, sent: 0 });
    expect(summary.sync).toMatchObject({ received: 0, opened: 0, flagged: 0, rescued: 0, replied: 0, filed: 0 });
    const after = await snapshot();
    expect(after.interactions).toEqual(before.interactions);
    expect(after.messages).toEqual(before.messages);
    // only the reputation of the day may be written again, with the same value
    expect(after.rollups).toEqual(before.rollups);
  });

  it('moves a burst of mail through send and sync', { timeout: 30_000 }, async () => {
    const PER_MAILBOX = 8;
    const now = tick();
    const mailboxIds = [...ids.values()];
    const burst: string[] = [];
    const values = [];
    for (let i = 0; i < mailboxIds.length; i += 1) {
      for (let k = 1; k <= PER_MAILBOX; k += 1) {
        const sender = mailboxIds[i];
        const recipient = mailboxIds[(i + 1 + (k % (mailboxIds.length - 1))) % mailboxIds.length];
        const messageId = newMessageId(emailOf.get(sender) ?? '', profileOf.get(sender)!);
        burst.push(messageId);
        values.push({
          id: `msg_burst_${i}_${k}`,
          message_id: messageId,
          thread_id: messageId,
          sender_mailbox_id: sender,
          recipient_mailbox_id: recipient,
          kind: 'initial',
          turn: 1,
          plan_day: now.toISOString().slice(0, 10),
          due_at: now.toISOString(),
          status: 'planned',
          created_at: now.toISOString(),
        });
      }
    }
    await db.insertInto('warmup_messages').values(values).execute();
    // no answers: this measures one pass of send → deliver → find → read → file
    await db
      .updateTable('mailboxes')
      .set({ warmup: JSON.stringify({ ...WARMUP, replyRate: 0 }) })
      .execute();
    await roomForAnswers(burst.length);
    const deps = testEngineDeps(testApp, { seed: 11, workerId: 'e2e-burst' });

    const t0 = performance.now();
    const sent = await sendDueMessages(deps, { now, ignoreSchedule: true });
    const t1 = performance.now();
    expect(sent.sent).toBe(burst.length);
    let syncs = 0;
    for (;;) {
      syncs += 1;
      await syncMailboxes(deps, { now, ignoreSchedule: true });
      const pending = await db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('message_id', 'in', burst)
        .where('engaged_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(pending.n) === 0) break;
      expect(syncs).toBeLessThan(20);
      await sleep(100);
    }
    const t2 = performance.now();
    const n = burst.length;
    console.info(
      `e2e burst: ${n} messages; send ${((t1 - t0) / 1000).toFixed(2)} s (${(n / ((t1 - t0) / 1000)).toFixed(1)} msg/s), ` +
        `send + sync until all filed ${((t2 - t0) / 1000).toFixed(2)} s (${(n / ((t2 - t0) / 1000)).toFixed(1)} msg/s, ${syncs} syncs)`,
    );
  });
});
