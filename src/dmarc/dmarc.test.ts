// DMARC aggregate reports end to end on the real mail stack: a provider's report mail, a gzip
// attachment, arrives at the workspace's `rua` mailbox through the stack's MX beside a person's
// note, a second copy of the same report, a gzip bomb and an attachment too large to download. One
// run of the `dmarc` job keeps the report once and moves its two copies into INBOX/Processed, sets
// the last two aside with their reason and, not knowing them for reports, leaves them where they
// were, as it leaves the note, all still unread; the API shows the report's figures to this
// workspace only.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { ImapFlow } from 'imapflow';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createStackMailbox, testEngineDeps } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { describeWithMailStack, requireMailStack, type MailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../../test/mailstack/users.js';
import { createEngine, runOnce } from '../jobs/job-list.js';
import { readDmarcReports } from './dmarc-reader.js';

const [rua, otherRua] = MAIL_USERS.dmarc;
const OUTLOOK_REPORT = readFileSync(
  new URL('../../test/fixtures/dmarc/protection.outlook.com!example.com!1711756800!1711843200.xml', import.meta.url),
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stack: MailStack;

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

interface Seen {
  subject: string;
  flags: string[];
}

/** The messages of a folder, with their flags ([] when the folder does not exist). */
async function folderOf(account: MailUser, path: string): Promise<Seen[]> {
  return withClient(account, async (client) => {
    if (!(await client.list()).some((f) => f.path === path)) return [];
    const lock = await client.getMailboxLock(path);
    try {
      if (!client.mailbox || client.mailbox.exists === 0) return [];
      const messages = await client.fetchAll('1:*', { flags: true, envelope: true });
      return messages
        .filter((m) => !m.flags?.has('\\Deleted'))
        .map((m) => ({ subject: m.envelope?.subject ?? '', flags: [...(m.flags ?? [])] }));
    } finally {
      lock.release();
    }
  });
}

/** Mail from outside, as a provider delivers it: through the stack's MX, no login. */
async function deliver(to: MailUser, mail: SendMailOptions): Promise<void> {
  const transport = nodemailer.createTransport({
    host: stack.host,
    port: stack.smtpPort,
    secure: false,
    tls: { ca: readFileSync(stack.caCert, 'utf8'), servername: 'localhost' },
  });
  try {
    await transport.sendMail({ to: to.email, ...mail });
  } finally {
    transport.close();
  }
}

async function waitForInbox(account: MailUser, count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await folderOf(account, 'INBOX')).length >= count) return;
    await sleep(100);
  }
  throw new Error(`${account.email} did not receive ${count} messages`);
}

describeWithMailStack('DMARC aggregate reports read from a mailbox of the real mail stack', () => {
  let testApp: TestApp;
  let other: TestWorkspace;
  let mailboxId: string;
  let otherMailbox: string;

  beforeAll(async () => {
    stack = requireMailStack();
    // a few days after the Outlook.com report's day (2024-03-30), so it lies in the 30-day window
    testApp = await createTestApp({ clock: fixedClock('2024-04-05T12:00:00Z') });
    other = await testApp.createWorkspace('Other workspace');
    mailboxId = await createStackMailbox(testApp.workspace, stack, rua);
    otherMailbox = await createStackMailbox(other, stack, otherRua);
    expect(
      (
        await other.request({
          method: 'PUT',
          url: '/api/dmarc/source',
          payload: { mailboxId: otherMailbox, folder: 'INBOX' },
        })
      ).statusCode,
    ).toBe(200);
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it('names only a mailbox of its own workspace as the source', async () => {
    const foreign = await testApp.workspace.request({
      method: 'PUT',
      url: '/api/dmarc/source',
      payload: {
        mailboxId: otherMailbox,
        folder: 'INBOX',
      },
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().errors).toEqual([expect.objectContaining({ path: '/body/mailboxId' })]);
    expect((await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/source' })).json()).toEqual({
      source: null,
    });

    const named = await testApp.workspace.request({
      method: 'PUT',
      url: '/api/dmarc/source',
      payload: { mailboxId, folder: 'INBOX' },
    });
    expect(named.statusCode, named.body).toBe(200);
    expect(named.json()).toEqual({ source: { mailboxId, folder: 'INBOX', checkedAt: null, lastError: null } });
  });

  it('keeps the report once and files it, sets the bomb and the oversized aside where they are, leaves the note untouched', async () => {
    const report = {
      from: 'dmarcreport@microsoft.com',
      subject:
        'Report Domain: example.com Submitter: protection.outlook.com Report-ID: cfeafefe4129445e8c81018bd9177197',
      text: 'This is a DMARC aggregate report.',
      attachments: [
        {
          filename: 'protection.outlook.com!example.com!1711756800!1711843200.xml.gz',
          content: gzipSync(OUTLOOK_REPORT),
          contentType: 'application/gzip',
        },
      ],
    };
    await deliver(rua, { from: 'colleague@example.org', subject: 'Lunch on Friday?', text: 'Are you free?' });
    await deliver(rua, report);
    // the provider sent it again: it counts once
    await deliver(rua, { ...report, subject: `${report.subject} (resent)` });
    await deliver(rua, {
      from: 'noreply@bomb.example',
      subject: 'Report Domain: example.com Submitter: bomb.example Report-ID: 1',
      text: 'A report, they say.',
      attachments: [
        {
          filename: 'report.xml.gz',
          content: gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 }),
          contentType: 'application/gzip',
        },
      ],
    });
    // too large to download (judged by its size in the message's structure): set aside unread
    await deliver(rua, {
      from: 'noreply@huge.example',
      subject: 'Report Domain: example.com Submitter: huge.example Report-ID: 2',
      attachments: [{ filename: 'report.zip', content: randomBytes(2 * 1024 * 1024), contentType: 'application/zip' }],
    });
    await waitForInbox(rua, 5);

    const deps = testEngineDeps(testApp);
    const summary = await readDmarcReports(deps);
    // the other workspace's source is read too, and has nothing
    expect(summary).toEqual({ sources: 2, stored: 1, duplicates: 1, setAside: 2, left: 1, failed: 0 });

    const inbox = await folderOf(rua, 'INBOX');
    expect(inbox.map((m) => m.subject).sort()).toEqual(
      [
        'Lunch on Friday?',
        'Report Domain: example.com Submitter: bomb.example Report-ID: 1',
        'Report Domain: example.com Submitter: huge.example Report-ID: 2',
      ].sort(),
    );
    for (const message of inbox) expect(message.flags, message.subject).toEqual([]);
    const processedPath = (await withClient(rua, (c) => c.list())).find((f) => f.name === 'Processed')!.path;
    expect(processedPath).toMatch(/^INBOX[./]Processed$/);
    const processed = await folderOf(rua, processedPath);
    expect(processed.map((m) => m.subject).sort()).toEqual([report.subject, `${report.subject} (resent)`].sort());

    const domains = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains' });
    expect(domains.statusCode, domains.body).toBe(200);
    expect(domains.json()).toEqual({
      from: '2024-03-07',
      to: '2024-04-05',
      domains: [
        {
          domain: 'example.com',
          messages: 1,
          dmarcPass: 0,
          spfAlignedPass: 0,
          dkimAlignedPass: 0,
          dispositions: { none: 1, quarantine: 0, reject: 0 },
          alignedShare: 0,
          sources: 1,
          reports: 1,
          lastReportAt: '2024-04-05T12:00:00.000Z',
        },
      ],
      setAside: {
        count: 2,
        reasons: [
          { code: 'oversized', count: 2, latest: expect.stringMatching(/larger than 1536 KiB|more than 20 MiB/) },
        ],
      },
    });
    const domain = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains/Example.com' });
    expect(domain.json()).toMatchObject({
      domain: 'example.com',
      days: [{ day: '2024-03-30', messages: 1, reports: 1, dispositions: { none: 1, quarantine: 0, reject: 0 } }],
      sources: [{ ip: '192.0.2.20', name: null, messages: 1, dmarcPass: 0 }],
    });
    const source = (await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/source' })).json();
    expect(source.source).toMatchObject({ checkedAt: '2024-04-05T12:00:00.000Z', lastError: null });

    // the next run looks only at what is new: nothing left in place is read or counted again
    expect(await readDmarcReports(deps)).toEqual({
      sources: 2,
      stored: 0,
      duplicates: 0,
      setAside: 0,
      left: 0,
      failed: 0,
    });
    expect(await folderOf(rua, 'INBOX')).toEqual(inbox);
  });

  it('one workspace never sees the reports of another', async () => {
    const domains = (await other.request({ method: 'GET', url: '/api/dmarc/domains' })).json();
    expect(domains).toMatchObject({ domains: [], setAside: { count: 0, reasons: [] } });
    const domain = (await other.request({ method: 'GET', url: '/api/dmarc/domains/example.com' })).json();
    expect(domain).toMatchObject({ days: [], sources: [] });
  });
});

describeWithMailStack('a DMARC report folder that cannot be read', () => {
  it('says why on the source, and the other sources are read all the same', async () => {
    stack = requireMailStack();
    const testApp = await createTestApp({ clock: fixedClock('2024-04-05T12:00:00Z') });
    try {
      const mailbox = await createStackMailbox(testApp.workspace, stack, otherRua);
      const named = await testApp.workspace.request({
        method: 'PUT',
        url: '/api/dmarc/source',
        payload: { mailboxId: mailbox, folder: 'No such folder' },
      });
      expect(named.statusCode).toBe(200);
      expect(await readDmarcReports(testEngineDeps(testApp))).toMatchObject({ sources: 0, failed: 1 });
      const source = (await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/source' })).json();
      expect(source.source).toMatchObject({
        checkedAt: '2024-04-05T12:00:00.000Z',
        lastError: 'the folder "No such folder" does not exist in the mailbox',
      });
    } finally {
      await testApp.close();
    }
  });
});

describe('the dmarc job', () => {
  it('is in the one job list, and with nothing named reads nothing', async () => {
    const testApp = await createTestApp();
    try {
      const engine = createEngine(testEngineDeps(testApp));
      const summary = await runOnce(engine, { at: testApp.clock.now() });
      expect(summary.errors).toEqual([]);
      expect(summary.dmarc).toEqual({ sources: 0, stored: 0, duplicates: 0, setAside: 0, left: 0, failed: 0 });
    } finally {
      await testApp.close();
    }
  });
});
