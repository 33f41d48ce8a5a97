// Gmail placement end to end: gwen reads her mail on a Gmail-like IMAP server (X-GM-EXT-1, tabs in
// INBOX, [Gmail]/Spam, [Gmail]/All Mail; test/helpers/gmail-imap-server.ts), everyone else is an
// ordinary mailbox of the real mail stack. Every email for gwen passes through the real Postfix and
// Dovecot first; the test then hands it to the Gmail-like server, which files it as Gmail would for
// its sender: gus's in Primary, pam's in Promotions, uli's in Updates, sid's in Spam. This server
// lets a client take Promotions mail to Primary by removing its CATEGORY_ label, not Updates mail.
// Engine cycles as `run-once --ignore-schedule` runs them. Checked: the placement of each email
// (promotions for both tabs, the tab kept), the move to Primary counted only where it took effect,
// \Important on rescued and answered mail, spam found in [Gmail]/Spam and moved out, every email
// counted once although All Mail holds it too, gwen's own mail that is not warmup left as it was,
// the placement statistics per provider, and the moves to Primary in the engagement statistics,
// each counted once however often the reader takes the step.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { createEngine, type CycleSummary, type Engine } from '../../src/jobs/job-list.js';
import { openImapSession } from '../../src/mail/imap.js';
import { countOpenMessages, createStackMailbox, planDayWith, proveAll, testEngineDeps } from '../helpers/engine.js';
import {
  startGmailServerForStack,
  type GmailDelivery,
  type GmailImapServer,
  type GmailStoredMessage,
} from '../helpers/gmail-imap-server.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';

const [gwen, gus, pam, uli, sid] = MAIL_USERS.gmail;
const WARMUP = { startVolume: 4, rampUpIncrement: 0, dailyLimit: 4, replyRate: 100, timezone: 'UTC' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How Gmail files mail for gwen, by its sender. */
function filing(raw: Buffer): GmailDelivery {
  const head = raw.toString('latin1', 0, Math.min(raw.length, 64 * 1024)).toLowerCase();
  const from = /^from:.*$/m.exec(head)?.[0] ?? '';
  if (from.includes(pam.email)) return { category: 'promotions' };
  if (from.includes(uli.email)) return { category: 'updates' };
  if (from.includes(sid.email)) return { spam: true };
  return { category: 'primary' };
}

describeWithMailStack('Gmail placement end to end (a Gmail-like IMAP server behind the real mail stack)', () => {
  const stack = requireMailStack();
  // business time inside the default send window, whatever the hour the suite runs at
  const start = new Date(`${new Date().toISOString().slice(0, 10)}T10:00:00.000Z`);
  const clock = fixedClock(start);
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  let gmail: GmailImapServer;
  const ids = new Map<string, string>();
  let minute = 0;
  let relayed = 0;

  /** gwen's deliveries on the stack, handed to the Gmail-like server and removed from Dovecot. */
  async function relay(): Promise<void> {
    const session = await openImapSession(mailServerConfigs(stack, gwen).imap, { timeoutMs: 10_000 });
    try {
      for (const folder of ['INBOX', 'Junk']) {
        const messages = await session.findOlderThan(folder, new Date(Date.now() + 86_400_000), 100);
        for (const message of messages) {
          gmail.deliver(gwen.email, await session.fetchRaw(folder, message.uid));
          relayed += 1;
        }
        await session.remove(
          folder,
          messages.map((m) => m.uid),
        );
      }
    } finally {
      await session.close();
    }
  }

  beforeAll(async () => {
    gmail = await startGmailServerForStack(stack, {
      users: [gwen],
      classify: filing,
      writableCategories: ['promotions'],
    });
    testApp = await createTestApp({ clock });
    db = testApp.database.db;
    // gwen is a Gmail mailbox whose IMAP is the Gmail-like server; she sends through the stack
    const created = await testApp.workspace.request({
      method: 'POST',
      url: '/api/mailboxes',
      payload: {
        email: gwen.email,
        password: gwen.password,
        provider: 'gmail',
        connectionType: 'imap',
        imap: { host: stack.host, port: gmail.port, secure: true },
        smtp: { host: stack.host, port: stack.submissionPort, secure: false },
        warmup: WARMUP,
        verify: true,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    ids.set(gwen.email, (created.json() as { mailbox: { id: string } }).mailbox.id);
    for (const user of [gus, pam, uli, sid]) {
      ids.set(user.email, await createStackMailbox(testApp.workspace, stack, user, { warmup: WARMUP }));
    }
    await proveAll(db);
    engine = createEngine(testEngineDeps(testApp, { seed: 11, workerId: 'gmail-e2e' }));
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
    await gmail?.close();
  });

  it(
    'records Gmail tabs as placement, rescues to Primary only where Gmail shows it, and marks Important',
    { timeout: 120_000 },
    async () => {
      // gwen's own mail, not warmup: a newsletter in Promotions and a spam email
      const own = (id: string, subject: string) =>
        Buffer.from(
          `From: News <news@shop.example>\r\nTo: ${gwen.email}\r\nSubject: ${subject}\r\nMessage-ID: <${id}>\r\nDate: Mon, 03 Mar 2025 09:00:00 +0000\r\n\r\nBuy now.\r\n`,
        );
      const newsletter = gmail.deliver(gwen.email, own('news-1@shop.example', 'Weekly deals'), {
        category: 'promotions',
      });
      const junk = gmail.deliver(gwen.email, own('junk-1@shop.example', 'You won'), { spam: true });
      const untouched = (m: GmailStoredMessage) => ({
        labels: [...m.labels].sort(),
        flags: [...m.flags].sort(),
        category: m.category,
      });
      const newsletterBefore = untouched(newsletter);
      const junkBefore = untouched(junk);

      clock.set(new Date(start.getTime() + ++minute * 60_000));
      // each of the four writes to gwen today
      const gwenId = ids.get(gwen.email)!;
      await planDayWith(engine.deps, clock.now(), (planned) =>
        [gus, pam, uli, sid].every((user) =>
          planned.some((m) => m.sender_mailbox_id === ids.get(user.email) && m.recipient_mailbox_id === gwenId),
        ),
      );
      // replies count against the day's budget; this suite is about reading, so the day has room for them
      await db
        .updateTable('mailbox_plans')
        .set({ target: sql<number>`target + 10` })
        .execute();
      const cycles: CycleSummary[] = [];
      for (let i = 0; i < 15 && (i === 0 || (await countOpenMessages(db)) > 0); i += 1) {
        clock.set(new Date(start.getTime() + ++minute * 60_000));
        const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
        expect(summary.errors).toEqual([]);
        cycles.push(summary);
        await sleep(300); // Postfix hands mail to Dovecot asynchronously
        await relay();
      }
      expect(await countOpenMessages(db)).toBe(0);

      const received = await db
        .selectFrom('warmup_messages as w')
        .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
        .select(['w.message_id', 'w.placement', 'w.gmail_category', 'w.promoted_at', 'w.rescued_at', 's.email'])
        .where('w.recipient_mailbox_id', '=', gwenId)
        .where('w.found_at', 'is not', null)
        .execute();
      const fromSender = (email: string) => received.filter((row) => row.email === email);
      // each of the four sent to gwen on the day, every one found
      for (const user of [gus, pam, uli, sid]) expect(fromSender(user.email).length).toBeGreaterThan(0);
      for (const row of fromSender(gus.email)) {
        expect(row).toMatchObject({ placement: 'inbox', gmail_category: 'primary', promoted_at: null });
      }
      // Promotions: placement promotions, taken to Primary, and counted because Gmail showed it
      for (const row of fromSender(pam.email)) {
        expect(row).toMatchObject({ placement: 'promotions', gmail_category: 'promotions' });
        expect(row.promoted_at).not.toBeNull();
        expect(row.rescued_at).toBeNull();
      }
      // Updates counts as promotions (not Primary); the move was tried, Gmail kept it there: not counted
      for (const row of fromSender(uli.email)) {
        expect(row).toMatchObject({ placement: 'promotions', gmail_category: 'updates', promoted_at: null });
      }
      // [Gmail]/Spam is spam, and the mail was moved out of it
      for (const row of fromSender(sid.email)) {
        expect(row).toMatchObject({ placement: 'spam', gmail_category: null, promoted_at: null });
        expect(row.rescued_at).not.toBeNull();
      }
      const promoted = cycles.reduce((sum, c) => sum + (c.sync?.promoted ?? 0), 0);
      expect(promoted).toBe(fromSender(pam.email).length);

      // in the Gmail-like store: each warmup email once, filed under Warmup, out of INBOX and spam
      const inbound = gmail.messages(gwen.email).filter((m) => !m.labels.has('\\Sent'));
      const stored = new Map(inbound.map((m) => [m.messageId, m]));
      expect(stored.size).toBe(relayed + 2);
      const replied = new Set(
        (
          await db
            .selectFrom('interactions')
            .select('message_id')
            .where('mailbox_id', '=', gwenId)
            .where('type', '=', 'replied')
            .execute()
        ).map((row) => row.message_id),
      );
      for (const row of received) {
        const message = stored.get(row.message_id);
        expect(message, row.message_id).toBeDefined();
        expect(message!.labels.has('Warmup'), row.message_id).toBe(true);
        expect(message!.labels.has('\\Inbox') || message!.labels.has('\\Spam') || message!.labels.has('\\Trash')).toBe(
          false,
        );
        const rescuedOrTried = row.email === pam.email || row.email === uli.email || row.email === sid.email;
        const answered = replied.has(row.message_id);
        expect(message!.labels.has('\\Important'), `${row.email} ${row.message_id}`).toBe(rescuedOrTried || answered);
        if (row.email === pam.email) expect(message!.category).toBe('primary');
        if (row.email === uli.email) expect(message!.category).toBe('updates');
      }
      expect(replied.size).toBeGreaterThan(0);
      // counted once: one received interaction per found email, though All Mail holds each too
      const receivedInteractions = await db
        .selectFrom('interactions')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('mailbox_id', '=', gwenId)
        .where('type', '=', 'received')
        .executeTakeFirstOrThrow();
      expect(Number(receivedInteractions.n)).toBe(received.length);
      const summed = cycles.reduce((sum, c) => sum + (c.sync?.received ?? 0), 0);
      expect(summed).toBeGreaterThanOrEqual(received.length);

      // gwen's own mail: not touched
      expect(untouched(newsletter)).toEqual(newsletterBefore);
      expect(untouched(junk)).toEqual(junkBefore);

      // the placement per provider: Gmail's share of promotions and spam as gwen found them
      const placement = await testApp.workspace.request({ method: 'GET', url: '/api/stats/placement?period=7d' });
      expect(placement.statusCode, placement.body).toBe(200);
      const byProvider = (
        placement.json() as {
          placement: { byProvider: Array<{ provider: string; inbox: number; spam: number; promotions: number }> };
        }
      ).placement.byProvider;
      const gmailRow = byProvider.find((row) => row.provider === 'gmail');
      expect(gmailRow).toMatchObject({
        inbox: fromSender(gus.email).length,
        promotions: fromSender(pam.email).length + fromSender(uli.email).length,
        spam: fromSender(sid.email).length,
      });
    },
  );

  it(
    'counts each move to Primary once in the engagement statistics, however often the reader takes the step',
    { timeout: 60_000 },
    async () => {
      const engagement = async (mailboxId?: string) => {
        const query = mailboxId === undefined ? '' : `&mailboxId=${mailboxId}`;
        const res = await testApp.workspace.request({ method: 'GET', url: `/api/stats/engagement?period=7d${query}` });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json() as { engagement: Record<string, number> }).engagement;
      };
      const gwenId = ids.get(gwen.email)!;
      const moved = await db
        .selectFrom('warmup_messages')
        .select(['id', 'message_id'])
        .where('sender_mailbox_id', '=', ids.get(pam.email)!)
        .where('recipient_mailbox_id', '=', gwenId)
        .where('promoted_at', 'is not', null)
        .execute();
      expect(moved.length).toBeGreaterThan(0);
      // pam's mail was found in Promotions and every one taken to Primary; uli's stayed in Updates
      expect(await engagement(ids.get(pam.email))).toMatchObject({
        promotedToPrimary: moved.length,
        promotedToPrimaryRate: 100,
      });
      expect(await engagement(ids.get(uli.email))).toMatchObject({ promotedToPrimary: 0, promotedToPrimaryRate: 0 });
      const before = await engagement();
      expect(before.promotedToPrimary).toBe(moved.length);

      // The reader takes the step again, as a worker restarted on the stored plan would: the email
      // is back in INBOX, Gmail shows it in Primary since the move, so the move answers true again.
      const [again] = moved;
      const stored = gmail.messages(gwen.email).find((m) => m.messageId === again!.message_id)!;
      expect(stored.category).toBe('primary');
      stored.labels.delete('Warmup');
      stored.labels.add('\\Inbox');
      await db
        .updateTable('warmup_messages')
        .set({ engaged_at: null, rescue_due_at: clock.now().toISOString() })
        .where('id', '=', again!.id)
        .execute();
      const commandsBefore = gmail.commands.length;
      clock.set(new Date(start.getTime() + ++minute * 60_000));
      const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      // the step was taken (the label removed again, the email filed again), and not counted
      expect(gmail.commands.slice(commandsBefore).some((line) => line.includes('-X-GM-LABELS'))).toBe(true);
      expect(summary.sync).toMatchObject({ promoted: 0, filed: 1 });
      expect(stored.labels.has('Warmup')).toBe(true);
      expect(await engagement()).toEqual(before);
    },
  );
});
