import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { JUNK_SENDERS, MAIL_USERS } from '../../test/mailstack/users.js';
import { diagnoseMailFailure, MailConnectionError, type MailServerConfig } from './errors.js';
import {
  WARMUP_FOLDER,
  classifyFolder,
  normalizeMessageId,
  openImapSession,
  parseBounce,
  parseReferences,
  verifyImap,
  type FoundMessage,
  type ImapSession,
} from './imap.js';
import { createSmtpSender, type OutgoingMail, type SmtpSender } from './smtp.js';

// This file's mailboxes: ann, ben, cody and the junk sender of the `mail` group.
const [ann, ben, cody, , spammer] = MAIL_USERS.mail;

async function caught(p: Promise<unknown>): Promise<MailConnectionError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MailConnectionError);
    return err as MailConnectionError;
  }
  throw new Error('expected a MailConnectionError');
}

async function listen(onSocket: (socket: Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The fake servers are plaintext scripts on loopback: the operator allows exactly that. */
const FAKE_SERVER_POLICY = { allowedHosts: ['127.0.0.1'], plaintextHosts: ['127.0.0.1'] };

function fakeConfig(port: number): MailServerConfig {
  return {
    host: '127.0.0.1',
    port,
    secure: false,
    username: 'someone@fake.test',
    password: 'fake-secret-pw',
    policy: FAKE_SERVER_POLICY,
  };
}

describe('classifyFolder', () => {
  it.each([
    [{ path: 'INBOX' }, 'inbox'],
    [{ path: 'Junk', specialUse: '\\Junk' }, 'spam'],
    [{ path: 'Whatever', specialUse: '\\Junk' }, 'spam'],
    [{ path: 'Spam' }, 'spam'],
    [{ path: 'Bulk' }, 'spam'],
    [{ path: 'Bulk Mail' }, 'spam'],
    [{ path: 'Junk E-mail' }, 'spam'],
    [{ path: 'INBOX.Junk', delimiter: '.' }, 'spam'],
    [{ path: '[Gmail]/Spam', delimiter: '/' }, 'spam'],
    [{ path: '[Gmail]/Categories/Promotions', delimiter: '/' }, 'promotions'],
    [{ path: 'Social', delimiter: '/' }, 'promotions'],
    [{ path: 'Updates' }, 'promotions'],
    [{ path: 'Forums' }, 'promotions'],
    [{ path: 'Sent', specialUse: '\\Sent' }, 'sent'],
    [{ path: 'Sent Items' }, 'sent'],
    [{ path: 'Deleted Items' }, 'trash'],
    [{ path: 'Trash', specialUse: '\\Trash' }, 'trash'],
    [{ path: 'Drafts' }, 'drafts'],
    [{ path: 'Archive', specialUse: '\\Archive' }, 'archive'],
    [{ path: '[Gmail]/All Mail', delimiter: '/', specialUse: '\\All' }, 'archive'],
    [{ path: 'Warmup' }, 'other'],
    [{ path: 'Projects/Spamalot', delimiter: '/' }, 'other'],
  ] as const)('%o is %s', (folder, role) => {
    expect(classifyFolder(folder)).toBe(role);
  });
});

describe('normalizeMessageId', () => {
  it('ignores angle brackets and spaces', () => {
    expect(normalizeMessageId(' <a.b@c.test> ')).toBe('a.b@c.test');
    expect(normalizeMessageId('a.b@c.test')).toBe('a.b@c.test');
  });
});

function dsn(opts: { to: string; ourId: string; recipient: string; messageId?: string }): string {
  return [
    'From: MAILER-DAEMON@mail.test (Mail Delivery System)',
    `To: ${opts.to}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${opts.messageId ?? `<${randomUUID()}@mail.test>`}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status;',
    '\tboundary="B0UND"',
    '',
    '--B0UND',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    "I'm sorry to have to inform you that your message could not be delivered.",
    '',
    '--B0UND',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mail.test',
    '',
    `Final-Recipient: rfc822; ${opts.recipient}`,
    'Action: failed',
    'Status: 5.1.1',
    `Diagnostic-Code: smtp; 550 5.1.1 <${opts.recipient}>: Recipient address`,
    '    rejected: User unknown in virtual mailbox table',
    '',
    '--B0UND',
    'Content-Type: text/rfc822-headers',
    '',
    `From: ${opts.to}`,
    `To: ${opts.recipient}`,
    'Subject: Lunch next week?',
    `Message-ID: ${opts.ourId}`,
    '',
    '--B0UND--',
    '',
  ].join('\r\n');
}

describe('parseBounce', () => {
  it('finds our Message-ID, the recipient and the diagnostic', () => {
    const ours = new Map([['x1@a.test', '<x1@a.test>']]);
    const raw = dsn({ to: 'me@a.test', ourId: '<x1@a.test>', recipient: 'gone@b.test' });
    expect(parseBounce(raw, ours)).toEqual([
      {
        messageId: '<x1@a.test>',
        recipient: 'gone@b.test',
        diagnostic: '550 5.1.1 <gone@b.test>: Recipient address rejected: User unknown in virtual mailbox table',
      },
    ]);
  });

  it('ignores an ordinary message that quotes our Message-ID', () => {
    const ours = new Map([['x1@a.test', '<x1@a.test>']]);
    const raw = 'From: friend@b.test\r\nSubject: Re: hi\r\nIn-Reply-To: <x1@a.test>\r\n\r\nthanks\r\n';
    expect(parseBounce(raw, ours)).toEqual([]);
  });
});

describe('parsers of remote input run in linear time', () => {
  const MiB = 1024 * 1024;
  const ours = new Map([['x1@a.test', '<x1@a.test>']]);
  const report = (body: string): string =>
    `From: MAILER-DAEMON@a.test\r\nContent-Type: multipart/report; report-type=delivery-status\r\n\r\n<x1@a.test>\r\n${body}`;
  /** Runs `parse` on 1 MiB of `input` and fails if it takes anywhere near backtracking time. */
  function expectFast(parse: () => unknown): void {
    const started = performance.now();
    parse();
    expect(performance.now() - started).toBeLessThan(1_000);
  }

  // each input is the worst case of one of the patterns the parsers used to have
  it.each([
    ['spaces after Final-Recipient:', report(`Final-Recipient:${' '.repeat(MiB)}`)],
    ['spaces after Final-Recipient: rfc822;', report(`Final-Recipient: rfc822;${' '.repeat(MiB)}x`)],
    ['a long address without @', report(`Final-Recipient: rfc822; ${'a'.repeat(MiB)}`)],
    ['an address of many @', report(`Original-Recipient: ${'@'.repeat(MiB)}`)],
    ['line breaks after Diagnostic-Code:', report(`Diagnostic-Code:${'\r\n'.repeat(MiB / 2)}`)],
    ['spaces after Diagnostic-Code: smtp;', report(`Diagnostic-Code: smtp;${' \t'.repeat(MiB / 2)}`)],
    ['digits after Status:', report(`Status: 5.${'1'.repeat(MiB)}`)],
    ['a From: line without the daemon', `From: ${'mailer-'.repeat(MiB / 7)}\r\n\r\n<x1@a.test>`],
    ['folded continuation lines', report(`Final-Recipient:${'\r\n '.repeat(MiB / 3)}`)],
    ['many short header lines', report('A:\r\n'.repeat(MiB / 4))],
    ['many angle brackets', report('<'.repeat(MiB))],
  ])('parseBounce: %s (1 MiB)', (_, raw) => {
    expectFast(() => parseBounce(raw, ours));
  });

  it('parseBounce looks up thousands of our ids in one pass', () => {
    const many = new Map(Array.from({ length: 5_000 }, (_, i) => [`id${i}@a.test`, `<id${i}@a.test>`]));
    const raw = report('x'.repeat(MiB));
    expectFast(() => expect(parseBounce(raw, many)).toEqual([]));
  });

  it.each([
    ['one long line', `References: ${'<a'.repeat(MiB / 2)}`],
    ['folded', `References:${'\r\n <a@b>'.repeat(MiB / 7)}`],
    ['no closing bracket', `References: <${'a'.repeat(MiB)}`],
  ])('parseReferences: %s (1 MiB)', (_, raw) => {
    expectFast(() => parseReferences(raw));
  });

  it('parseReferences still reads a folded header', () => {
    expect(parseReferences('Subject: x\r\nReferences: <a@b>\r\n <c@d> <e@f>\r\nX: y')).toEqual([
      '<a@b>',
      '<c@d>',
      '<e@f>',
    ]);
  });

  it.each([
    ['a run of >', `<a@b${'>'.repeat(MiB)}x`],
    ['a run of <', `${'<'.repeat(MiB)}a@b`],
    ['spaces between', `<${' '.repeat(MiB)}>`],
  ])('normalizeMessageId: %s (1 MiB)', (_, id) => {
    expectFast(() => normalizeMessageId(id));
  });

  it('classifyFolder: a 1 MiB folder name', () => {
    expectFast(() => classifyFolder({ path: `categor${'y'.repeat(MiB)}`, delimiter: '/' }));
  });
});

describe('IMAP errors without a real server', () => {
  it('a closed port fails fast with kind connection', async () => {
    const probe = await listen(() => undefined);
    await probe.close();
    const started = Date.now();
    const err = await caught(verifyImap(fakeConfig(probe.port)));
    expect(err.side).toBe('imap');
    expect(err.kind).toBe('connection');
    expect(err.message).toBe(`Could not connect to an IMAP server at 127.0.0.1:${probe.port}`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a server that accepts TCP but never greets fails like a closed port (no port state)', async () => {
    const silent = await listen(() => undefined);
    try {
      const started = Date.now();
      const err = await caught(openImapSession(fakeConfig(silent.port), { timeoutMs: 400 }));
      expect(err.kind).toBe('connection');
      expect(err.message).toBe(`Could not connect to an IMAP server at 127.0.0.1:${silent.port}`);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await silent.close();
    }
  });

  it('a server that greets and never answers the login is a timeout, not an unreachable host', async () => {
    const greeting = await listen((socket) => {
      socket.write('* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n');
    });
    try {
      const err = await caught(verifyImap(fakeConfig(greeting.port), { timeoutMs: 400 }));
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe(`IMAP server 127.0.0.1:${greeting.port} did not answer login within 0.4 s`);
      expect(diagnoseMailFailure(err).problem).toBe('timeout');
    } finally {
      await greeting.close();
    }
  });

  it('a server that greets, logs in and then hangs fails the command, not the process', async () => {
    const hanging = await listen((socket) => {
      socket.write('* OK [CAPABILITY IMAP4rev1 NAMESPACE] ready\r\n');
      socket.on('data', (chunk) => {
        for (const line of chunk.toString('latin1').split('\r\n')) {
          const [tag, cmd] = line.split(' ');
          if (!tag || !cmd) continue;
          const verb = cmd.toUpperCase();
          // answer what connecting needs, stay silent for everything else
          if (verb === 'CAPABILITY') socket.write(`* CAPABILITY IMAP4rev1 NAMESPACE\r\n${tag} OK done\r\n`);
          else if (verb === 'LOGIN') socket.write(`${tag} OK logged in\r\n`);
          else if (verb === 'NAMESPACE') socket.write(`* NAMESPACE (("" "/")) NIL NIL\r\n${tag} OK done\r\n`);
          else if (verb === 'ID' || verb === 'ENABLE') socket.write(`${tag} OK done\r\n`);
          else if (verb === 'LOGOUT') socket.end(`* BYE\r\n${tag} OK bye\r\n`);
        }
      });
    });
    try {
      const session = await openImapSession(fakeConfig(hanging.port), { timeoutMs: 400 });
      const started = Date.now();
      const err = await caught(session.folders());
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe(`IMAP server 127.0.0.1:${hanging.port} did not answer LIST within 0.4 s`);
      expect(Date.now() - started).toBeLessThan(2_000);
      await session.close();
    } finally {
      await hanging.close();
    }
  });
});

describeWithMailStack('IMAP against the local mail stack', () => {
  let annImap: MailServerConfig;
  let benImap: MailServerConfig;
  let codyImap: MailServerConfig;
  let annSmtp: SmtpSender;
  let benSmtp: SmtpSender;
  let spamSmtp: SmtpSender;
  let benSession: ImapSession;

  beforeAll(async () => {
    const stack = requireMailStack();
    expect(JUNK_SENDERS).toContain(spammer.email);
    annImap = mailServerConfigs(stack, ann).imap;
    benImap = mailServerConfigs(stack, ben).imap;
    codyImap = mailServerConfigs(stack, cody).imap;
    annSmtp = createSmtpSender(mailServerConfigs(stack, ann).smtp);
    benSmtp = createSmtpSender(mailServerConfigs(stack, ben).smtp);
    spamSmtp = createSmtpSender(mailServerConfigs(stack, spammer).smtp);
    benSession = await openImapSession(benImap);
  });

  afterAll(async () => {
    annSmtp?.close();
    benSmtp?.close();
    spamSmtp?.close();
    await benSession?.close();
  });

  function mail(from: { email: string }, to: { email: string }, overrides: Partial<OutgoingMail> = {}): OutgoingMail {
    const domain = from.email.split('@')[1];
    return {
      from: { name: from.email.split('@')[0], address: from.email },
      to: { address: to.email },
      subject: `Catching up ${randomUUID().slice(0, 8)}`,
      text: 'Hello,\n\nhow was the trip?\n',
      html: '<p>Hello,</p><p>how was the trip?</p>',
      messageId: `<${randomUUID()}@${domain}>`,
      ...overrides,
    };
  }

  /** Polls until every id is found (delivery is asynchronous), returns them and the time it took. */
  async function waitForAll(
    session: ImapSession,
    ids: string[],
    timeoutMs = 10_000,
  ): Promise<{ found: FoundMessage[]; ms: number }> {
    const started = Date.now();
    for (;;) {
      const found = await session.findMessages(ids);
      if (found.length === ids.length) return { found, ms: Date.now() - started };
      if (Date.now() - started > timeoutMs) throw new Error(`only ${found.length} of ${ids.length} messages arrived`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('verifies good credentials over STARTTLS and implicit TLS', async () => {
    await verifyImap(annImap);
    await verifyImap(mailServerConfigs(requireMailStack(), ann, { implicitTls: true }).imap);
  });

  it('refuses a wrong password with kind auth and never shows it', async () => {
    const password = 'Wrong-Imap-Passw0rd';
    const err = await caught(verifyImap({ ...annImap, password }));
    expect(err.side).toBe('imap');
    expect(err.kind).toBe('auth');
    expect(err.message).toBe(`IMAP login refused by 127.0.0.1:${annImap.port}: Authentication failed.`);
    expect(err.message + (err.serverResponse ?? '') + JSON.stringify(err)).not.toContain(password);
    const err2 = await caught(openImapSession({ ...annImap, password }));
    expect(err2.kind).toBe('auth');
  });

  it('lists the special-use folders with their roles', async () => {
    const folders = await benSession.folders();
    const roles = Object.fromEntries(folders.map((f) => [f.path, f.role]));
    expect(roles).toMatchObject({
      INBOX: 'inbox',
      Junk: 'spam',
      Sent: 'sent',
      Trash: 'trash',
      Drafts: 'drafts',
      Archive: 'archive',
    });
    expect(folders.find((f) => f.path === 'Junk')?.specialUse).toBe('\\Junk');
  });

  it('a sent message is found in INBOX', async () => {
    const m = mail(ann, ben);
    await annSmtp.send(m);
    const { found, ms } = await waitForAll(benSession, [m.messageId]);
    expect(found).toEqual([
      {
        messageId: m.messageId,
        folder: 'INBOX',
        role: 'inbox',
        uid: expect.any(Number),
        seen: false,
        flagged: false,
        from: ann.email,
        subject: m.subject,
        identifiedBy: 'message-id',
        // the shared stack writes no verdict of its own
        receiverHeaders: [],
        // the relay path as the receiver recorded it (and DKIM signatures, had there been any): the
        // sender greets with a host name, never an address literal
        deliveryHeaders: expect.stringMatching(/received: from [^\s[]+ \(localhost \[127\.0\.0\.1\]\)/),
      },
    ]);
    expect(ms).toBeLessThan(5_000);
  });

  it('finds a batch of messages in one pass and ignores ids that never arrived', async () => {
    const sent = [mail(ann, ben), mail(ann, ben), mail(ann, ben), mail(ann, ben), mail(ann, ben)];
    for (const m of sent) await annSmtp.send(m);
    const unknown = Array.from({ length: 45 }, () => `<${randomUUID()}@mail-alpha.test>`);
    const { found } = await waitForAll(
      benSession,
      sent.map((m) => m.messageId),
    );
    expect(found).toHaveLength(5);
    const started = Date.now();
    const again = await benSession.findMessages([...unknown, ...sent.map((m) => m.messageId.slice(1, -1))]);
    expect(again.map((f) => f.messageId).sort()).toEqual(sent.map((m) => m.messageId.slice(1, -1)).sort());
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a junk sender's message lands in spam; moving it to INBOX rescues it", async () => {
    const m = mail(spammer, ben);
    await spamSmtp.send(m);
    const [inSpam] = (await waitForAll(benSession, [m.messageId])).found;
    expect(inSpam).toMatchObject({ folder: 'Junk', role: 'spam', from: spammer.email });

    const newUid = await benSession.move(inSpam!.folder, inSpam!.uid, 'INBOX');
    expect(newUid).toEqual(expect.any(Number));
    const [rescued] = await benSession.findMessages([m.messageId]);
    expect(rescued).toMatchObject({ folder: 'INBOX', role: 'inbox', uid: newUid });
  });

  it('marks a message seen and flagged', async () => {
    const m = mail(ann, ben);
    await annSmtp.send(m);
    const [msg] = (await waitForAll(benSession, [m.messageId])).found;
    await benSession.markSeen(msg!.folder, msg!.uid);
    await benSession.flag(msg!.folder, msg!.uid);
    const [after] = await benSession.findMessages([m.messageId]);
    expect(after).toMatchObject({ seen: true, flagged: true });
  });

  it('ensureFolder is idempotent and the Warmup folder is only searched on request', async () => {
    const path = await benSession.ensureFolder(WARMUP_FOLDER);
    expect(await benSession.ensureFolder(WARMUP_FOLDER)).toBe(path);
    const folders = await benSession.folders();
    expect(folders.filter((f) => f.path === path)).toHaveLength(1);

    const m = mail(ann, ben);
    await annSmtp.send(m);
    const [msg] = (await waitForAll(benSession, [m.messageId])).found;
    await benSession.move(msg!.folder, msg!.uid, path);
    expect(await benSession.findMessages([m.messageId])).toEqual([]);
    const [filed] = await benSession.findMessages([m.messageId], { includeFolders: [path] });
    expect(filed).toMatchObject({ folder: path, role: 'other' });
  });

  it('looks for mail filed already only where a delivery lands: a second copy is found, the filed copy and the owner’s left alone', async () => {
    const path = await benSession.ensureFolder(WARMUP_FOLDER);
    const finished = mail(ann, ben);
    const unnoted = mail(ann, ben);
    await annSmtp.send(finished);
    await annSmtp.send(unnoted);
    // both filed into Warmup; the second by a sync that stopped before noting it
    const delivered = (await waitForAll(benSession, [finished.messageId, unnoted.messageId])).found;
    const first = delivered.find((x) => x.messageId === finished.messageId)!;
    const raw = await benSession.fetchRaw(first.folder, first.uid);
    for (const { folder, uid } of delivered) await benSession.move(folder, uid, path);
    // the owner keeps a copy in Archive
    await benSession.append('Archive', raw);
    const look = () =>
      benSession.findMessages([finished.messageId, unnoted.messageId], {
        includeFolders: [path],
        filedAlready: [finished.messageId],
        everyCopy: true,
      });
    expect(await look()).toEqual([expect.objectContaining({ messageId: unnoted.messageId, folder: path })]);

    // the same message delivered again lands in the inbox: that copy is found
    await annSmtp.send(finished);
    let found = await look();
    for (const started = Date.now(); found.length < 2 && Date.now() - started < 10_000; found = await look()) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(found.map((x) => [x.messageId, x.folder]).sort()).toEqual(
      [
        [finished.messageId, 'INBOX'],
        [unnoted.messageId, path],
      ].sort(),
    );
  });

  it('a reply carries In-Reply-To and References back to the sender', async () => {
    const original = mail(ann, ben);
    await annSmtp.send(original);
    await waitForAll(benSession, [original.messageId]);
    const reply = mail(ben, ann, {
      subject: `Re: ${original.subject}`,
      inReplyTo: original.messageId,
      references: [original.messageId],
    });
    await benSmtp.send(reply);
    const annSession = await openImapSession(annImap);
    try {
      const [got] = (await waitForAll(annSession, [reply.messageId])).found;
      expect(got).toMatchObject({
        role: 'inbox',
        from: ben.email,
        subject: `Re: ${original.subject}`,
        inReplyTo: original.messageId,
        references: [original.messageId],
      });
      const raw = (await annSession.fetchRaw(got!.folder, got!.uid)).toString('utf8');
      expect(raw).toContain(`Message-ID: ${reply.messageId}`);
    } finally {
      await annSession.close();
    }
  });

  it('findBounces reports a delivery report that names one of our messages', async () => {
    const session = await openImapSession(codyImap);
    try {
      const ourId = `<${randomUUID()}@mail-gamma.test>`;
      const otherId = `<${randomUUID()}@mail-gamma.test>`;
      const since = new Date(Date.now() - 60_000);
      await session.append('INBOX', dsn({ to: cody.email, ourId, recipient: 'gone@mail-beta.test' }));
      await session.append(
        'INBOX',
        dsn({ to: cody.email, ourId: `<${randomUUID()}@elsewhere.test>`, recipient: 'x@y.test' }),
      );
      await session.append('INBOX', `From: ${ann.email}\r\nSubject: Re: hi\r\nIn-Reply-To: ${ourId}\r\n\r\nthanks\r\n`);
      const bounces = await session.findBounces([ourId, otherId], since);
      expect(bounces).toEqual([
        {
          messageId: ourId,
          recipient: 'gone@mail-beta.test',
          diagnostic: expect.stringContaining('550 5.1.1'),
          folder: 'INBOX',
          uid: expect.any(Number),
        },
      ]);
    } finally {
      await session.close();
    }
  });

  it('scanBounces downloads a report once: the next scan goes on above the mark', async () => {
    const session = await openImapSession(codyImap);
    try {
      const ourId = `<${randomUUID()}@mail-gamma.test>`;
      const since = new Date(Date.now() - 60_000);
      await session.append('INBOX', dsn({ to: cody.email, ourId, recipient: 'gone@mail-beta.test' }));
      const first = await session.scanBounces([ourId], since, {});
      expect(first.bounces.map((b) => b.messageId)).toEqual([ourId]);
      expect(first.marks.INBOX).toEqual({ uidValidity: expect.any(String), lastUid: first.bounces[0]!.uid });
      // the report is still there, but below the mark: not fetched, not reported again
      const again = await session.scanBounces([ourId], since, first.marks);
      expect(again.bounces).toEqual([]);
      expect(again.marks.INBOX).toEqual(first.marks.INBOX);
      // a new UIDVALIDITY (the folder was renumbered) starts the folder over
      const renumbered = await session.scanBounces([ourId], since, {
        INBOX: { uidValidity: 'other', lastUid: first.marks.INBOX!.lastUid },
      });
      expect(renumbered.bounces.map((b) => b.messageId)).toEqual([ourId]);
    } finally {
      await session.close();
    }
  });

  it('findAnswers finds what answers our mail, a person’s and an automatic reply, and nothing else', async () => {
    const session = await openImapSession(codyImap);
    try {
      const ourId = `<${randomUUID()}@mail-gamma.test>`;
      const since = new Date(Date.now() - 60_000);
      const message = (id: string, extra: string[]) =>
        [`From: ${ann.email}`, `To: ${cody.email}`, `Message-ID: ${id}`, ...extra, '', 'text', ''].join('\r\n');
      const human = `<${randomUUID()}@mail-alpha.test>`;
      const automatic = `<${randomUUID()}@mail-alpha.test>`;
      await session.append('INBOX', message(human, ['Subject: Re: numbers', `In-Reply-To: ${ourId}`]));
      await session.append(
        'INBOX',
        message(automatic, [
          'Subject: Automatic reply: numbers',
          `References: <x@y.test> ${ourId}`,
          'Auto-Submitted: auto-replied',
        ]),
      );
      // names another id that merely contains ours; and an answer its owner deleted
      await session.append('INBOX', message(`<${randomUUID()}@a.test>`, [`In-Reply-To: <pre-${ourId.slice(1)}`]));
      await session.append('INBOX', message(`<${randomUUID()}@a.test>`, [`In-Reply-To: ${ourId}`]), ['\\Deleted']);
      const answers = await session.findAnswers([ourId], since, 10);
      expect(answers.map((a) => [a.messageId, a.answers, a.automatic])).toEqual([
        [human, [ourId], null],
        [automatic, [ourId], 'Auto-Submitted: auto-replied'],
      ]);
    } finally {
      await session.close();
    }
  });

  it('remove expunges exactly our messages (UID EXPUNGE): the owner’s \\Deleted mail stays', async () => {
    const session = await openImapSession(codyImap);
    try {
      const folder = await session.ensureFolder(`Kept-${randomUUID().slice(0, 8)}`);
      const raw = (id: string) => `From: ${ann.email}\r\nSubject: x\r\nMessage-ID: <${id}@a.test>\r\n\r\nx\r\n`;
      const owners = await session.append(folder, raw('owners'), ['\\Deleted']);
      const ours = await session.append(folder, raw('ours'));
      expect(await session.remove(folder, [ours!])).toEqual({ expunged: true });
      await expect(session.fetchRaw(folder, ours!)).rejects.toThrow(/no such message/);
      expect((await session.fetchRaw(folder, owners!)).toString()).toContain('<owners@a.test>');
    } finally {
      await session.close();
    }
  });

  it('a session closed while it is still logging in leaves no connection behind', async () => {
    const session = await openImapSession(codyImap);
    type Connection = { connect(): Promise<{ usable: boolean }>; client: { close(): void } | null };
    const connection = (session as unknown as { connection: Connection }).connection;
    await session.folders();
    connection.client!.close(); // dropped: the next call logs in again
    const login = connection.connect().catch(() => null);
    await session.close();
    const client = await login;
    expect(client?.usable ?? false, 'a login finished after close stays open').toBe(false);
    expect(connection.client).toBeNull();
  });

  it('a session reconnects after the server dropped it', async () => {
    const session = await openImapSession(codyImap);
    try {
      await session.folders();
      // simulate a server-side drop of the idle connection
      (session as unknown as { connection: { client: { close(): void } } }).connection.client.close();
      const folders = await session.folders();
      expect(folders.some((f) => f.role === 'inbox')).toBe(true);
    } finally {
      await session.close();
    }
  });

  it('moving into a folder that does not exist is a protocol error', async () => {
    const m = mail(ann, ben);
    await annSmtp.send(m);
    const [msg] = (await waitForAll(benSession, [m.messageId])).found;
    const err = await caught(benSession.move(msg!.folder, msg!.uid, 'No/Such/Folder'));
    expect(err.kind).toBe('protocol');
  });
});
