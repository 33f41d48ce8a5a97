// People's replies are never lost, end to end on a Postfix + Dovecot of this file's own. A warmup
// email goes out; the owner of the receiving mailbox answers it by hand over SMTP, naming it in
// In-Reply-To and References. After the next looks at the mail:
// - the reply is still unread on the IMAP server (no \Seen): filed into Warmup by default, left in
//   the INBOX when the workspace chooses `inbox`, and recorded once however often it is seen again;
// - the API lists it on the mailbox with who wrote and what they said (not what they quoted);
// - the thread gets no further warmup message from either side;
// - a `mailbox.human_reply` event arrives at a local receiver, signed (Standard Webhooks).
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { ImapFlow } from 'imapflow';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import type { Database, WarmupMessageRow } from '../../src/db/schema.js';
import { createEngine, type Engine } from '../../src/jobs/job-list.js';
import { WARMUP_FOLDER } from '../../src/mail/imap.js';
import { createSmtpSender } from '../../src/mail/smtp.js';
import type { HumanReply } from '../../src/mailboxes/mailboxes.schemas.js';
import { loadSecretKey } from '../../src/secrets/secrets.js';
import { deliverDueWebhooks, DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-delivery.js';
import { createStackMailbox, testEngineDeps } from '../helpers/engine.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import { describeWithMailStack, mailServerConfigs, stackMailPolicy } from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';

const user = (email: string): MailUser => ({ email, password: `${email.split('@')[0]}-pass-123` });
const ann = user('ann@replies-one.test');
const ben = user('ben@replies-two.test');
const WARMUP = { startVolume: 3, rampUpIncrement: 0, dailyLimit: 3, replyRate: 100, timezone: 'UTC' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Delivered {
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  verified: boolean;
}

let stack: PrivateMailStack;

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

/** The flags of the message with this Message-ID in a folder (undefined: not there, or \Deleted). */
async function flagsOf(account: MailUser, folder: string, messageId: string): Promise<string[] | undefined> {
  return withClient(account, async (client) => {
    if (!(await client.list()).some((f) => f.path === folder)) return undefined;
    const lock = await client.getMailboxLock(folder);
    try {
      if (!client.mailbox || client.mailbox.exists === 0) return undefined;
      const messages = await client.fetchAll('1:*', { uid: true, flags: true, envelope: true });
      const found = messages.find((m) => m.envelope?.messageId === messageId && !m.flags?.has('\\Deleted'));
      return found && [...(found.flags ?? [])];
    } finally {
      lock.release();
    }
  });
}

describeWithMailStack("a person's reply to warmup mail, on the real mail stack", () => {
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const clock = fixedClock(start);
  let testApp: TestApp;
  let db: Kysely<Database>;
  let engine: Engine;
  const ids = new Map<string, string>();
  let minute = 0;
  const delivered: Delivered[] = [];
  let secret = '';
  let server: http.Server;
  let deliver: () => Promise<unknown>;

  async function cycles(count: number): Promise<void> {
    for (let i = 0; i < count; i += 1) {
      // seventy minutes a cycle: answers are looked for hourly, so every cycle looks
      minute += 70;
      clock.set(new Date(start.getTime() + minute * 60_000));
      const summary = await engine.runCycle({ at: clock.now(), ignoreSchedule: true });
      expect(summary.errors).toEqual([]);
      await sleep(300);
    }
  }

  /** The receiving mailbox's owner answers a warmup email by hand, over SMTP. */
  async function answerByHand(message: WarmupMessageRow, text: string): Promise<string> {
    const replier = [ann, ben].find((u) => ids.get(u.email) === message.recipient_mailbox_id)!;
    const writer = [ann, ben].find((u) => ids.get(u.email) === message.sender_mailbox_id)!;
    const messageId = `<by-hand-${message.id}@${replier.email.split('@')[1]}>`;
    const smtp = createSmtpSender(mailServerConfigs(stack, replier).smtp, { timeoutMs: 10_000 });
    try {
      await smtp.send({
        from: { name: 'Bea Person', address: replier.email },
        to: { address: writer.email },
        subject: `Re: ${message.subject ?? ''}`,
        html: `<p>${text}</p>`,
        text: `${text}\r\n\r\nOn Monday, ${writer.email} wrote:\r\n> ${message.body_text?.split('\n')[0] ?? ''}\r\n`,
        messageId,
        inReplyTo: message.message_id,
        references: [message.message_id],
      });
    } finally {
      smtp.close();
    }
    await sleep(500);
    return messageId;
  }

  async function repliesOf(mailboxId: string): Promise<HumanReply[]> {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${mailboxId}/replies` });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { replies: HumanReply[] }).replies;
  }

  /** What of a thread the engine did after `since`: messages made, sent or still planned. */
  async function threadActivityAfter(threadId: string, since: string) {
    const rows = await db.selectFrom('warmup_messages').selectAll().where('thread_id', '=', threadId).execute();
    return rows.filter(
      (row) => row.status === 'planned' || row.created_at > since || (row.sent_at !== null && row.sent_at > since),
    );
  }

  async function sentMessage(except: string[]): Promise<WarmupMessageRow> {
    const rows = await db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('status', '=', 'sent')
      .where('turn', '=', 1)
      .orderBy('sent_at')
      .execute();
    const found = rows.find((row) => !except.includes(row.thread_id));
    expect(found, 'a warmup email sent').toBeDefined();
    return found!;
  }

  beforeAll(async () => {
    stack = await startPrivateMailStack('replies', [ann, ben]);
    testApp = await createTestApp({ clock, mailPolicy: stackMailPolicy(stack) });
    db = testApp.database.db;
    for (const u of [ann, ben])
      ids.set(u.email, await createStackMailbox(testApp.workspace, stack, u, { warmup: WARMUP }));
    engine = createEngine(testEngineDeps(testApp, { seed: 5 }));

    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        // Standard Webhooks' signature, checked by hand: the library also refuses a timestamp far
        // from the real clock, and this test's business time runs hours ahead of it
        const id = String(request.headers['webhook-id']);
        const timestamp = String(request.headers['webhook-timestamp']);
        const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
        const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
        const verified =
          String(request.headers['webhook-signature']).split(' ').includes(`v1,${expected}`) &&
          timestamp === String(Math.floor(clock.now().getTime() / 1000));
        delivered.push({ body: JSON.parse(body) as Delivered['body'], verified });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const registered = await testApp.workspace.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { url: `http://127.0.0.1:${port}/hook`, events: ['mailbox.human_reply'] },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    secret = (registered.json() as { secret: string }).secret;
    const policy = stackMailPolicy(stack);
    deliver = () =>
      deliverDueWebhooks({
        db,
        dialect: testApp.database.dialect,
        clock,
        logger: pino({ level: 'silent' }),
        secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: testApp.database.dataDir }),
        policy,
        workerId: 'test-delivery',
        settings: DEFAULT_WEBHOOK_SETTINGS,
        random: () => 0,
      });
  }, 120_000);

  afterAll(async () => {
    await engine?.stop();
    await testApp?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await stack?.stop();
  }, 60_000);

  describe('kept unread, listed, ending its thread, announced', () => {
    it(
      "files it into Warmup by default, and leaves it in the INBOX when the workspace chooses 'inbox'",
      { timeout: 600_000 },
      async () => {
        // 1. The first warmup emails go out and are read; their recipients' engines answer them in
        //    the next cycle, and those answers are answered in the one after (replyRate is 100). A
        //    person answers one of the first emails by hand meanwhile.
        await cycles(1);
        const first = await sentMessage([]);
        const writer = [ann, ben].find((u) => ids.get(u.email) === first.sender_mailbox_id)!;
        const firstId = await answerByHand(first, "Which workshop do you mean? I don't think we have met.\r\n\r\nBea");
        await cycles(3);

        const flags = await flagsOf(writer, WARMUP_FOLDER, firstId);
        expect(flags, 'the reply in the Warmup folder').toBeDefined();
        expect(flags).not.toContain('\\Seen');
        expect(await flagsOf(writer, 'INBOX', firstId)).toBeUndefined();

        const [listed] = await repliesOf(first.sender_mailbox_id);
        expect(listed).toMatchObject({
          mailboxId: first.sender_mailbox_id,
          from: { name: 'Bea Person', email: [ann, ben].find((u) => u.email !== writer.email)!.email },
          subject: `Re: ${first.subject ?? ''}`,
          excerpt: "Which workshop do you mean? I don't think we have met.\n\nBea",
          folder: WARMUP_FOLDER,
          answersMessageId: first.message_id,
        });
        expect(listed.excerpt).not.toContain('wrote:');
        // nothing more in that thread: what its engines had planned was closed, nothing new is planned
        expect(await threadActivityAfter(first.thread_id, listed.foundAt)).toEqual([]);

        // 2. The workspace leaves people's replies in the inbox: unread there, recorded once
        //    however many looks at the mail see it again.
        const settings = await testApp.workspace.request({
          method: 'PATCH',
          url: '/api/workspace/settings',
          payload: { humanReplies: 'inbox' },
        });
        expect(settings.statusCode, settings.body).toBe(200);
        expect(settings.json()).toEqual({ settings: { humanReplies: 'inbox', onboardingDismissed: false } });
        const second = await sentMessage([first.thread_id]);
        const secondWriter = [ann, ben].find((u) => ids.get(u.email) === second.sender_mailbox_id)!;
        const secondId = await answerByHand(second, 'Please take me off this list, I never asked for this.');
        await cycles(4); // three looks at the answers at least

        const inInbox = await flagsOf(secondWriter, 'INBOX', secondId);
        expect(inInbox, 'the reply left in the INBOX').toBeDefined();
        expect(inInbox).not.toContain('\\Seen');
        const secondListed = (await repliesOf(second.sender_mailbox_id)).filter(
          (r) => r.answersMessageId === second.message_id,
        );
        expect(secondListed).toHaveLength(1);
        expect(secondListed[0]).toMatchObject({
          folder: 'INBOX',
          excerpt: 'Please take me off this list, I never asked for this.',
        });
        expect(await threadActivityAfter(second.thread_id, secondListed[0].foundAt)).toEqual([]);
        const rows = await db.selectFrom('human_replies').select('reply_key').execute();
        expect(rows.map((r) => r.reply_key).sort()).toEqual([firstId, secondId].sort());

        // 3. Each arrives once as a signed mailbox.human_reply event.
        await deliver();
        const events = delivered.filter((d) => d.body.type === 'mailbox.human_reply');
        expect(events).toHaveLength(2);
        for (const event of events) expect(event.verified).toBe(true);
        const firstEvent = events.find((e) => (e.body.data.reply as { id: string }).id === listed.id);
        expect(firstEvent?.body.data).toMatchObject({
          mailbox: { id: first.sender_mailbox_id, email: writer.email },
          reply: {
            id: listed.id,
            from: listed.from,
            subject: listed.subject,
            date: listed.date,
            excerpt: listed.excerpt,
            folder: WARMUP_FOLDER,
          },
        });
      },
    );
  });
});
