// Providers that rename what they send, and receivers that say what they thought, end to end on a
// Postfix + Dovecot of this file's own:
// - like Outlook.com, the stack gives every message sent from outlook-like.test a new Message-ID
//   on delivery and keeps the original in X-Microsoft-Original-Message-ID;
// - mail sent from renaming.test gets a new Message-ID with nothing of the original kept, so its
//   replies are known only by their thread headers (the message they answer, sender, Date);
// - every receiving domain writes its own Authentication-Results and an X-Spam-Status on top of
//   each delivery; dkim-broken.test's mail fails DKIM and DMARC there.
// The engine finds every email it can identify, records each receiver's verdict, reports failing
// DKIM/DMARC as a problem to fix, and still files a person's own answer away untouched.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import type { ClientProfile, ClientProfileName } from '../../src/engine/client-profile.js';
import { openImapSession } from '../../src/mail/imap.js';
import { createSmtpSender } from '../../src/mail/smtp.js';
import { createStackMailbox, planDayWith, proveAll, storedClientProfile, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import { describeWithMailStack, mailServerConfigs, stackMailPolicy } from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const olga = user('olga@outlook-like.test'); // renamed, original kept (Outlook.com)
const rene = user('rene@renaming.test'); // renamed, nothing kept
const dirk = user('dirk@dkim-broken.test'); // fails DKIM and DMARC at every receiver
const bea = user('bea@beta-mail.test');
const cal = user('cal@gamma-mail.test');
const USERS = [olga, rene, dirk, bea, cal];
const WARMUP = { startVolume: 3, rampUpIncrement: 0, dailyLimit: 4, replyRate: 100, timezone: 'UTC' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithMailStack('providers that rename mail, and what receivers thought of it', () => {
  let stack: PrivateMailStack;
  // Real time: IMAP dates (SINCE) are the server's, so business time must not drift far from them.
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clock = fixedClock(start);
  // rene's replies are known by their Date, so he lives off UTC, on the same date as the others
  // while the suite runs: the engine rightly closes mail that would land on another day of its
  // recipient. New York (UTC−5/−4) from 06:00 UTC, Kolkata (UTC+5:30) before.
  const reneZone =
    start.getUTCHours() >= 6
      ? { timezone: 'America/New_York', offset: /-0[45]00$/ }
      : { timezone: 'Asia/Kolkata', offset: /\+0530$/ };
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids = new Map<string, string>();
  const profiles = new Map<string, ClientProfile>(); // mailbox id → its mail program
  let minute = 0;

  async function cycles(count: number): Promise<void> {
    if (minute === 0) {
      // The suite is about reading, not the send bounds: the first day gets room for every answer.
      // Every mailbox writes, and each of the four others writes to rene: he opens and answers each
      // email by his own habits (85 % of the time on average, 64 % at worst), so a single email left
      // him with no reply in about one run in seven; four leave that near one in 1,500.
      const reneId = ids.get(rene.email)!;
      await planDayWith(
        engine.deps,
        clock.now(),
        (planned) =>
          USERS.every((u) => planned.some((m) => m.sender_mailbox_id === ids.get(u.email))) &&
          planned.filter((m) => m.recipient_mailbox_id === reneId).length === USERS.length - 1,
      );
      await db
        .updateTable('mailbox_plans')
        .set({ target: sql<number>`target + 10` })
        .execute();
    }
    for (let i = 0; i < count; i += 1) {
      minute += 10;
      clock.set(new Date(start.getTime() + minute * 60_000));
      const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      // Postfix hands mail to Dovecot asynchronously
      await sleep(300);
    }
  }

  beforeAll(async () => {
    stack = await startPrivateMailStack('providers', USERS, {
      rewriteMessageIdDomains: ['outlook-like.test'],
      replaceMessageIdDomains: ['renaming.test'],
      authResults: { dkimFailSenders: [dirk.email] },
    });
    testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
    db = testApp.database.db;
    for (const u of USERS) {
      const warmup = { ...WARMUP, timezone: u === rene ? reneZone.timezone : 'UTC' };
      const id = await createStackMailbox(testApp.workspace, stack, u, { warmup });
      // The stack renames Message-IDs on rene's own domain; a mailbox that is not at Google never
      // gets the Gmail app's IDs on Google's host (which the stack would leave alone)
      const profile = await storedClientProfile(db, id);
      expect(profile.name).not.toBe('gmail-app');
      profiles.set(id, profile);
      ids.set(u.email, id);
    }
    // rene's own test message comes back renamed and cannot prove the mailbox; this suite is about reading
    await proveAll(db);
    engine = createEngine(testEngineDeps(testApp, { seed: 7 }));
  }, 120_000);

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
    await stack?.stop();
  }, 30_000);

  it(
    'finds Outlook-renamed mail and renamed replies, and records every receiver’s verdict',
    { timeout: 240_000 },
    async () => {
      await cycles(8);
      // Postfix hands mail to Dovecot when it gets to it: on a busy machine what the last cycles sent
      // can arrive after their syncs, so a few more cycles, each a second after the last, let it be
      // read (rene's new threads never are); a cycle may send a reply, which the next one reads
      const unread = async () =>
        (
          await db
            .selectFrom('warmup_messages')
            .select('id')
            .where('status', '=', 'sent')
            .where('found_at', 'is', null)
            .where((eb) => eb.or([eb('sender_mailbox_id', '!=', ids.get(rene.email)!), eb('kind', '!=', 'initial')]))
            .execute()
        ).length;
      for (let extra = 0; extra < 12 && (await unread()) > 0; extra += 1) {
        await sleep(1_000);
        await cycles(1);
      }
      const all = await db.selectFrom('warmup_messages').selectAll().execute();
      const sent = all.filter((m) => m.status === 'sent');
      const from = (u: MailUser) => sent.filter((m) => m.sender_mailbox_id === ids.get(u.email));
      // what every message became, sender → recipient, in a failure's message
      const nameOf = new Map([...ids].map(([email, id]) => [id, email.split('@')[0]]));
      const story = all
        .map((m) => `${nameOf.get(m.sender_mailbox_id)}→${nameOf.get(m.recipient_mailbox_id)} ${m.kind} ${m.status}`)
        .join('; ');

      // Outlook-style: every email olga sent was renamed on the way, and every one was found.
      expect(from(olga).length, story).toBeGreaterThan(0);
      for (const m of from(olga)) expect(m.found_at, m.message_id).not.toBeNull();

      // Renamed with nothing kept: rene's replies are found by their thread; his new threads cannot be.
      const reneReplies = from(rene).filter((m) => m.kind === 'reply');
      expect(reneReplies.length, story).toBeGreaterThan(0);
      for (const m of reneReplies) expect(m.found_at, m.message_id).not.toBeNull();
      for (const m of from(rene).filter((m) => m.kind === 'initial')) expect(m.found_at).toBeNull();

      // The others' mail: all found.
      for (const u of [dirk, bea, cal]) for (const m of from(u)) expect(m.found_at, m.message_id).not.toBeNull();

      // A verdict for every email found, in the receiver's own words.
      const found = sent.filter((m) => m.found_at !== null);
      const verdicts = await db.selectFrom('receiver_verdicts').selectAll().execute();
      expect(verdicts.map((v) => v.warmup_message_id).sort()).toEqual(found.map((m) => m.id).sort());
      const emailOf = new Map([...ids].map(([email, id]) => [id, email]));
      for (const v of verdicts) {
        const recipient = emailOf.get(v.recipient_mailbox_id)!;
        expect(v.authserv_id).toBe(recipient.split('@')[1]);
        expect(v.spf).toBe('pass');
        const broken = v.sender_mailbox_id === ids.get(dirk.email);
        expect(v.dkim).toBe(broken ? 'fail' : 'pass');
        expect(v.dmarc).toBe(broken ? 'fail' : 'pass');
        expect(v.spam_score).toBe(0.4);
      }
      const by = (u: MailUser, how: string) =>
        verdicts.filter((v) => v.sender_mailbox_id === ids.get(u.email) && v.identified_by === how).length;
      expect(by(olga, 'original-message-id')).toBe(from(olga).length);
      expect(by(rene, 'thread')).toBe(reneReplies.length);
      expect(by(bea, 'message-id')).toBe(from(bea).length);

      // Through the API: per receiving provider, and the broken DKIM as a problem with its fix.
      const response = await testApp.workspace.request({
        method: 'GET',
        url: `/api/mailboxes/${ids.get(dirk.email)}/verdicts`,
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json() as {
        verdicts: {
          total: number;
          byProvider: Array<{ provider: string; total: number; dkim: Record<string, number> }>;
          problems: Array<{ code: string; fix: string }>;
        };
      };
      expect(body.verdicts.total).toBe(from(dirk).length);
      expect(body.verdicts.byProvider).toEqual([
        expect.objectContaining({ provider: 'custom', total: from(dirk).length, dkim: { fail: from(dirk).length } }),
      ]);
      expect(body.verdicts.problems.map((p) => p.code).sort()).toEqual(['dkim_fail', 'dmarc_fail']);
      const healthy = await testApp.workspace.request({
        method: 'GET',
        url: `/api/mailboxes/${ids.get(bea.email)}/verdicts`,
      });
      expect((healthy.json() as typeof body).verdicts.problems).toEqual([]);
    },
  );

  it(
    'files a person’s own answer in a renamed thread away as theirs, never as a warmup reply',
    { timeout: 120_000 },
    async () => {
      // rene answers, by hand, a warmup email he received: renamed on the way like all his mail
      const thread = await db
        .selectFrom('warmup_messages')
        .innerJoin('mailboxes', 'mailboxes.id', 'warmup_messages.sender_mailbox_id')
        .select(['warmup_messages.message_id', 'warmup_messages.subject', 'mailboxes.email'])
        .where('warmup_messages.recipient_mailbox_id', '=', ids.get(rene.email)!)
        .where('warmup_messages.status', '=', 'sent')
        .orderBy('warmup_messages.sent_at')
        .executeTakeFirstOrThrow();
      const smtp = createSmtpSender(mailServerConfigs(stack, rene).smtp, { timeoutMs: 10_000 });
      try {
        await smtp.send({
          from: { address: rene.email },
          to: { address: thread.email },
          subject: `Re: ${thread.subject ?? ''}`,
          text: 'Thanks! Let us talk on Monday. Rene',
          html: '<p>Thanks! Let us talk on Monday. Rene</p>',
          messageId: '<by-hand-1@renaming.test>',
          inReplyTo: thread.message_id,
          references: [thread.message_id],
        });
      } finally {
        smtp.close();
      }
      await sleep(500);
      const writer = USERS.find((u) => u.email === thread.email)!;
      // the writer's answers from rene still in INBOX, spam or promotions (his renamed warmup replies are filed already)
      const handAnswersInInbox = async () => {
        const session = await openImapSession(mailServerConfigs(stack, writer).imap, { timeoutMs: 10_000 });
        try {
          const answers = await session.findAnswers([thread.message_id], new Date(Date.now() - 2 * 86_400_000), 50);
          return answers.filter((a) => a.from === rene.email);
        } finally {
          await session.close();
        }
      };
      expect(await handAnswersInInbox()).toHaveLength(1);
      const before = await db.selectFrom('receiver_verdicts').select('warmup_message_id').execute();
      // answers are looked for hourly
      await cycles(8);
      const after = await db.selectFrom('receiver_verdicts').selectAll().execute();
      const newVerdicts = after.filter((v) => !before.some((b) => b.warmup_message_id === v.warmup_message_id));
      // whatever the engine found since is its own mail, never the hand-written answer
      const known = new Set((await db.selectFrom('warmup_messages').select('id').execute()).map((r) => r.id));
      for (const v of newVerdicts) expect(known.has(v.warmup_message_id)).toBe(true);
      const counted = await db.selectFrom('interactions').select('message_id').execute();
      expect(counted.map((r) => r.message_id)).not.toContain('<by-hand-1@renaming.test>');
      // filed into Warmup as the person's answer it is
      expect(await handAnswersInInbox()).toEqual([]);
    },
  );

  it('logs in as its owner’s mail program would, never naming the IMAP library', () => {
    const log = readFileSync(join(stack.dir, 'log/dovecot.log'), 'utf8');
    const announced = log.split('\n').filter((line) => line.includes('ID sent:'));
    const logins = log.split('\n').filter((line) => line.includes('Login: user='));
    expect(logins.length).toBeGreaterThan(10);
    expect(log.toLowerCase()).not.toContain('imapflow');
    expect(log).not.toContain('Postal Systems');
    // what is announced is a mail program's own name, or nothing (ID NIL)
    for (const line of announced) expect(line, line).toMatch(/ID sent: name=(Thunderbird|Mac OS X Mail), version=/);
    // each mailbox's program, as drawn for it: Thunderbird's owners log in as Thunderbird
    // the login line names the user, the ID line before it only the session
    const session = (line: string) => /session=<([^>]+)>/.exec(line)?.[1];
    const userOf = new Map(logins.map((line) => [session(line), /user=<([^>]*)>/.exec(line)?.[1]]));
    for (const [email, id] of ids) {
      const profile = profiles.get(id)!;
      const named = announced.some((line) => userOf.get(session(line)) === email);
      expect(named, `${email} (${profile.name})`).toBe(profile.imapId !== null);
    }
  });

  it('delivers every warmup email in its sender’s client’s layout, dated in its own offset', async () => {
    // what the receivers' Maildirs hold, byte for byte as delivered
    const files = readdirSync(join(stack.dir, 'mail'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\/Maildir(\/\.[^/]+)?\/(cur|new)$/.test(entry.parentPath))
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'));
    const known = new Set(
      (await db.selectFrom('warmup_messages').select('message_id').execute()).map((r) => r.message_id),
    );
    const BOUNDARY: Record<ClientProfileName, RegExp> = {
      thunderbird: /^-{12}[0-9A-Za-z]{24}$/,
      'apple-mail': /^Apple-Mail=_[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/,
      outlook: /^----=_NextPart_000_[0-9A-F]{4}_01D[0-9A-F]{5}\.[0-9A-F]{8}$/,
      'gmail-app': /^0{12}[0-9a-f]{16}$/,
    };
    let checked = 0;
    for (const raw of files) {
      const head = raw.slice(0, raw.indexOf('\r\n\r\n') < 0 ? raw.indexOf('\n\n') : raw.indexOf('\r\n\r\n'));
      const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
      const header = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(unfolded)?.[1]?.trim();
      const original = header('X-Microsoft-Original-Message-ID') ?? header('Message-ID');
      if (!original || !known.has(original)) continue; // a bounce, or the person's own answer
      const from = /<([^>]+)>/.exec(header('From') ?? '')?.[1]?.toLowerCase() ?? '';
      const mailboxId = ids.get(from);
      expect(mailboxId, from).toBeDefined();
      const profile = profiles.get(mailboxId ?? '')!;
      const boundary = /boundary="?([^";\s]+)"?/.exec(header('Content-Type') ?? '')?.[1] ?? '';
      expect(boundary, `${from} (${profile.name})`).toMatch(BOUNDARY[profile.name]);
      expect(raw).not.toContain('_NmP-');
      for (const [name, value] of Object.entries(profile.headers)) expect(header(name), name).toBe(value);
      if (profile.name !== 'thunderbird') expect(header('User-Agent')).toBeUndefined();
      // rene writes in his own zone's offset, the others in UTC
      expect(header('Date')).toMatch(from === rene.email ? reneZone.offset : /\+0000$/);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(5);
  });
});
