import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSmtpSender } from '../mail/smtp.js';
import type { MailboxRow } from '../db/schema.js';
import type { InteractionType } from '../interactions/interactions.schemas.js';
import type { TestDatabase } from '../../test/helpers/test-database.js';
import { at, createSenderWorld, interactionsOf, minutes, NOW } from '../../test/helpers/sender-world.js';
import {
  type FakeSmtp,
  insertMailbox,
  insertMessage,
  messageRowOf,
  insertPlan,
  mailWorkDeps,
  pickDefaultTemplate,
  smtpError,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { boundaryFor, clientProfileOf, replyPrefix, type ClientProfileName } from './client-profile.js';
import { seedFrom } from './message-content.js';
import { retryDelayMs } from './backoff.js';
import { MIN_SEND_GAP_MS, REASON_DAY_OVER } from './send-budget.js';
import { MAX_SEND_ATTEMPTS, sendDueMessages, STALE_AFTER_MS } from './sender.js';
import { DEFAULT_TEMPLATES } from '../templates/default-templates.js';
import { writeMessage, writingRegion } from '../conversations/conversation-writer.js';
import { ANSWER_SLOT } from '../conversations/conversation-plan.js';

const HTML_START: Record<ClientProfileName, string> = {
  thunderbird: '<!DOCTYPE html>\n<html>\n  <head>',
  'apple-mail': '<html><head>',
  outlook: '<html xmlns:v="urn:schemas-microsoft-com:vml"',
  'gmail-app': '<div dir="ltr">',
};

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

const messageRow = (id: string) => messageRowOf(database, id);
const interactions = (type?: InteractionType) => interactionsOf(database, type);

/** Marks a thread's first message as written from a template, as a workspace's own templates open some threads. */
async function openedFromTemplate(row: { id: string }): Promise<void> {
  await database.db.updateTable('warmup_messages').set({ template_id: 'tpl_0' }).where('id', '=', row.id).execute();
}

/** The type of the default template (see pickDefaultTemplate) a message was written from; null: none. */
function templateTypeOf(templateId: string | null): string | null {
  if (templateId === null) return null;
  return DEFAULT_TEMPLATES[Number(templateId.replace(/^tpl_/, ''))]?.type ?? null;
}

async function daily(mailboxId: string) {
  return database.db.selectFrom('daily_stats').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
}

async function mailbox(id: string) {
  return database.db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('sendDueMessages', () => {
  it('sends what is due, one send per sender and gap, writes it once and counts it once', async () => {
    const due1 = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(20)) });
    const due2 = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(-minutes(5)) });
    const later = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(60)) });

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });

    // the second is held back by the minimum gap, not sent in the same breath
    expect(summary).toMatchObject({ claimed: 2, sent: 1, deferred: 1, bounced: 0, failed: 0, retried: 0 });
    expect(smtp.opened).toBe(1);
    expect(smtp.closed).toBe(1);
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([due1.message_id]);
    expect(await messageRow(due2.id)).toMatchObject({
      status: 'planned',
      due_at: at(MIN_SEND_GAP_MS).toISOString(),
      lease_owner: null,
    });
    expect(await sendDueMessages(deps, { now: at(MIN_SEND_GAP_MS - 1000), ignoreSchedule: false })).toMatchObject({
      claimed: 0,
    });
    expect(await sendDueMessages(deps, { now: at(MIN_SEND_GAP_MS), ignoreSchedule: false })).toMatchObject({
      sent: 1,
    });
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([due1.message_id, due2.message_id]);
    const first = smtp.sent[0].mail;
    expect(smtp.sent[0].config.username).toBe('erin@echo.test');
    expect(first.from).toEqual({ name: 'Erin Echo', address: 'erin@echo.test' });
    expect(first.to).toEqual({ name: 'Frank Fox', address: 'frank.fox@foxtrot.test' });
    expect(first.date).toEqual(NOW);
    expect(first.inReplyTo).toBeUndefined();
    expect(first.text).toContain('Frank');
    expect(first.text).not.toMatch(/[{}]/);
    // a whole HTML document (the Gmail app: its own fragment), in the style of the sender's client
    const profile = clientProfileOf(erin);
    expect(first.html.startsWith(HTML_START[profile.name]), profile.name).toBe(true);
    expect(first.text).toContain('Erin Echo');
    expect(first.headers).toEqual(profile.headers);
    expect(first.boundary).toBe(boundaryFor(profile.name, due1.message_id));

    const stored = await messageRow(due1.id);
    expect(stored).toMatchObject({
      status: 'sent',
      sent_at: NOW.toISOString(),
      attempts: 1,
      subject: first.subject,
      body_text: first.text,
      body_html: first.html,
      lease_owner: null,
    });
    // the conversation generator wrote it, not a template
    expect(stored.template_id).toBeNull();
    expect((await messageRow(later.id)).status).toBe('planned');

    const sent = await interactions('sent');
    expect(sent.map((i) => [i.mailbox_id, i.counterpart_mailbox_id, i.message_id, i.subject])).toEqual([
      [erin.id, frank.id, due1.message_id, first.subject],
      [erin.id, grace.id, due2.message_id, smtp.sent[1].mail.subject],
    ]);
    expect((await daily(erin.id))?.sent).toBe(2);

    // nothing is due any more: a rerun sends nothing and counts nothing
    expect(await sendDueMessages(deps, { now: at(MIN_SEND_GAP_MS), ignoreSchedule: false })).toMatchObject({
      claimed: 0,
      sent: 0,
    });
    expect(await interactions('sent')).toHaveLength(2);
  });

  it("with ignoreSchedule sends the whole day's plan now", async () => {
    const later = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(300)) });
    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });
    expect(summary.sent).toBe(1);
    expect((await messageRow(later.id)).status).toBe('sent');
  });

  it('holds no more SMTP sessions open at once than it sends on side by side', async () => {
    const workspaceId = erin.workspace_id;
    for (let i = 0; i < 12; i++) {
      const sender = await insertMailbox(database.db, workspaceId, { email: `s${i}@sierra.test` });
      await insertPlan(database.db, sender, '2026-03-12', 100);
      await insertMessage(database.db, { sender, recipient: erin, dueAt: NOW });
    }
    let open = 0;
    let mostOpen = 0;
    const counting = mailWorkDeps(database.db, database.dialect, {
      smtp: (config) => {
        open += 1;
        mostOpen = Math.max(mostOpen, open);
        const session = smtp.factory(config);
        return {
          send: (mail) => session.send(mail),
          close: () => {
            open -= 1;
            session.close();
          },
        };
      },
    });
    const summary = await sendDueMessages(counting, { now: NOW, ignoreSchedule: true });
    expect(summary.sent).toBe(12);
    expect(smtp.opened).toBe(12);
    // four senders at a time, each closed when its rows are sent (12 held to the end of the call before)
    expect(mostOpen).toBeLessThanOrEqual(4);
    expect(open).toBe(0);
  });

  it("writes in the sender's language and leaves paused mailboxes' mail waiting", async () => {
    await insertMessage(database.db, { sender: grace, recipient: erin, dueAt: at(-minutes(1)) });
    const paused = await insertMailbox(database.db, erin.workspace_id, { email: 'hank@hotel.test', status: 'paused' });
    const toPaused = await insertMessage(database.db, { sender: erin, recipient: paused, dueAt: at(-minutes(1)) });
    const fromPaused = await insertMessage(database.db, { sender: paused, recipient: erin, dueAt: at(-minutes(1)) });

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });

    expect(summary.sent).toBe(1);
    const german = smtp.sent[0].mail;
    expect(german.from.address).toBe('grace@golf.test');
    expect(german.text).toMatch(/Erin/);
    // the generator's German words for this thread, in Grace's workspace's region
    const region = writingRegion(deps.installationSeed, grace.workspace_id, grace.id);
    const written = writeMessage({
      threadId: german.messageId,
      turn: 1,
      language: 'de',
      openerRegion: region,
      writerRegion: region,
      senderFirstName: 'Grace',
      recipientFirstName: 'Erin',
    });
    expect(german.subject).toBe(written.subject);
    expect(german.text).toContain(written.body.split('\n\n')[1]);
    expect((await messageRow(toPaused.id)).status).toBe('planned');
    expect((await messageRow(fromPaused.id)).status).toBe('planned');
  });

  it('drops mail that waited past its day for a paused mailbox instead of sending it in a burst', async () => {
    const paused = await insertMailbox(database.db, erin.workspace_id, { email: 'hank@hotel.test', status: 'paused' });
    const stale = await insertMessage(database.db, {
      sender: erin,
      recipient: paused,
      dueAt: at(-STALE_AFTER_MS - minutes(1)),
    });
    const recent = await insertMessage(database.db, {
      sender: erin,
      recipient: paused,
      dueAt: at(-STALE_AFTER_MS + minutes(1)),
    });
    await database.db.updateTable('mailboxes').set({ status: 'active' }).where('id', '=', paused.id).execute();

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });

    expect(summary).toMatchObject({ sent: 0, dropped: 1 });
    expect(smtp.sent).toEqual([]);
    expect(await messageRow(stale.id)).toMatchObject({
      status: 'expired',
      last_error: 'not sent: more than a day overdue',
    });
    // yesterday's new thread is over with yesterday
    expect(await messageRow(recent.id)).toMatchObject({ status: 'expired', last_error: REASON_DAY_OVER });
    expect(await interactions()).toHaveLength(0);
  });

  it('answers in the thread: Re: subject, In-Reply-To, References and the whole quoted thread', async () => {
    const first = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
      subject: 'Planning for next week',
      body: 'Hi Frank,\n\nDo you have a minute for the planning?\n\nErin',
    });
    const reply = await insertMessage(database.db, {
      sender: frank,
      recipient: erin,
      parent: first,
      dueAt: at(-minutes(60)),
      status: 'sent',
      sentAt: at(-minutes(60)),
      subject: 'Re: Planning for next week',
      body: 'Sure.\n\nOn Mar 12, Erin wrote:\n> Hi Frank,',
    });
    const second = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      parent: reply,
      dueAt: at(-minutes(1)),
    });

    await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });

    expect(smtp.sent).toHaveLength(1);
    const mail = smtp.sent[0].mail;
    expect(mail.subject).toBe(`${replyPrefix(clientProfileOf(erin).name, 'en')} Planning for next week`);
    expect(mail.inReplyTo).toBe(reply.message_id);
    expect(mail.references).toEqual([first.message_id, reply.message_id]);
    // the client's own attribution, then the parent whole with the older quote it carries
    if (clientProfileOf(erin).name === 'outlook') {
      expect(mail.text).toContain('From: Frank Fox <frank.fox@foxtrot.test>\n');
      expect(mail.text).toContain('\n\nSure.\n\nOn Mar 12, Erin wrote:\n> Hi Frank,\n');
    } else {
      expect(mail.text).toMatch(/Frank Fox.* wrote:\n\n?> Sure\.\n>\n> On Mar 12, Erin wrote:\n>> Hi Frank,\n/);
    }
    expect(mail.html).toContain('Sure.');
    expect(mail.html).toContain('Hi Frank,');
    // the original sender's answer to the reply, the third turn, acknowledges the answer of the plan
    const third = await messageRow(second.id);
    expect(third.turn).toBe(3);
    expect(third.template_id).toBeNull();
    const region = writingRegion(deps.installationSeed, erin.workspace_id, erin.id);
    const plan = writeMessage({
      threadId: first.message_id,
      turn: 3,
      language: 'en',
      openerRegion: region,
      writerRegion: region,
      senderFirstName: 'Erin',
      recipientFirstName: 'Frank',
    }).plan;
    expect(mail.text.split('Erin Echo')[0].toLowerCase()).toContain(plan.slots[ANSWER_SLOT[plan.intent]].toLowerCase());
  });

  it("answers in the thread's language: a German mailbox answers an English thread in English, and the question", async () => {
    const opening = await insertMessage(database.db, {
      sender: erin,
      recipient: grace,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
      subject: 'Planning',
      body: 'Hi Grace,\n\nA question.\n\nErin',
    });
    const answer = await insertMessage(database.db, {
      sender: grace,
      recipient: erin,
      parent: opening,
      dueAt: at(-minutes(1)),
    });

    expect(await sendDueMessages(deps, { now: NOW, ignoreSchedule: false })).toMatchObject({ sent: 1 });

    const written = writeMessage({
      threadId: opening.message_id,
      turn: 2,
      language: 'en',
      openerRegion: writingRegion(deps.installationSeed, erin.workspace_id, erin.id),
      writerRegion: writingRegion(deps.installationSeed, grace.workspace_id, grace.id),
      senderFirstName: 'Grace',
      recipientFirstName: 'Erin',
    });
    const stored = await messageRow(answer.id);
    expect(stored.template_id).toBeNull();
    expect(stored.body_text).toContain(written.body.split('\n\n')[1]);
    // the answer names what the thread's plan asked for
    expect(stored.body_text?.toLowerCase()).toContain(written.plan.answer.toLowerCase());
  });

  /** erin opened a thread from a template two hours ago, frank answered, and erin's third turn is due now. */
  async function templateThreadAtTurnThree() {
    const first = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
    });
    await openedFromTemplate(first);
    const reply = await insertMessage(database.db, {
      sender: frank,
      recipient: erin,
      parent: first,
      dueAt: at(-minutes(60)),
      status: 'sent',
      sentAt: at(-minutes(60)),
    });
    const third = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      parent: reply,
      dueAt: at(-minutes(1)),
    });
    return third;
  }

  it('answers a thread opened from a template with the follow-up template', async () => {
    const third = await templateThreadAtTurnThree();

    expect(await sendDueMessages(deps, { now: NOW, ignoreSchedule: false })).toMatchObject({ sent: 1 });
    expect(templateTypeOf((await messageRow(third.id)).template_id)).toBe('followup');
  });

  it('writes the third turn from a reply template when the workspace has no follow-up', async () => {
    deps.templates = {
      pickTemplate: (workspaceId, criteria, seed) =>
        criteria.type === 'followup' ? Promise.resolve(undefined) : pickDefaultTemplate(workspaceId, criteria, seed),
    };
    const third = await templateThreadAtTurnThree();
    const fourth = await insertMessage(database.db, {
      sender: frank,
      recipient: erin,
      parent: third,
      dueAt: at(-minutes(1)),
    });

    expect(await sendDueMessages(deps, { now: NOW, ignoreSchedule: false })).toMatchObject({ sent: 2 });
    expect(templateTypeOf((await messageRow(third.id)).template_id)).toBe('reply');
    expect((await messageRow(fourth.id)).turn).toBe(4);
    expect(templateTypeOf((await messageRow(fourth.id)).template_id)).toBe('reply');
  });

  it('after a server failure, waits for the sender to be tried again, then sends exactly the same message', async () => {
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    smtp.onSend = () => {
      throw smtpError('timeout', 'SMTP server 127.0.0.1:587 did not answer within 2 s');
    };

    const failed = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });

    expect(failed).toMatchObject({ claimed: 1, sent: 0, retried: 1 });
    // the server's failure, not the message's: the row waits as it was, its attempts untouched
    const afterFailure = await messageRow(row.id);
    expect(afterFailure).toMatchObject({ status: 'planned', attempts: 0, lease_owner: null, due_at: row.due_at });
    expect(afterFailure.subject).not.toBeNull();
    const backingOff = await mailbox(erin.id);
    expect(backingOff).toMatchObject({ status: 'active', send_retries: 1, failure_count: 0 });
    expect(backingOff.last_error).toMatch(/did not answer within 2 s — a temporary failure/);
    const retryAt = Date.parse(backingOff.next_send_at!);
    expect(retryAt).toBeGreaterThan(NOW.getTime());
    // not claimed before the sender's backoff is over
    expect((await sendDueMessages(deps, { now: new Date(retryAt - 1_000), ignoreSchedule: false })).claimed).toBe(0);

    smtp.onSend = () => undefined;
    const retried = await sendDueMessages(deps, { now: new Date(retryAt), ignoreSchedule: false });

    expect(retried.sent).toBe(1);
    expect(smtp.sent[0].mail).toMatchObject({
      subject: afterFailure.subject,
      text: afterFailure.body_text,
      html: afterFailure.body_html,
      messageId: row.message_id,
    });
    expect(await messageRow(row.id)).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(await mailbox(erin.id)).toMatchObject({ send_retries: 0, next_send_at: null, last_error: null });
    expect(await interactions()).toHaveLength(1);
  });

  it('stopping drops a send waiting on a hung server at once; the row waits as it was', async () => {
    const silent: Socket[] = [];
    const server: Server = createServer((socket) => silent.push(socket)); // accepts, never greets
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
      deps.settings = { ...deps.settings, smtpTimeoutMs: 30_000 };
      deps.smtp = (config, opts) =>
        createSmtpSender({ ...config, port, policy: { allowedHosts: ['127.0.0.1'], plaintextHosts: [] } }, opts);
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 300);

      const started = performance.now();
      const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false, signal: stop.signal });

      expect(performance.now() - started).toBeLessThan(3_000);
      expect(summary).toMatchObject({ claimed: 1, sent: 0, failed: 0 });
      expect(await messageRow(row.id)).toMatchObject({ status: 'planned', attempts: 0, lease_owner: null });
      expect(await mailbox(erin.id)).toMatchObject({ send_retries: 0, failure_count: 0, last_error: null });
    } finally {
      for (const socket of silent) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('after an outage, sends a share of what waited, spread over the rest of the window, never in a burst', async () => {
    // ten sends planned between 10:00 and 11:48, to two colleagues in turn; the server is down from 10:00 to 14:00
    const rows = [];
    for (let i = 0; i < 10; i += 1) {
      const recipient = i % 2 ? grace : frank;
      rows.push(await insertMessage(database.db, { sender: erin, recipient, dueAt: at(minutes(12 * i)) }));
    }
    smtp.onSend = () => {
      throw smtpError('connection', 'Cannot connect to SMTP server 127.0.0.1:587: connection refused');
    };
    await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });
    expect(smtp.sent).toHaveLength(0);

    smtp.onSend = () => undefined;
    const sends: number[] = [];
    // cycles every 2 minutes from 14:00 to the end of the day
    for (let t = NOW.getTime() + minutes(240); t < Date.parse('2026-03-13T00:00:00Z'); t += minutes(2)) {
      const before = smtp.sent.length;
      await sendDueMessages(deps, { now: new Date(t), ignoreSchedule: false });
      for (let i = before; i < smtp.sent.length; i += 1) sends.push(t);
    }
    // 4 of the 10 hours of the 08:00–18:00 window were left: 4 of the 10 rows, the rest closed
    expect(sends).toHaveLength(4);
    for (const t of sends)
      expect(t >= Date.parse('2026-03-12T14:00:00Z') && t < Date.parse('2026-03-12T18:00:00Z')).toBe(true);
    for (let i = 1; i < sends.length; i += 1) expect(sends[i] - sends[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
    const statuses = await Promise.all(rows.map(async (r) => (await messageRow(r.id)).status));
    expect(statuses.filter((st) => st === 'sent')).toHaveLength(4);
    expect(statuses.filter((st) => st === 'expired')).toHaveLength(6);
  });

  it('backs off exponentially and gives up after the last attempt with a failed entry', async () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([minutes(5), minutes(10), minutes(20), minutes(40)]);
    expect(retryDelayMs(30)).toBe(4 * 60 * 60_000);
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    smtp.onSend = () => {
      throw smtpError('rejected', 'SMTP server refused recipient frank.fox@foxtrot.test: 451 4.3.0 try again later', {
        permanent: false,
      });
    };
    let now = NOW;
    for (let attempt = 1; attempt <= MAX_SEND_ATTEMPTS; attempt += 1) {
      const summary = await sendDueMessages(deps, { now, ignoreSchedule: false });
      expect(summary.claimed).toBe(1);
      now = new Date((await messageRow(row.id)).due_at);
    }
    const final = await messageRow(row.id);
    expect(final).toMatchObject({ status: 'failed', attempts: MAX_SEND_ATTEMPTS });
    expect(final.last_error).toContain('451 4.3.0');
    const failed = await interactions('failed');
    expect(failed.map((i) => [i.mailbox_id, i.message_id])).toEqual([[erin.id, row.message_id]]);
    expect((await daily(erin.id))?.failed).toBe(1);
    // a temporary refusal of one recipient (greylisting) is not the mailbox's fault
    expect(await mailbox(erin.id)).toMatchObject({ status: 'active', failure_count: 0 });
  });

  it('records a permanent refusal as a bounce of the sender', async () => {
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    const other = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(-minutes(1)) });
    smtp.onSend = (mail) => {
      if (mail.to.address === 'frank.fox@foxtrot.test') {
        throw smtpError('rejected', 'SMTP server refused recipient: 550 5.1.1 user unknown', {
          permanent: true,
          serverResponse: '550 5.1.1 user unknown',
        });
      }
    };

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ sent: 1, bounced: 1 });
    expect(await messageRow(row.id)).toMatchObject({ status: 'bounced', attempts: 1 });
    expect((await messageRow(other.id)).status).toBe('sent');
    const bounced = await interactions('bounced');
    expect(bounced.map((i) => [i.mailbox_id, i.counterpart_mailbox_id, i.message_id])).toEqual([
      [erin.id, frank.id, row.message_id],
    ]);
    expect(await daily(erin.id)).toMatchObject({ sent: 1, bounced: 1 });
    expect((await mailbox(erin.id)).status).toBe('active');
  });

  it('puts the mailbox into error after three refused logins, with a lastError that says what to fix', async () => {
    const rows = await Promise.all(
      [1, 2, 3].map((n) => insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(n)) })),
    );
    const graces = await insertMessage(database.db, { sender: grace, recipient: frank, dueAt: at(-minutes(1)) });
    const refusal = smtpError('auth', 'SMTP login refused by 127.0.0.1:587: 535 5.7.8 Error: authentication failed', {
      serverResponse: '535 5.7.8 Error: authentication failed',
    });
    smtp.onSend = (_mail, config) => {
      if (config.username === 'erin@echo.test') throw refusal;
    };

    let now = NOW;
    for (let call = 1; call <= 3; call += 1) {
      const summary = await sendDueMessages(deps, { now, ignoreSchedule: true });
      // a refused login stops the sender at its first message; the others wait
      expect(summary.retried).toBe(1);
      // counted up to the third, which stops the mailbox and starts the count over
      expect((await mailbox(erin.id)).failure_count).toBe(call < 3 ? call : 0);
      if (call < 3) expect(summary.mailboxErrors).toEqual([]);
      else expect(summary.mailboxErrors).toEqual([erin.id]);
      now = at(minutes(60 * call));
    }

    const broken = await mailbox(erin.id);
    expect(broken.status).toBe('error');
    expect(broken.last_error).toBe(
      'SMTP login refused: check the app password (535 5.7.8 Error: authentication failed)',
    );
    expect(broken.last_error).not.toContain('secret');
    // Grace's mail went out on the first call; nothing of Erin's did, and nothing is claimed any more
    expect((await messageRow(graces.id)).status).toBe('sent');
    for (const row of rows) expect((await messageRow(row.id)).status).toBe('planned');
    expect((await sendDueMessages(deps, { now: at(minutes(600)), ignoreSchedule: true })).claimed).toBe(0);
    expect(await interactions('failed')).toHaveLength(0);
  });

  it('gives up a message it cannot write and goes on with the batch', async () => {
    // a reply in a thread opened from a template is written from a template: here a broken one
    const opening = await insertMessage(database.db, {
      sender: frank,
      recipient: erin,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
    });
    await openedFromTemplate(opening);
    const broken = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      parent: opening,
      dueAt: at(-minutes(2)),
    });
    const fine = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(-minutes(1)) });
    deps.templates = {
      pickTemplate: async (workspaceId, criteria, seed) =>
        seed === seedFrom(broken.message_id)
          ? { id: 'tpl_broken', subject: 'Hello {name', body: 'x' }
          : pickDefaultTemplate(workspaceId, criteria, seed),
    };

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });

    expect(summary).toMatchObject({ sent: 1, failed: 1 });
    const failed = await messageRow(broken.id);
    expect(failed.status).toBe('failed');
    expect(failed.last_error).toMatch(/^cannot write the message: subject: unbalanced "\{"/);
    expect((await messageRow(fine.id)).status).toBe('sent');
    expect((await interactions('failed')).map((i) => i.message_id)).toEqual([broken.message_id]);
    expect((await mailbox(erin.id)).failure_count).toBe(0);
  });

  it('writes the mail of a workspace that has no templates at all', async () => {
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    deps.templates = { pickTemplate: async () => undefined };
    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 1, failed: 0 });
    expect((await messageRow(row.id)).template_id).toBeNull();
    expect(smtp.sent[0].mail.text).toContain('Frank');
  });

  it('skips mail of a mailbox deleted in the middle of the batch', async () => {
    // written from a template (a reply in a template thread), so the template pick can delete Frank
    const opening = await insertMessage(database.db, {
      sender: frank,
      recipient: erin,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
    });
    await openedFromTemplate(opening);
    const gone = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      parent: opening,
      dueAt: at(-minutes(2)),
    });
    const kept = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: at(-minutes(1)) });
    deps.templates = {
      pickTemplate: async (workspaceId, criteria, seed) => {
        // Frank is deleted while his message is being written
        if (seed === seedFrom(gone.message_id))
          await database.db.deleteFrom('mailboxes').where('id', '=', frank.id).execute();
        return pickDefaultTemplate(workspaceId, criteria, seed);
      },
    };

    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: true });

    expect(summary.sent).toBe(1);
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([kept.message_id]);
    expect(
      await database.db.selectFrom('warmup_messages').select('id').where('id', '=', gone.id).executeTakeFirst(),
    ).toBeUndefined();
  });
});
