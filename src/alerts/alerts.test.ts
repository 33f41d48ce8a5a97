// Alerts where people are, end to end over real servers: email alerts mailed through the test
// mail stack's submission port to the workspace's owners and admins and read back over IMAP;
// Slack and Teams messages posted to a loopback HTTP receiver in each chat's format; the API by
// role; and the attacker's cases: a destination on a private address, a receiver that answers
// with an endless body or not at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ImapFlow } from 'imapflow';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAIL_POLICY, type MailPolicy } from '../mail/policy.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { deliverDueWebhooks, DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/webhook-delivery.js';
import type { Alerts } from '../webhooks/webhooks.schemas.js';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { insertMailbox } from '../../test/helpers/engine-fixtures.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../../test/helpers/test-app.js';
import {
  describeWithMailStack,
  requireMailStack,
  stackMailPolicy,
  type MailStack,
} from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { loadSecretKey } from '../secrets/secrets.js';
import type { AlertMailer } from './alert-mail.js';

const silent = pino({ level: 'silent' });
const LOOPBACK_POLICY: MailPolicy = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };
const STOPPED_BECAUSE = 'SMTP login refused: check the app password of the mailbox.';

interface Posted {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A loopback HTTP receiver standing in for Slack's and Teams' incoming webhooks. */
async function startReceiver(
  answer: (request: http.IncomingMessage, response: http.ServerResponse) => void = (_, response) =>
    response.writeHead(200).end('ok'),
) {
  const posted: Posted[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      posted.push({
        path: request.url ?? '',
        headers: request.headers,
        body: JSON.parse(body) as Record<string, unknown>,
      });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    posted,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function deliveryDeps(t: TestApp, policy: MailPolicy, extra: { alertMailer?: AlertMailer; timeoutMs?: number } = {}) {
  return {
    db: t.database.db,
    dialect: t.database.dialect,
    clock: t.clock,
    logger: silent,
    secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: t.database.dataDir }),
    policy,
    workerId: 'alerts-test',
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, timeoutMs: extra.timeoutMs ?? DEFAULT_WEBHOOK_SETTINGS.timeoutMs },
    ...(extra.alertMailer ? { alertMailer: extra.alertMailer } : {}),
  };
}

/** A mailbox of the workspace stops with STOPPED_BECAUSE: the `mailbox.error` event. */
async function stopAMailbox(t: TestApp, workspaceId: string, email: string): Promise<void> {
  const mailbox = await insertMailbox(t.database.db, workspaceId, { email });
  await applyMailboxEvent(
    t.database.db,
    mailbox.id,
    { type: 'stopped', lastError: STOPPED_BECAUSE },
    { at: new Date() },
  );
}

describe('alerts API by role', () => {
  let t: TestApp;
  let owner: TestPerson;
  let admin: TestPerson;
  let viewer: TestPerson;
  beforeAll(async () => {
    t = await createTestApp({ mailPolicy: DEFAULT_MAIL_POLICY, alertMailConfigured: true });
    owner = await createPerson(t, t.workspace.id, 'owner');
    admin = await createPerson(t, t.workspace.id, 'admin');
    viewer = await createPerson(t, t.workspace.id, 'viewer');
  });
  afterAll(() => t.close());

  it('lets owners and admins choose the emailed events, and viewers read them but not change them', async () => {
    for (const person of [owner, admin]) {
      const set = await person.request({
        method: 'PUT',
        url: '/api/alerts/email',
        payload: { events: ['mailbox.error'] },
      });
      expect(set.statusCode, set.body).toBe(200);
      expect((set.json() as { alerts: Alerts }).alerts.email).toEqual({
        available: true,
        unavailableReason: null,
        events: ['mailbox.error'],
        recipients: 2,
      });
    }
    const refused = await viewer.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: [] } });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    const read = await viewer.request({ method: 'GET', url: '/api/alerts' });
    expect(read.statusCode).toBe(200);
    expect((read.json() as { alerts: Alerts }).alerts.email.events).toEqual(['mailbox.error']);
    expect((await viewer.request({ method: 'POST', url: '/api/alerts/email/test' })).statusCode).toBe(403);
    expect(
      (
        await viewer.request({
          method: 'POST',
          url: '/api/webhooks',
          payload: { kind: 'slack', url: 'https://hooks.slack.com/services/T1/B1/x', events: ['mailbox.error'] },
        })
      ).statusCode,
    ).toBe(403);
  });

  it('refuses an unknown event and an unknown field, naming it', async () => {
    const unknown = await admin.request({
      method: 'PUT',
      url: '/api/alerts/email',
      payload: { events: ['mailbox.gone'] },
    });
    expect(unknown.statusCode).toBe(400);
    expect(JSON.stringify(unknown.json())).toContain('/body/events');
    const extra = await admin.request({
      method: 'PUT',
      url: '/api/alerts/email',
      payload: { events: [], to: 'x@y.z' },
    });
    expect(extra.statusCode).toBe(400);
  });

  it('keeps a Slack URL secret: masked in every answer, no signing secret, never in the delivery log', async () => {
    const url = 'https://hooks.slack.com/services/T0001/B0002/s3cretTokenAbCd';
    const created = await admin.request({
      method: 'POST',
      url: '/api/webhooks',
      payload: { kind: 'slack', url, events: ['mailbox.error'], description: 'ops' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json() as { webhook: { id: string; url: string; kind: string }; secret?: string };
    expect(body.secret).toBeUndefined();
    expect(body.webhook).toMatchObject({ kind: 'slack', url: 'https://hooks.slack.com/…AbCd' });
    const id = body.webhook.id;
    const test = await admin.request({ method: 'POST', url: `/api/webhooks/${id}/test` });
    expect(test.statusCode).toBe(202);
    const answers = [
      created,
      test,
      await admin.request({ method: 'GET', url: '/api/webhooks' }),
      await admin.request({ method: 'GET', url: `/api/webhooks/${id}` }),
      await admin.request({ method: 'GET', url: `/api/webhooks/${id}/deliveries` }),
      await viewer.request({ method: 'GET', url: '/api/alerts' }),
    ];
    for (const answer of answers) expect(answer.body).not.toContain('s3cretToken');
    expect((answers[5]!.json() as { alerts: Alerts }).alerts.destinations).toMatchObject([
      { id, kind: 'slack', url: 'https://hooks.slack.com/…AbCd' },
    ]);
    const rotate = await admin.request({ method: 'POST', url: `/api/webhooks/${id}/rotate-secret` });
    expect(rotate.statusCode).toBe(409);
  });

  it('keeps the email alert out of the webhooks API', async () => {
    const listed = (await owner.request({ method: 'GET', url: '/api/webhooks' })).json() as {
      webhooks: { kind: string }[];
    };
    expect(listed.webhooks.map((webhook) => webhook.kind)).not.toContain('email');
  });

  it('refuses a Slack or Teams destination on a private or loopback address', async () => {
    for (const [kind, url] of [
      ['slack', 'http://10.1.2.3/services/x'],
      ['teams', 'https://169.254.169.254/latest/meta-data'],
      ['slack', 'http://127.0.0.1:9/hook'],
      ['teams', 'http://[::1]/hook'],
    ] as const) {
      const answer = await admin.request({
        method: 'POST',
        url: '/api/webhooks',
        payload: { kind, url, events: ['mailbox.error'] },
      });
      expect(answer.statusCode, url).toBe(400);
      expect((answer.json() as { errors: { path: string }[] }).errors[0]!.path).toBe('/body/url');
    }
  });
});

describe('email alerts without an SMTP server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ mailPolicy: DEFAULT_MAIL_POLICY });
  });
  afterAll(() => t.close());

  it('are shown as unavailable with why, and cannot be turned on', async () => {
    const admin = await createPerson(t, t.workspace.id, 'admin');
    const read = (await admin.request({ method: 'GET', url: '/api/alerts' })).json() as { alerts: Alerts };
    expect(read.alerts.email.available).toBe(false);
    expect(read.alerts.email.unavailableReason).toContain('SMTP server');
    const set = await admin.request({
      method: 'PUT',
      url: '/api/alerts/email',
      payload: { events: ['mailbox.error'] },
    });
    expect(set.statusCode).toBe(409);
    expect(set.json()).toMatchObject({ code: 'email_alerts_unavailable', errors: [{ path: '/body/events' }] });
    expect((await admin.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: [] } })).statusCode).toBe(
      200,
    );
  });
});

describe('Slack and Teams deliveries at a loopback receiver', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    t = await createTestApp({ mailPolicy: LOOPBACK_POLICY });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('posts mailbox.error in each chat’s format, with what happened and the fix, unsigned', async () => {
    for (const kind of ['slack', 'teams']) {
      const created = await t.workspace.request({
        method: 'POST',
        url: '/api/webhooks',
        payload: { kind, url: receiver.url(`/${kind}/T1/B2/secret-${kind}`), events: ['mailbox.error'] },
      });
      expect(created.statusCode, created.body).toBe(201);
    }
    await stopAMailbox(t, t.workspace.id, 'stopped@chat.test');
    const summary = await deliverDueWebhooks(deliveryDeps(t, LOOPBACK_POLICY));
    expect(summary).toEqual({ delivered: 2, retried: 0, failed: 0 });

    const slack = receiver.posted.find((post) => post.path.startsWith('/slack/'))!;
    expect(slack.headers['content-type']).toBe('application/json');
    expect(slack.headers['webhook-signature']).toBeUndefined();
    expect(slack.body.text).toBe(
      `stopped@chat.test stopped warming up — Fix: ${STOPPED_BECAUSE} Then resume the mailbox on its page in the dashboard.`,
    );
    expect(slack.body.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'stopped@chat.test stopped warming up', emoji: false } },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: '*What happened*\nWarmup stopped for stopped@chat.test: the service could not log in to it or send from it.',
        },
      },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*Fix*\n${STOPPED_BECAUSE} Then resume the mailbox on its page in the dashboard.`,
        },
      },
    ]);

    const teams = receiver.posted.find((post) => post.path.startsWith('/teams/'))!;
    expect(teams.headers['webhook-signature']).toBeUndefined();
    expect(teams.body.type).toBe('message');
    const [attachment] = teams.body.attachments as { contentType: string; content: Record<string, unknown> }[];
    expect(attachment!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(attachment!.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(cardTexts(attachment!.content)).toEqual([
      'stopped@chat.test stopped warming up',
      'What happened',
      'Warmup stopped for stopped@chat.test: the service could not log in to it or send from it.',
      'Fix',
      `${STOPPED_BECAUSE} Then resume the mailbox on its page in the dashboard.`,
    ]);
  });

  it('escapes a stranger’s words for Slack: no @channel, no disguised link', async () => {
    receiver.posted.length = 0;
    const { webhook } = (
      await t.workspace.request({
        method: 'POST',
        url: '/api/webhooks',
        payload: { kind: 'slack', url: receiver.url('/slack/escape'), events: ['mailbox.human_reply'] },
      })
    ).json() as { webhook: { id: string } };
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, { email: 'reply@chat.test' });
    const { enqueueEvent } = await import('../webhooks/webhooks.repository.js');
    await enqueueEvent(t.database.db, {
      workspaceId: t.workspace.id,
      endpointId: webhook.id,
      type: 'mailbox.human_reply',
      at: new Date(),
      data: {
        mailbox: { id: mailbox.id, email: mailbox.email, name: null },
        reply: {
          from: { name: 'Mallory', email: 'm@evil.test' },
          subject: 'hi',
          excerpt: '<!channel> <https://evil.test|your bank>',
        },
      },
    });
    await deliverDueWebhooks(deliveryDeps(t, LOOPBACK_POLICY));
    const text = JSON.stringify(receiver.posted.at(-1)!.body);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://evil.test');
    expect(text).toContain('&lt;!channel&gt;');
  });

  it('gives Teams a stranger’s words as text runs, which Adaptive Cards do not read as Markdown', async () => {
    receiver.posted.length = 0;
    const { webhook } = (
      await t.workspace.request({
        method: 'POST',
        url: '/api/webhooks',
        payload: { kind: 'teams', url: receiver.url('/teams/escape'), events: ['mailbox.human_reply'] },
      })
    ).json() as { webhook: { id: string } };
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, { email: 'teams-reply@chat.test' });
    const { enqueueEvent } = await import('../webhooks/webhooks.repository.js');
    const excerpt = '**Urgent** [Your invoice](https://evil.test/pay)';
    await enqueueEvent(t.database.db, {
      workspaceId: t.workspace.id,
      endpointId: webhook.id,
      type: 'mailbox.human_reply',
      at: new Date(),
      data: {
        mailbox: { id: mailbox.id, email: mailbox.email, name: null },
        reply: { from: { name: 'Mallory', email: 'm@evil.test' }, subject: 'hi', excerpt },
      },
    });
    await deliverDueWebhooks(deliveryDeps(t, LOOPBACK_POLICY));
    const [attachment] = receiver.posted.at(-1)!.body.attachments as { content: Record<string, unknown> }[];
    const body = attachment!.content.body as { type: string }[];
    // a TextBlock would render the link and the bold: none carries text here
    expect(body.map((element) => element.type)).toEqual(body.map(() => 'RichTextBlock'));
    expect(cardTexts(attachment!.content).some((text) => text.includes(excerpt))).toBe(true);
  });
});

/** The text of each element of an Adaptive Card's body, run by run. */
function cardTexts(card: Record<string, unknown>): string[] {
  return (card.body as { inlines: { type: string; text: string }[] }[]).map((element) =>
    element.inlines.map((run) => (run.type === 'TextRun' ? run.text : '')).join(''),
  );
}

describe('hostile chat receivers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ mailPolicy: LOOPBACK_POLICY });
  });
  afterAll(() => t.close());

  async function attemptOnce(path: string, answer: Parameters<typeof startReceiver>[0], policy = LOOPBACK_POLICY) {
    const receiver = await startReceiver(answer);
    try {
      await t.database.db.deleteFrom('webhook_endpoints').where('workspace_id', '=', t.workspace.id).execute();
      const created = await t.workspace.request({
        method: 'POST',
        url: '/api/webhooks',
        payload: {
          kind: 'slack',
          url: receiver.url(path).replace('127.0.0.1', path === '/named' ? 'localhost' : '127.0.0.1'),
          events: ['mailbox.error'],
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const { webhook } = created.json() as { webhook: { id: string } };
      await t.workspace.request({ method: 'POST', url: `/api/webhooks/${webhook.id}/test` });
      const started = performance.now();
      const summary = await deliverDueWebhooks(deliveryDeps(t, policy, { timeoutMs: 1_000 }));
      const elapsedMs = performance.now() - started;
      const log = (
        await t.workspace.request({ method: 'GET', url: `/api/webhooks/${webhook.id}/deliveries` })
      ).json() as {
        deliveries: { attemptLog: { statusCode: number | null; error: string | null }[] }[];
      };
      return { summary, elapsedMs, attempt: log.deliveries[0]!.attemptLog[0]!, posted: receiver.posted.length };
    } finally {
      await receiver.close();
    }
  }

  it('stops reading an endless answer at 64 KiB', async () => {
    const result = await attemptOnce('/endless', (_, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    expect(result.summary.delivered).toBe(1);
    expect(result.elapsedMs).toBeLessThan(1_000);
  });

  it('gives up on a receiver that never answers within the timeout', async () => {
    const result = await attemptOnce('/silent', () => undefined);
    expect(result.attempt).toEqual(expect.objectContaining({ statusCode: null, error: 'no answer within 1 s' }));
    expect(result.summary.retried).toBe(1);
    expect(result.elapsedMs).toBeLessThan(3_000);
  });

  it('gives up on a receiver that trickles its answer', async () => {
    const result = await attemptOnce('/trickle', (_, response) => {
      response.writeHead(200);
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write('x')), 100);
    });
    expect(result.attempt.error).toBe('no answer within 1 s');
    expect(result.elapsedMs).toBeLessThan(3_000);
  });

  it('never reaches a name that resolves to loopback unless the operator allowed it', async () => {
    const result = await attemptOnce('/named', undefined, DEFAULT_MAIL_POLICY);
    expect(result.posted).toBe(0);
    expect(result.attempt).toEqual(
      expect.objectContaining({ statusCode: null, error: 'could not connect to the endpoint' }),
    );
  });
});

describeWithMailStack('email alerts through the test mail stack', () => {
  let stack: MailStack;
  let t: TestApp;
  const [notices, olive, adam, vera, rita] = MAIL_USERS.alerts;

  beforeAll(async () => {
    stack = requireMailStack();
    t = await createTestApp({ mailPolicy: DEFAULT_MAIL_POLICY, alertMailConfigured: true });
  });
  afterAll(() => t.close());

  function mailer(): AlertMailer {
    return {
      settings: {
        host: stack.host,
        port: stack.submissionPort,
        tls: 'starttls',
        username: notices!.email,
        password: notices!.password,
        from: `Warmup alerts <${notices!.email}>`,
      },
      policy: stackMailPolicy(stack),
    };
  }

  /** The text of the newest message in the user's INBOX whose subject holds `subject`, once it arrived. */
  async function inboxMessage(user: { email: string; password: string }, subject: string): Promise<string | undefined> {
    const client = new ImapFlow({
      host: stack.host,
      port: stack.imapPort,
      secure: false,
      auth: { user: user.email, pass: user.password },
      tls: { rejectUnauthorized: false },
      logger: false,
    });
    await client.connect();
    try {
      for (let attempt = 0; attempt < 40; attempt++) {
        const lock = await client.getMailboxLock('INBOX');
        try {
          const uids = await client.search({ subject }, { uid: true });
          if (uids && uids.length > 0) {
            const message = await client.fetchOne(String(uids.at(-1)), { source: true }, { uid: true });
            if (message && message.source) return message.source.toString('utf8');
          }
        } finally {
          lock.release();
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return undefined;
    } finally {
      await client.logout();
    }
  }

  /** How many messages in the user's INBOX have `subject` in their subject. */
  async function inboxCount(user: { email: string; password: string }, subject: string): Promise<number> {
    const client = new ImapFlow({
      host: stack.host,
      port: stack.imapPort,
      secure: false,
      auth: { user: user.email, pass: user.password },
      tls: { rejectUnauthorized: false },
      logger: false,
    });
    await client.connect();
    try {
      const lock = await client.getMailboxLock('INBOX');
      try {
        const uids = await client.search({ subject }, { uid: true });
        return uids ? uids.length : 0;
      } finally {
        lock.release();
      }
    } finally {
      await client.logout();
    }
  }

  it('mails a stopped mailbox to the owners and admins with what happened and the fix, not to viewers', async () => {
    const workspace = await t.createWorkspace('Acme mail team');
    const owner = await createPerson(t, workspace.id, 'owner', olive!.email);
    await createPerson(t, workspace.id, 'admin', adam!.email);
    await createPerson(t, workspace.id, 'viewer', vera!.email);
    const set = await owner.request({
      method: 'PUT',
      url: '/api/alerts/email',
      payload: { events: ['mailbox.error'] },
    });
    expect(set.statusCode, set.body).toBe(200);

    const mailboxEmail = `stopped-${Date.now()}@acme.test`;
    await stopAMailbox(t, workspace.id, mailboxEmail);
    const summary = await deliverDueWebhooks(deliveryDeps(t, DEFAULT_MAIL_POLICY, { alertMailer: mailer() }));
    expect(summary).toEqual({ delivered: 1, retried: 0, failed: 0 });

    for (const person of [olive!, adam!]) {
      const raw = await inboxMessage(person, mailboxEmail);
      expect(raw, person.email).toBeDefined();
      const unfolded = raw!.replace(/=\r?\n/g, '').replace(/\r?\n\s+/g, ' ');
      expect(unfolded).toContain(`Subject: [Warmup] ${mailboxEmail} stopped warming up`);
      expect(unfolded).toContain('What happened');
      expect(unfolded).toContain(`Warmup stopped for ${mailboxEmail}`);
      expect(unfolded).toContain('Fix');
      expect(unfolded).toContain(STOPPED_BECAUSE);
      expect(unfolded).toContain('Acme mail team');
      expect(unfolded).not.toContain(notices!.password);
    }
    expect(await inboxMessage(vera!, mailboxEmail)).toBeUndefined();
  }, 60_000);

  it('mails a retry only to those who did not get it: a refused recipient does not cost the others a second copy', async () => {
    const workspace = await t.createWorkspace('Retry team');
    const owner = await createPerson(t, workspace.id, 'owner', rita!.email);
    // sorted after rita, and refused by the server at RCPT: the stack has no such mailbox
    await createPerson(t, workspace.id, 'admin', 'zed-no-such-mailbox@alert-team.test');
    await owner.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: ['mailbox.error'] } });
    const mailboxEmail = `retried-${Date.now()}@acme.test`;
    await stopAMailbox(t, workspace.id, mailboxEmail);
    const deps = deliveryDeps(t, DEFAULT_MAIL_POLICY, { alertMailer: mailer() });
    expect(await deliverDueWebhooks(deps)).toEqual({ delivered: 0, retried: 1, failed: 0 });
    // the retry is due at once
    await t.database.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: new Date(0).toISOString() })
      .where('workspace_id', '=', workspace.id)
      .execute();
    expect(await deliverDueWebhooks(deps)).toEqual({ delivered: 0, retried: 1, failed: 0 });
    expect(await inboxMessage(rita!, mailboxEmail)).toBeDefined();
    expect(await inboxCount(rita!, mailboxEmail)).toBe(1);
  }, 60_000);

  it('does not mail an event the workspace did not choose, and fails honestly with a wrong SMTP password', async () => {
    const workspace = await t.createWorkspace('Quiet team');
    const owner = await createPerson(t, workspace.id, 'owner');
    await owner.request({ method: 'PUT', url: '/api/alerts/email', payload: { events: ['daily.summary'] } });
    await stopAMailbox(t, workspace.id, `quiet-${Date.now()}@acme.test`);
    expect(await deliverDueWebhooks(deliveryDeps(t, DEFAULT_MAIL_POLICY, { alertMailer: mailer() }))).toEqual({
      delivered: 0,
      retried: 0,
      failed: 0,
    });

    const test = await owner.request({ method: 'POST', url: '/api/alerts/email/test' });
    expect(test.statusCode, test.body).toBe(202);
    const wrong = mailer();
    wrong.settings = { ...wrong.settings, password: 'not-the-password' };
    expect(await deliverDueWebhooks(deliveryDeps(t, DEFAULT_MAIL_POLICY, { alertMailer: wrong }))).toEqual({
      delivered: 0,
      retried: 1,
      failed: 0,
    });
    const row = await t.database.db
      .selectFrom('webhook_deliveries')
      .select('last_error')
      .where('workspace_id', '=', workspace.id)
      .executeTakeFirstOrThrow();
    expect(row.last_error).toBe('the alert mail server did not take the message (the service log says why)');
  }, 60_000);
});
