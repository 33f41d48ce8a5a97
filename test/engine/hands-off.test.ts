// Hands off the owner's mail, end to end on a Postfix + Dovecot of this file's own that plays an
// older server: its IMAP announces neither MOVE nor UIDPLUS, so every move is COPY + \Deleted and
// a plain EXPUNGE would remove every \Deleted message of a folder. One of its users answers every
// sender automatically (Sieve vacation), like an owner out of office.
// - after many engine cycles the owners' own INBOX and Junk mail, \Deleted included, is untouched
//   and Dovecot expunged nothing; a reply a person wrote to a warmup thread is filed into Warmup
//   and counted nowhere;
// - the automatic replies are filed into Warmup, the mailbox that sends them receives no warmup
//   mail from then on, and the API says why on that mailbox;
// - a delivery report is downloaded once across cycles (Dovecot's own count of body fetches);
// - the Warmup folder gives up old warmup mail after the retention days, and nothing else.
import { ImapFlow } from 'imapflow';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import { syncMailboxes } from '../../src/engine/reader.js';
import { openImapSession, WARMUP_FOLDER } from '../../src/mail/imap.js';
import { createSmtpSender } from '../../src/mail/smtp.js';
import { createStackMailbox, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import { describeWithMailStack, mailServerConfigs, stackMailPolicy } from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const owen = user('owen@owner-one.test');
const olive = user('olive@owner-two.test');
const otto = user('otto@owner-three.test'); // answers automatically
const opal = user('opal@owner-four.test');
const dora = user('dora@dsn-one.test');
const dirk = user('dirk@dsn-two.test');
const CYCLE_USERS = [owen, olive, otto, opal];

/** Dovecot's own list without MOVE and UIDPLUS (and without CONDSTORE/QRESYNC, which imply neither). */
const OLD_SERVER_CAPABILITIES =
  'IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT THREAD=REFERENCES MULTIAPPEND UNSELECT CHILDREN NAMESPACE LIST-EXTENDED I18NLEVEL=1 ESEARCH SEARCHRES WITHIN LIST-STATUS BINARY LITERAL+ SPECIAL-USE';
/** The same with UIDPLUS: a move is COPY, then UID EXPUNGE of exactly the moved message. */
const UIDPLUS_ONLY_CAPABILITIES = `${OLD_SERVER_CAPABILITIES} UIDPLUS`;
const WARMUP = { startVolume: 3, rampUpIncrement: 0, dailyLimit: 3, replyRate: 100, timezone: 'UTC' };
const DAY_MS = 24 * 60 * 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StoredMessage {
  uid: number;
  messageId: string;
  subject: string;
  flags: string[];
}

let stack: PrivateMailStack;

/** A plain IMAP client, to look at a mailbox the way its owner's mail program does. */
async function withClient<T>(account: MailUser, work: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = new ImapFlow({
    host: stack.host,
    port: stack.imapPort,
    secure: false,
    auth: { user: account.email, pass: account.password },
    tls: { ca: readFileSync(stack.caCert, 'utf8'), servername: 'localhost' },
    logger: false,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.logout();
  }
}

async function contents(account: MailUser, folder: string): Promise<StoredMessage[]> {
  return withClient(account, async (client) => {
    const exists = (await client.list()).some((f) => f.path === folder);
    if (!exists) return [];
    const lock = await client.getMailboxLock(folder);
    try {
      if (!client.mailbox || client.mailbox.exists === 0) return [];
      const messages = await client.fetchAll('1:*', { uid: true, flags: true, envelope: true });
      return messages.map((m) => ({
        uid: m.uid,
        messageId: m.envelope?.messageId ?? '',
        subject: m.envelope?.subject ?? '',
        flags: [...(m.flags ?? [])],
      }));
    } finally {
      lock.release();
    }
  });
}

async function append(account: MailUser, folder: string, raw: string, flags: string[] = [], date?: Date) {
  await withClient(account, async (client) => {
    if (!(await client.list()).some((f) => f.path === folder)) await client.mailboxCreate(folder);
    await client.append(folder, raw, flags, date);
  });
}

function ownerMessage(account: MailUser, messageId: string, subject: string): string {
  return [
    `From: A friend <friend@elsewhere.test>`,
    `To: ${account.email}`,
    `Subject: ${subject}`,
    `Message-ID: ${messageId}`,
    `Date: ${new Date().toUTCString()}`,
    '',
    'Mail of the owner, none of the engine’s business.',
    '',
  ].join('\r\n');
}

/** An answer to `parentId` from outside the pool: a person's, or an automatic one with `signs`. */
function answerTo(parentId: string, messageId: string | null, signs: string[], text: string): string {
  return [
    `From: A friend <friend@elsewhere.test>`,
    `To: ${dirk.email}`,
    `Subject: Re: Quarterly numbers`,
    ...(messageId === null ? [] : [`Message-ID: ${messageId}`]),
    `In-Reply-To: ${parentId}`,
    `References: ${parentId}`,
    ...signs,
    `Date: ${new Date().toUTCString()}`,
    '',
    text,
    '',
  ].join('\r\n');
}

/**
 * Dovecot's closing line of every IMAP session of `account`: what it fetched and expunged. The user is
 * read from the test stack's logout format: Dovecot sometimes drops the `imap(user)` prefix of a
 * process that exits at once.
 */
function sessionLines(account: MailUser): string[] {
  const log = readFileSync(join(stack.dir, 'log/dovecot.log'), 'utf8');
  return log
    .split('\n')
    .filter((line) => line.includes(' expunged=') && line.includes(` user=<${account.email}> session=<`));
}

function counter(line: string, name: string): number {
  const match = new RegExp(`\\b${name}=(\\d+)`).exec(line);
  if (!match) throw new Error(`no ${name} in ${line}`);
  return Number(match[1]);
}

const isDeleted = (m: StoredMessage) => m.flags.includes('\\Deleted');

describeWithMailStack('hands off the owner’s mail, on a server without MOVE and UIDPLUS', () => {
  beforeAll(async () => {
    stack = await startPrivateMailStack('handsoff', [...CYCLE_USERS, dora, dirk], {
      imapCapability: OLD_SERVER_CAPABILITIES,
      vacationRecipients: [otto.email],
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  }, 30_000);

  describe('many engine cycles among four mailboxes, one of them answering automatically', () => {
    // Real time: IMAP dates (SINCE) are the server's, so business time must not drift far from them.
    const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const clock = fixedClock(start);
    let testApp: TestApp;
    let db: Kysely<Database>;
    let engine: Engine;
    const ids = new Map<string, string>();
    let minute = 0;

    async function cycles(count: number, dayOffset = 0): Promise<void> {
      for (let i = 0; i < count; i += 1) {
        // ten minutes a cycle: answers are looked for at least hourly, whatever else is due
        minute += 10;
        clock.set(new Date(start.getTime() + dayOffset * DAY_MS + minute * 60_000));
        const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
        expect(summary.errors).toEqual([]);
        // Postfix hands mail (and Sieve its automatic replies) to Dovecot asynchronously
        await sleep(300);
      }
    }

    beforeAll(async () => {
      testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
      db = testApp.database.db;
      for (const u of CYCLE_USERS) {
        ids.set(u.email, await createStackMailbox(testApp.workspace, stack, u, { warmup: WARMUP }));
      }
      for (const u of CYCLE_USERS) {
        await append(u, 'INBOX', ownerMessage(u, `<keep@${u.email}>`, 'Dinner on Friday?'));
        await append(u, 'INBOX', ownerMessage(u, `<bin@${u.email}>`, 'Old newsletter'), ['\\Deleted', '\\Seen']);
        await append(u, 'Junk', ownerMessage(u, `<junk@${u.email}>`, 'You won a prize'));
      }
      engine = createEngine(testEngineDeps(testApp, { seed: 11 }));
    }, 120_000);

    afterAll(async () => {
      await engine?.stop();
      await testApp?.close();
    });

    it(
      'leaves the owners’ mail alone, files human and automatic replies away, and stops mailing the absent owner',
      { timeout: 300_000 },
      async () => {
        await cycles(8);

        // A person answers a warmup thread by hand: the owner of a mailbox replies to a warmup email
        // it got from another of the mailboxes that do not answer automatically (which of them wrote
        // to which is the planner's draw: a day of two sends may leave out any one partner).
        const people = [owen, olive, opal];
        const idsOf = people.map((u) => ids.get(u.email)!);
        const thread = await db
          .selectFrom('warmup_messages')
          .selectAll()
          .where('sender_mailbox_id', 'in', idsOf)
          .where('recipient_mailbox_id', 'in', idsOf)
          .where('status', '=', 'sent')
          .orderBy('sent_at')
          .executeTakeFirstOrThrow();
        const writer = people.find((u) => ids.get(u.email) === thread.sender_mailbox_id)!;
        const replier = people.find((u) => ids.get(u.email) === thread.recipient_mailbox_id)!;
        const humanId = `<hand-written-1@${replier.email.split('@')[1]}>`;
        const smtp = createSmtpSender(mailServerConfigs(stack, replier).smtp, { timeoutMs: 10_000 });
        try {
          await smtp.send({
            from: { address: replier.email },
            to: { address: writer.email },
            subject: `Re: ${thread.subject ?? ''}`,
            text: 'Thanks, I will call you tomorrow.',
            html: '<p>Thanks, I will call you tomorrow.</p>',
            messageId: humanId,
            inReplyTo: thread.message_id,
            references: [thread.message_id],
          });
        } finally {
          smtp.close();
        }
        await sleep(500);
        await cycles(12);

        // 1. The owners' own mail: there, unflagged, its \Deleted message too; nothing was expunged.
        for (const u of CYCLE_USERS) {
          const inbox = await contents(u, 'INBOX');
          const keep = inbox.find((m) => m.messageId === `<keep@${u.email}>`);
          const bin = inbox.find((m) => m.messageId === `<bin@${u.email}>`);
          expect(keep, `${u.email} INBOX`).toBeDefined();
          expect(keep!.flags).toEqual([]);
          expect(bin, `${u.email} \\Deleted message`).toBeDefined();
          expect(bin!.flags.sort()).toEqual(['\\Deleted', '\\Seen']);
          const junk = await contents(u, 'Junk');
          expect(junk.find((m) => m.messageId === `<junk@${u.email}>`)?.flags).toEqual([]);
          const lines = sessionLines(u);
          expect(lines.length).toBeGreaterThan(5);
          for (const line of lines) expect(counter(line, 'expunged'), line).toBe(0);
        }

        // 2. The hand-written reply: in the writer's Warmup folder, left \Deleted in the INBOX, counted nowhere.
        const writerWarmup = await contents(writer, WARMUP_FOLDER);
        expect(writerWarmup.filter((m) => m.messageId === humanId && !isDeleted(m))).toHaveLength(1);
        expect((await contents(writer, 'INBOX')).filter((m) => m.messageId === humanId && !isDeleted(m))).toEqual([]);
        const counted = await db.selectFrom('interactions').select('message_id').execute();
        expect(counted.map((r) => r.message_id)).not.toContain(humanId);

        // 3. The automatic replies: filed into Warmup of every mailbox that wrote to otto, none left
        //    in an inbox, none counted.
        const wroteToOtto = await db
          .selectFrom('warmup_messages')
          .innerJoin('mailboxes', 'mailboxes.id', 'warmup_messages.sender_mailbox_id')
          .select('mailboxes.email')
          .distinct()
          .where('warmup_messages.recipient_mailbox_id', '=', ids.get(otto.email)!)
          .where('warmup_messages.status', '=', 'sent')
          .execute();
        expect(wroteToOtto.length).toBeGreaterThan(0);
        for (const { email } of wroteToOtto) {
          const sender = CYCLE_USERS.find((u) => u.email === email)!;
          const automatic = (m: StoredMessage) => m.subject.startsWith('Automatic reply:') && !isDeleted(m);
          expect((await contents(sender, WARMUP_FOLDER)).filter(automatic).length, email).toBeGreaterThan(0);
          expect((await contents(sender, 'INBOX')).filter(automatic), email).toEqual([]);
        }
        const known = new Set(
          (await db.selectFrom('warmup_messages').select('message_id').execute()).map((r) => r.message_id),
        );
        for (const { message_id } of counted) expect(known.has(message_id)).toBe(true);

        // 4. Otto is told why, on the mailbox in the API; the others are not concerned.
        const response = await testApp.workspace.request({
          method: 'GET',
          url: `/api/mailboxes/${ids.get(otto.email)}`,
        });
        const { mailbox } = response.json() as {
          mailbox: {
            autoReply: { lastSeenAt: string; receivesAgainAt: string; reason: string } | null;
            outlook: { attention: Array<{ kind: string; message: string }> };
          };
        };
        expect(mailbox.autoReply).not.toBeNull();
        expect(mailbox.autoReply!.reason).toMatch(/answers warmup mail automatically/);
        // … and it is on the "Needs attention" list, with the same words
        expect(mailbox.outlook.attention).toContainEqual({ kind: 'auto_reply', message: mailbox.autoReply!.reason });
        expect(new Date(mailbox.autoReply!.receivesAgainAt).getTime()).toBeGreaterThan(clock.now().getTime());
        const owenView = await testApp.workspace.request({
          method: 'GET',
          url: `/api/mailboxes/${ids.get(owen.email)}`,
        });
        expect((owenView.json() as { mailbox: { autoReply: unknown } }).mailbox.autoReply).toBeNull();

        // 5. From the first automatic reply on, nothing new is addressed to otto: not today's
        //    replies, not the next day's plan, while the others still receive theirs.
        await cycles(6, 1);
        const since = mailbox.autoReply!.lastSeenAt;
        const later = await db
          .selectFrom('warmup_messages')
          .select(['recipient_mailbox_id', 'created_at'])
          .where('created_at', '>', since)
          .execute();
        expect(later.length).toBeGreaterThan(0);
        expect(later.filter((r) => r.recipient_mailbox_id === ids.get(otto.email))).toEqual([]);

        // 6. Its owner is back and resumes it: it receives warmup mail again at once.
        const resumed = await testApp.workspace.request({
          method: 'POST',
          url: `/api/mailboxes/${ids.get(otto.email)}/resume`,
        });
        expect(resumed.statusCode).toBe(200);
        expect((resumed.json() as { mailbox: { autoReply: unknown } }).mailbox.autoReply).toBeNull();
      },
    );
  });

  describe('delivery reports and the Warmup folder', () => {
    const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const clock = fixedClock(start);
    let testApp: TestApp;
    let db: Kysely<Database>;
    const ids = new Map<string, string>();

    beforeAll(async () => {
      testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
      db = testApp.database.db;
      for (const u of [dora, dirk]) {
        ids.set(
          u.email,
          await createStackMailbox(testApp.workspace, stack, u, { warmup: { ...WARMUP, replyRate: 0 } }),
        );
      }
    }, 60_000);

    afterAll(async () => {
      await testApp?.close();
    });

    /** A warmup email dora sent dirk; `finished`: dirk already found and filed it. */
    async function sentByDora(messageId: string, at: Date, finished = false): Promise<void> {
      await db
        .insertInto('warmup_messages')
        .values({
          id: `wm_${messageId.slice(1, 12)}`,
          message_id: messageId,
          thread_id: messageId,
          sender_mailbox_id: ids.get(dora.email)!,
          recipient_mailbox_id: ids.get(dirk.email)!,
          kind: 'initial',
          turn: 1,
          subject: 'Quarterly numbers',
          plan_day: at.toISOString().slice(0, 10),
          due_at: at.toISOString(),
          status: 'sent',
          sent_at: at.toISOString(),
          ...(finished
            ? { found_at: at.toISOString(), engaged_at: at.toISOString(), placement: 'inbox' as const }
            : {}),
          created_at: at.toISOString(),
        })
        .execute();
    }

    function deliveryReport(messageId: string, id: string): string {
      const boundary = 'report-boundary';
      return [
        'From: Mail Delivery System <MAILER-DAEMON@mail.test>',
        `To: ${dora.email}`,
        'Subject: Undelivered Mail Returned to Sender',
        `Message-ID: ${id}`,
        `Date: ${new Date().toUTCString()}`,
        `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
        '',
        `--${boundary}`,
        'Content-Type: text/plain',
        '',
        'Your message could not be delivered.',
        `--${boundary}`,
        'Content-Type: message/delivery-status',
        '',
        'Final-Recipient: rfc822; nobody@dsn-two.test',
        'Action: failed',
        'Status: 5.1.1',
        'Diagnostic-Code: smtp; 550 5.1.1 no such user',
        `--${boundary}`,
        'Content-Type: text/rfc822-headers',
        '',
        `Message-ID: ${messageId}`,
        `--${boundary}--`,
        '',
      ].join('\r\n');
    }

    it('downloads each delivery report once, however many cycles scan for them', { timeout: 120_000 }, async () => {
      const ours = '<bounced-1@dsn-one.test>';
      await sentByDora(ours, start);
      // still on its way: dora's syncs keep looking for reports of it
      await sentByDora('<pending-2@dsn-one.test>', start);
      await append(dora, 'INBOX', deliveryReport(ours, '<dsn-ours@mail.test>'));
      // the owner's own bounce (not warmup mail): stays in the INBOX, so each scan could see it again
      await append(dora, 'INBOX', deliveryReport('<owners-own@dsn-one.test>', '<dsn-owner@mail.test>'));
      const deps = testEngineDeps(testApp, { seed: 3 });

      // Dovecot writes a session's closing line as the session ends: let the earlier ones land
      const settle = () => sleep(1_000);
      const bodiesFetched = (lines: string[]) => lines.reduce((sum, line) => sum + counter(line, 'body_count'), 0);
      await settle();
      const before = sessionLines(dora).length;
      const first = await syncMailboxes(deps, { now: start, ignoreSchedule: true });
      expect(first.bounced).toBe(1);
      await settle();
      const afterFirst = sessionLines(dora).length;
      // the first scan downloads both reports
      expect(bodiesFetched(sessionLines(dora).slice(before))).toBeGreaterThanOrEqual(2);
      for (let i = 1; i <= 4; i += 1) {
        clock.set(new Date(start.getTime() + i * 5 * 60_000));
        await syncMailboxes(deps, { now: clock.now(), ignoreSchedule: true });
      }
      await settle();
      // four more sessions that scanned INBOX and Junk again, and downloaded no body at all
      const later = sessionLines(dora).slice(afterFirst);
      expect(later).toHaveLength(4);
      expect(bodiesFetched(later)).toBe(0);
      // the owner's report is where it was, untouched; ours was filed into Warmup
      const inbox = await contents(dora, 'INBOX');
      expect(inbox.find((m) => m.messageId === '<dsn-owner@mail.test>')?.flags).toEqual([]);
      expect((await contents(dora, WARMUP_FOLDER)).some((m) => m.messageId === '<dsn-ours@mail.test>')).toBe(true);
      const marks = await db
        .selectFrom('mail_scan_marks')
        .selectAll()
        .where('mailbox_id', '=', ids.get(dora.email)!)
        .execute();
      expect(marks.map((m) => m.folder)).toContain('INBOX');
    });

    it(
      'keeps warmup mail in Warmup for the retention days, then lets go of warmup mail only',
      { timeout: 120_000 },
      async () => {
        const old = new Date(Date.now() - 40 * DAY_MS);
        const oldWarmup = '<old-warmup@dsn-one.test>';
        const recentWarmup = '<recent-warmup@dsn-one.test>';
        await sentByDora(oldWarmup, old, true);
        await sentByDora(recentWarmup, start, true);
        await append(dirk, WARMUP_FOLDER, ownerMessage(dirk, oldWarmup, 'Quarterly numbers'), ['\\Seen'], old);
        await append(dirk, WARMUP_FOLDER, ownerMessage(dirk, recentWarmup, 'Quarterly numbers'), ['\\Seen']);
        // the owner filed a message of their own in there, long ago
        await append(dirk, WARMUP_FOLDER, ownerMessage(dirk, '<owners-note@dsn-two.test>', 'My note'), [], old);
        // a person's answer to the old warmup email, with no Message-ID (so no record is found by it)…
        const personsAnswer = answerTo(oldWarmup, null, [], 'which numbers do you mean?');
        await append(dirk, WARMUP_FOLDER, personsAnswer, [], old);
        // …and an out-of-office answer to it: machine-written, so it goes with the warmup mail
        const autoAnswer = answerTo(oldWarmup, '<ooo-1@elsewhere.test>', ['Auto-Submitted: auto-replied'], 'Away');
        await append(dirk, WARMUP_FOLDER, autoAnswer, ['\\Seen'], old);
        // pruned two days ago: due again
        await db
          .updateTable('mailboxes')
          .set({ warmup_folder_pruned_at: new Date(clock.now().getTime() - 2 * DAY_MS).toISOString() })
          .execute();
        // pruning rides on a sync that has mail to look for
        await sentByDora('<pending-3@dsn-one.test>', start);

        const deps = testEngineDeps(testApp, { seed: 5, settings: { warmupFolderRetentionDays: 30 } });
        const summary = await syncMailboxes(deps, { now: clock.now(), ignoreSchedule: true });
        expect(summary).toMatchObject({ failed: 0, pruned: 2 });

        const warmup = await contents(dirk, WARMUP_FOLDER);
        expect(warmup.find((m) => m.messageId === '<ooo-1@elsewhere.test>')?.flags).toContain('\\Deleted');
        const kept = warmup.filter((m) => m.messageId === '');
        expect(kept).toHaveLength(1);
        expect(kept[0].flags).toEqual([]);
        // no UIDPLUS: the old warmup email is marked \Deleted, never expunged with anything else
        expect(warmup.find((m) => m.messageId === oldWarmup)?.flags).toContain('\\Deleted');
        expect(warmup.find((m) => m.messageId === recentWarmup)?.flags).toEqual(['\\Seen']);
        expect(warmup.find((m) => m.messageId === '<owners-note@dsn-two.test>')?.flags).toEqual([]);
        for (const line of sessionLines(dirk)) expect(counter(line, 'expunged'), line).toBe(0);

        // once a day: the next sync does not look again
        const again = await syncMailboxes(deps, {
          now: new Date(clock.now().getTime() + 60_000),
          ignoreSchedule: true,
        });
        expect(again.pruned).toBe(0);
      },
    );
  });
});

describeWithMailStack('a move on a server with UIDPLUS but without MOVE', () => {
  const uma = user('uma@uidplus-one.test');
  let own: PrivateMailStack;

  beforeAll(async () => {
    own = await startPrivateMailStack('handsoff-uidplus', [uma], { imapCapability: UIDPLUS_ONLY_CAPABILITIES });
  }, 60_000);

  afterAll(async () => {
    await own?.stop();
  }, 30_000);

  it(
    'expunges exactly the moved message by its UID: the owner’s \\Deleted mail stays',
    { timeout: 60_000 },
    async () => {
      const previous = stack;
      stack = own; // the helpers above look at the current stack
      try {
        await append(uma, 'INBOX', ownerMessage(uma, '<bin@uidplus-one.test>', 'Old newsletter'), ['\\Deleted']);
        await append(uma, 'INBOX', ownerMessage(uma, '<ours@uidplus-one.test>', 'Quarterly numbers'));
        const session = await openImapSession(mailServerConfigs(own, uma).imap, { timeoutMs: 10_000 });
        try {
          const [found] = await session.findMessages(['<ours@uidplus-one.test>']);
          const warmup = await session.ensureFolder(WARMUP_FOLDER);
          expect(await session.move(found!.folder, found!.uid, warmup)).toEqual(expect.any(Number));
        } finally {
          await session.close();
        }
        const inbox = await contents(uma, 'INBOX');
        expect(inbox.map((m) => [m.messageId, m.flags])).toEqual([['<bin@uidplus-one.test>', ['\\Deleted']]]);
        expect((await contents(uma, WARMUP_FOLDER)).map((m) => m.messageId)).toEqual(['<ours@uidplus-one.test>']);
        await sleep(1_000);
        // one message expunged in all, and by UID: the \\Deleted one of the owner is still there
        const expunged = sessionLines(uma).reduce((sum, line) => sum + counter(line, 'expunged'), 0);
        expect(expunged).toBe(1);
      } finally {
        stack = previous;
      }
    },
  );
});
