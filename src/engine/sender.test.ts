import { createServer, type Server, type Socket } from 'node:net';
import { CompiledQuery, type KyselyPlugin, type QueryId, type RootOperationNode } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createSmtpSender } from '../mail/smtp.js';
import type { MailboxRow } from '../db/schema.js';
import type { OutgoingMail } from '../mail/smtp.js';
import type { InteractionType } from '../interactions/interactions.schemas.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import {
  FakeSmtp,
  insertMailbox,
  insertMessage,
  insertPlan,
  insertWorkspace,
  mailWorkDeps,
  pickDefaultTemplate,
  smtpError,
  type FixtureDeps,
} from '../../test/helpers/engine-fixtures.js';
import { boundaryFor, clientProfileOf, type ClientProfileName } from './client-profile.js';
import { seedFrom } from './message-content.js';
import { retryDelayMs } from './backoff.js';
import {
  MIN_SEND_GAP_MS,
  REASON_DAY_OVER,
  REASON_LATE_SHARE,
  REASON_NO_ROOM,
  REASON_OTHER_RECIPIENT_DAY,
  REASON_RECIPIENT_AWAY,
  REASON_REPLY_FIRST,
} from './send-budget.js';
import { MAX_SEND_ATTEMPTS, sendDueMessages, STALE_AFTER_MS } from './sender.js';
import { DEFAULT_TEMPLATES } from '../templates/default-templates.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';

const HTML_START: Record<ClientProfileName, string> = {
  thunderbird: '<!DOCTYPE html>\n<html>\n  <head>',
  'apple-mail': '<html><head>',
  outlook: '<html xmlns:v="urn:schemas-microsoft-com:vml"',
  'gmail-app': '<div dir="ltr">',
};

const NOW = new Date('2026-03-12T10:00:00Z');
const minutes = (n: number) => n * 60_000;
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

let database: TestDatabase;
let smtp: FakeSmtp;
let deps: FixtureDeps;
let erin: MailboxRow;
let frank: MailboxRow;
let grace: MailboxRow;

beforeEach(async () => {
  database = await createTestDatabase();
  smtp = new FakeSmtp();
  deps = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory });
  const workspaceId = await insertWorkspace(database.db);
  erin = await insertMailbox(database.db, workspaceId, { email: 'erin@echo.test', name: 'Erin Echo' });
  frank = await insertMailbox(database.db, workspaceId, { email: 'frank.fox@foxtrot.test' });
  grace = await insertMailbox(database.db, workspaceId, {
    email: 'grace@golf.test',
    name: 'Grace',
    warmup: { language: 'de', timezone: 'Europe/Berlin' },
  });
  // a day with room for everything these tests send; the bounds themselves are tested below
  for (const mailbox of [erin, frank, grace]) await insertPlan(database.db, mailbox, '2026-03-12', 100);
});

afterEach(async () => {
  await database.close();
});

async function messageRow(id: string) {
  return database.db.selectFrom('warmup_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The type of the default template (see pickDefaultTemplate) a message was written from; null: none. */
function templateTypeOf(templateId: string | null): string | null {
  if (templateId === null) return null;
  return DEFAULT_TEMPLATES[Number(templateId.replace(/^tpl_/, ''))]?.type ?? null;
}

async function interactions(type?: InteractionType) {
  let query = database.db.selectFrom('interactions').selectAll().orderBy('occurred_at');
  if (type) query = query.where('type', '=', type);
  return query.execute();
}

async function daily(mailboxId: string) {
  return database.db.selectFrom('daily_stats').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
}

async function mailbox(id: string) {
  return database.db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

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
    const profile = clientProfileOf(erin.id);
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
    expect(stored.template_id).toMatch(/^tpl_/);
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
    const templateId = (
      await database.db
        .selectFrom('warmup_messages')
        .select('template_id')
        .where('message_id', '=', german.messageId)
        .executeTakeFirstOrThrow()
    ).template_id;
    expect(DEFAULT_TEMPLATES[Number(templateId?.slice(4))].language).toBe('de');
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
    expect(mail.subject).toBe('Re: Planning for next week');
    expect(mail.inReplyTo).toBe(reply.message_id);
    expect(mail.references).toEqual([first.message_id, reply.message_id]);
    // the client's own attribution, then the parent whole with the older quote it carries
    if (clientProfileOf(erin.id).name === 'outlook') {
      expect(mail.text).toContain('From: Frank Fox <frank.fox@foxtrot.test>\n');
      expect(mail.text).toContain('\n\nSure.\n\nOn Mar 12, Erin wrote:\n> Hi Frank,\n');
    } else {
      expect(mail.text).toMatch(/Frank Fox.* wrote:\n\n?> Sure\.\n>\n> On Mar 12, Erin wrote:\n>> Hi Frank,\n/);
    }
    expect(mail.html).toContain('Sure.');
    expect(mail.html).toContain('Hi Frank,');
    // the original sender's answer to the reply, the third turn, is written from a follow-up template
    const third = await messageRow(second.id);
    expect(third.turn).toBe(3);
    expect(templateTypeOf(third.template_id)).toBe('followup');
  });

  it('writes the third turn from a reply template when the workspace has no follow-up', async () => {
    deps.templates = {
      pickTemplate: (workspaceId, criteria, seed) =>
        criteria.type === 'followup' ? Promise.resolve(undefined) : pickDefaultTemplate(workspaceId, criteria, seed),
    };
    const first = await insertMessage(database.db, {
      sender: erin,
      recipient: frank,
      dueAt: at(-minutes(120)),
      status: 'sent',
      sentAt: at(-minutes(120)),
    });
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
    // ten sends planned between 10:00 and 11:48; the server is down from 10:00 to 14:00
    const rows = [];
    for (let i = 0; i < 10; i += 1)
      rows.push(await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(12 * i)) }));
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
    const broken = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(2)) });
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

  it('fails a message whose workspace has no template without crashing', async () => {
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(1)) });
    deps.templates = { pickTemplate: async () => undefined };
    const summary = await sendDueMessages(deps, { now: NOW, ignoreSchedule: false });
    expect(summary.failed).toBe(1);
    expect((await messageRow(row.id)).last_error).toContain('no "initial" template');
  });

  it('skips mail of a mailbox deleted in the middle of the batch', async () => {
    const gone = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(-minutes(2)) });
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

describe('send bounds at the sender', () => {
  async function replyTo(sender: MailboxRow, recipient: MailboxRow, dueAt: Date) {
    const parent = await insertMessage(database.db, {
      sender: recipient,
      recipient: sender,
      dueAt: at(-minutes(300)),
      status: 'sent',
      sentAt: at(-minutes(300)),
      subject: 'Hello',
      body: 'Hi',
    });
    return insertMessage(database.db, { sender, recipient, dueAt, parent });
  }

  /** Runs the sender every two minutes in [from, to); the time of each send. */
  async function sendEveryTwoMinutes(from: Date, to: Date): Promise<number[]> {
    const times: number[] = [];
    for (let t = from.getTime(); t < to.getTime(); t += minutes(2)) {
      const before = smtp.sent.length;
      await sendDueMessages(deps, { now: new Date(t), ignoreSchedule: false });
      for (let i = before; i < smtp.sent.length; i += 1) times.push(t);
    }
    return times;
  }

  /** Why each of the sender's closed rows was not sent. */
  async function closedReasons(sender: MailboxRow): Promise<Array<string | null>> {
    const closed = await database.db
      .selectFrom('warmup_messages')
      .select('last_error')
      .where('sender_mailbox_id', '=', sender.id)
      .where('status', '=', 'expired')
      .execute();
    return closed.map((row) => row.last_error);
  }

  it('never sends more than the day’s budget, replies first', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 2);
    const threads = [];
    for (let i = 0; i < 3; i += 1)
      threads.push(await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(10 * i)) }));
    const reply = await replyTo(erin, grace, at(minutes(1)));
    for (let t = 0; t <= 60; t += 2) await sendDueMessages(deps, { now: at(minutes(t)), ignoreSchedule: false });
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([threads[0].message_id, reply.message_id]);
    const rest = await Promise.all(threads.slice(1).map((r) => messageRow(r.id)));
    // the day had room for one more: the threads planned for later gave way to the reply
    expect(rest.map((r) => [r.status, r.last_error])).toEqual([
      ['expired', REASON_REPLY_FIRST],
      ['expired', REASON_REPLY_FIRST],
    ]);
  });

  it('sends nothing on a day without a plan; a reply waits for the next window', async () => {
    const day = '2026-03-14'; // a Saturday
    const saturday = new Date(`${day}T10:00:00Z`);
    const weekdays = await insertMailbox(database.db, erin.workspace_id, {
      email: 'wes@whiskey.test',
      warmup: { weekdaysOnly: true, sendWindow: { start: '09:00', end: '17:00' } },
    });
    const reply = await replyTo(weekdays, frank, saturday);
    const summary = await sendDueMessages(deps, { now: saturday, ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, deferred: 1 });
    expect(await messageRow(reply.id)).toMatchObject({
      status: 'planned',
      plan_day: '2026-03-16',
      due_at: '2026-03-16T09:00:00.000Z',
    });
  });

  it('sends nothing to a recipient that answers automatically: mail planned before it was noticed is closed', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 3);
    await database.db
      .updateTable('mailboxes')
      .set({ auto_reply_at: at(-minutes(60)).toISOString() })
      .where('id', '=', frank.id)
      .execute();
    const toFrank = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: NOW });
    const replyToFrank = await replyTo(erin, frank, NOW);
    const toGrace = await insertMessage(database.db, { sender: erin, recipient: grace, dueAt: NOW });
    for (let t = 0; t <= 10; t += 2) await sendDueMessages(deps, { now: at(minutes(t)), ignoreSchedule: false });
    expect(smtp.sent.map((s) => s.mail.messageId)).toEqual([toGrace.message_id]);
    for (const row of [toFrank, replyToFrank])
      expect(await messageRow(row.id)).toMatchObject({ status: 'expired', last_error: REASON_RECIPIENT_AWAY });
  });

  it('sends nothing outside the window; a new thread due after it is closed with its reason', async () => {
    const evening = new Date('2026-03-12T18:30:00Z');
    const thread = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: at(minutes(500)) });
    const summary = await sendDueMessages(deps, { now: evening, ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, dropped: 1 });
    expect(await messageRow(thread.id)).toMatchObject({ status: 'expired', last_error: REASON_NO_ROOM });
  });

  it('two workers at once never send for one mailbox within the gap', async () => {
    for (let i = 0; i < 12; i += 1) {
      const sender = [erin, frank, grace][i % 3];
      const recipient = [frank, grace, erin][i % 3];
      await insertMessage(database.db, { sender, recipient, dueAt: at(-minutes(i % 5)) });
    }
    const one = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-one' });
    const two = mailWorkDeps(database.db, database.dialect, { smtp: smtp.factory, workerId: 'worker-two' });
    const sentAt: Array<{ from: string; t: number }> = [];
    for (let t = 0; t <= 60; t += 1) {
      const before = smtp.sent.length;
      await Promise.all([
        sendDueMessages(one, { now: at(minutes(t)), ignoreSchedule: false }),
        sendDueMessages(two, { now: at(minutes(t)), ignoreSchedule: false }),
      ]);
      for (const sent of smtp.sent.slice(before)) sentAt.push({ from: sent.mail.from.address, t: minutes(t) });
    }
    expect(sentAt).toHaveLength(12);
    for (const address of new Set(sentAt.map((s) => s.from))) {
      const times = sentAt.filter((s) => s.from === address).map((s) => s.t);
      for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
    }
  });

  it('a mailbox back late in its planned day (paused since before its window) sends only the late share', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 8);
    const hour = (h: number) => new Date(`2026-03-12T${String(h).padStart(2, '0')}:00:00Z`);
    for (let h = 9; h <= 16; h += 1)
      await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: hour(h) });
    // back at 13:00: half of the 08:00–18:00 window is left, so half of the 8
    const times = await sendEveryTwoMinutes(hour(13), hour(18));
    expect(times.length).toBeLessThanOrEqual(4);
    expect(times.length).toBeGreaterThan(0);
    for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
    const closed = await closedReasons(erin);
    expect(closed.length).toBe(8 - times.length);
    for (const reason of closed) expect(reason).toMatch(/^not sent: /);
  });

  it('a mailbox proven a minute ago keeps the gap after its round trip’s check message', async () => {
    await database.db
      .updateTable('mailboxes')
      .set({ proven_at: at(-minutes(1)).toISOString() })
      .where('id', '=', erin.id)
      .execute();
    const row = await insertMessage(database.db, { sender: erin, recipient: frank, dueAt: NOW });
    expect(await sendDueMessages(deps, { now: NOW, ignoreSchedule: false })).toMatchObject({ sent: 0, deferred: 1 });
    expect(await messageRow(row.id)).toMatchObject({
      status: 'planned',
      due_at: at(MIN_SEND_GAP_MS - minutes(1)).toISOString(),
    });
    expect(await sendDueMessages(deps, { now: at(MIN_SEND_GAP_MS - minutes(1)), ignoreSchedule: false })).toMatchObject(
      { sent: 1 },
    );
  });

  it('a mailbox resumed inside its window sends only the late share, though nothing fell due while it was paused', async () => {
    await insertPlan(database.db, erin, '2026-03-12', 8);
    const time = (hhmm: string) => new Date(`2026-03-12T${hhmm}:00Z`);
    await applyMailboxEvent(database.db, erin.id, { type: 'paused' }, { at: time('07:30') });
    // all eight due after the resume at 13:00, half an hour apart: none is overdue
    for (let i = 0; i < 8; i += 1)
      await insertMessage(database.db, {
        sender: erin,
        recipient: frank,
        dueAt: new Date(time('13:05').getTime() + minutes(30 * i)),
      });
    await applyMailboxEvent(database.db, erin.id, { type: 'resumed', at: time('13:00') }, { at: time('13:00') });
    // half of the 08:00–18:00 window is left, so half of the 8
    const times = await sendEveryTwoMinutes(time('13:00'), time('18:00'));
    expect(times.length).toBe(4);
    const closed = await closedReasons(erin);
    expect(closed).toHaveLength(4);
    expect(closed).toContain(REASON_LATE_SHARE);
    for (const reason of closed) expect(reason).toMatch(/^not sent: /);
  });

  it('a new thread due before its recipient’s midnight does not leave after it (it would count on the next day)', async () => {
    const night = await insertMailbox(database.db, erin.workspace_id, {
      email: 'nia@november.test',
      warmup: { sendWindow: { start: '00:00', end: '23:59' } },
    });
    await insertPlan(database.db, night, '2026-03-12', 5);
    // 22:58 UTC is 23:58 in Berlin; at 23:00:30 UTC Grace's next day has begun
    const thread = await insertMessage(database.db, {
      sender: night,
      recipient: grace,
      dueAt: new Date('2026-03-12T22:58:00Z'),
    });
    const summary = await sendDueMessages(deps, { now: new Date('2026-03-12T23:00:30Z'), ignoreSchedule: false });
    expect(summary).toMatchObject({ sent: 0, dropped: 1 });
    expect(await messageRow(thread.id)).toMatchObject({ status: 'expired', last_error: REASON_OTHER_RECIPIENT_DAY });
  });
});
