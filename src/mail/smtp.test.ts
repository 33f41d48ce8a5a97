import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithMailStack, mailServerConfigs, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import { silentServer } from '../../test/helpers/ports.js';
import { MailConnectionError, diagnoseMailFailure, type MailServerConfig } from './errors.js';
import { buildRawMessage, createSmtpSender, verifySmtp, type OutgoingMail } from './smtp.js';

// This file's mailbox: dina (sends to herself and to unknown addresses only).
const dina = MAIL_USERS.mail[3];

function message(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    from: { name: 'Dina Test', address: dina.email },
    to: { name: 'Dina Test', address: dina.email },
    subject: 'Quarterly numbers',
    text: 'Hi Dina,\n\nthe numbers look fine.\n\nBest',
    html: '<p>Hi Dina,</p><p>the numbers look fine.</p><p>Best</p>',
    messageId: `<${randomUUID()}@mail-alpha.test>`,
    ...overrides,
  };
}

async function caught(p: Promise<unknown>): Promise<MailConnectionError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MailConnectionError);
    return err as MailConnectionError;
  }
  throw new Error('expected a MailConnectionError');
}

function expectNoSecret(err: MailConnectionError, secret: string): void {
  expect(err.message).not.toContain(secret);
  expect(err.serverResponse ?? '').not.toContain(secret);
  expect(JSON.stringify(err)).not.toContain(secret);
  expect(String(err.stack)).not.toContain(secret);
}

/** A TCP server; `onSocket` decides what it says. */
async function listen(onSocket: (socket: Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
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

/** A minimal scripted SMTP server: answers each command by its verb. */
function scriptedSmtp(replies: Record<string, string>) {
  return listen((socket) => {
    socket.write('220 fake.test ESMTP\r\n');
    let buffer = '';
    let inData = false;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let nl: number;
      while ((nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            socket.write(replies.DOT ?? '250 2.0.0 queued\r\n');
          }
          continue;
        }
        const verb = line.split(' ')[0]!.toUpperCase();
        if (verb === 'EHLO') socket.write('250-fake.test\r\n250 AUTH PLAIN LOGIN\r\n');
        else if (verb === 'DATA' && !replies.DATA) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write(replies[verb] ?? '250 ok\r\n');
      }
    });
  });
}

/** The fake servers are plaintext scripts on loopback: the operator allows exactly that. */
const FAKE_SERVER_POLICY = { allowedHosts: ['127.0.0.1'], plaintextHosts: ['127.0.0.1'] };

function fakeConfig(port: number, password = 'fake-secret-pw'): MailServerConfig {
  return {
    host: '127.0.0.1',
    port,
    secure: false,
    username: 'someone@fake.test',
    password,
    policy: FAKE_SERVER_POLICY,
  };
}

describe('buildRawMessage', () => {
  it('builds a plain text + HTML message with our headers and nothing that marks it', async () => {
    const m = message({
      inReplyTo: '<orig-1@mail-beta.test>',
      references: ['<root@mail-beta.test>', '<orig-1@mail-beta.test>'],
      date: new Date('2026-11-25T14:03:00Z'),
    });
    const raw = (await buildRawMessage(m)).toString('utf8');
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).toContain(`Message-ID: ${m.messageId}`);
    expect(head).toContain('In-Reply-To: <orig-1@mail-beta.test>');
    expect(head).toMatch(/References: <root@mail-beta.test>\s+<orig-1@mail-beta.test>/);
    expect(head).toContain('Date: Wed, 25 Nov 2026 14:03:00 +0000');
    expect(head).toContain('From: Dina Test <dina@mail-alpha.test>');
    expect(head).toContain('Subject: Quarterly numbers');
    expect(head).toMatch(/Content-Type: multipart\/alternative/);
    expect(head).not.toMatch(/^X-Mailer:/im);
    expect(head).not.toMatch(/^Precedence:/im);
    expect(raw.toLowerCase()).not.toContain('warmup');
    expect(raw).toContain('text/plain');
    expect(raw).toContain('text/html');
    // what goes over SMTP: CRLF only
    expect(raw.replace(/\r\n/g, '')).not.toContain('\n');
  });

  it('dates the message in the sender’s own zone, with its offset', async () => {
    const m = message({ date: new Date('2026-11-25T14:03:00Z'), timeZone: 'Asia/Kolkata' });
    const raw = (await buildRawMessage(m)).toString('utf8');
    expect(raw.slice(0, raw.indexOf('\r\n\r\n'))).toContain('Date: Wed, 25 Nov 2026 19:33:00 +0530');
  });
});

describe('SMTP errors without a real server', () => {
  it('a closed port fails fast with kind connection', async () => {
    const probe = await listen(() => undefined);
    const port = probe.port;
    await probe.close();
    const started = Date.now();
    const err = await caught(verifySmtp(fakeConfig(port)));
    expect(err.side).toBe('smtp');
    expect(err.kind).toBe('connection');
    expect(err.message).toBe(`Could not connect to an SMTP server at 127.0.0.1:${port}`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a server that accepts TCP but never greets fails like a closed port (no port state)', async () => {
    const silent = await listen(() => undefined);
    try {
      const started = Date.now();
      const err = await caught(verifySmtp(fakeConfig(silent.port), { timeoutMs: 400 }));
      expect(err.kind).toBe('connection');
      expect(err.message).toBe(`Could not connect to an SMTP server at 127.0.0.1:${silent.port}`);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await silent.close();
    }
  });

  it('a server that greets and then stalls during login is a timeout, not "could not connect"', async () => {
    // the greeting says a mail server is there; silence after it is a slow server, not a closed port
    const stalled = await silentServer({ greeting: '220 fake.test ESMTP\r\n' });
    try {
      const started = Date.now();
      const err = await caught(verifySmtp(fakeConfig(stalled.port), { timeoutMs: 400 }));
      expect(err.kind).toBe('timeout');
      expect(err.code).toBe('ETIMEDOUT');
      expect(err.message).toBe(`SMTP server 127.0.0.1:${stalled.port} did not answer within 0.4 s`);
      expect(diagnoseMailFailure(err).problem).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await stalled.close();
    }
  });

  it('the pooled sender tells the same apart: greeted then stalled is a timeout, never greeted "could not connect"', async () => {
    const stalled = await silentServer({ greeting: '220 fake.test ESMTP\r\n' });
    const silent = await silentServer();
    const stalling = createSmtpSender(fakeConfig(stalled.port), { timeoutMs: 400 });
    const mute = createSmtpSender(fakeConfig(silent.port), { timeoutMs: 400 });
    try {
      const started = Date.now();
      const err = await caught(stalling.send(message()));
      expect(err.kind).toBe('timeout');
      expect(err.code).toBe('ETIMEDOUT');
      expect(err.message).toBe(`SMTP server 127.0.0.1:${stalled.port} did not answer within 0.4 s`);
      expect(diagnoseMailFailure(err).problem).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(3_000);
      // a second send on the same sender opens a new connection, which greets and stalls again
      expect((await caught(stalling.send(message()))).kind).toBe('timeout');

      const never = await caught(mute.send(message()));
      expect(never.kind).toBe('connection');
      expect(never.message).toBe(`Could not connect to an SMTP server at 127.0.0.1:${silent.port}`);
    } finally {
      stalling.close();
      mute.close();
      await stalled.close();
      await silent.close();
    }
  });

  it('a foreign banner, or a greeting cut short before its line end, is still "could not connect"', async () => {
    // a 220 line is the one sign of a mail server: any other first line says nothing about the port
    const foreign = await silentServer({ greeting: 'SSH-2.0-OpenSSH_9.6\r\n' });
    const partial = await silentServer({ greeting: '220 fake.test ESMTP' });
    try {
      for (const server of [foreign, partial]) {
        const err = await caught(verifySmtp(fakeConfig(server.port), { timeoutMs: 400 }));
        expect(err.kind).toBe('connection');
        expect(err.message).toBe(`Could not connect to an SMTP server at 127.0.0.1:${server.port}`);
      }
    } finally {
      await foreign.close();
      await partial.close();
    }
  });

  it('scrubs the password even when a server echoes it', async () => {
    const password = 'echo-me-secret';
    const server = await scriptedSmtp({ AUTH: `535 5.7.8 bad credentials ${password}\r\n` });
    try {
      const err = await caught(verifySmtp(fakeConfig(server.port, password)));
      expect(err.kind).toBe('auth');
      expect(err.message).toBe(`SMTP login refused by 127.0.0.1:${server.port}: 535 5.7.8 bad credentials ***`);
      expectNoSecret(err, password);
    } finally {
      await server.close();
    }
  });

  it('a 4xx recipient answer is a temporary rejection', async () => {
    const server = await scriptedSmtp({ AUTH: '235 2.7.0 ok\r\n', RCPT: '451 4.7.1 greylisted, try again later\r\n' });
    const sender = createSmtpSender(fakeConfig(server.port));
    try {
      const err = await caught(sender.send(message()));
      expect(err.kind).toBe('rejected');
      expect(err.permanent).toBe(false);
      expect(err.serverResponse).toContain('451 4.7.1 greylisted');
    } finally {
      sender.close();
      await server.close();
    }
  });

  it('a 5xx answer to the message data is a permanent rejection', async () => {
    const server = await scriptedSmtp({ AUTH: '235 2.7.0 ok\r\n', DOT: '554 5.7.1 message looks like spam\r\n' });
    const sender = createSmtpSender(fakeConfig(server.port));
    try {
      const err = await caught(sender.send(message()));
      expect(err.kind).toBe('rejected');
      expect(err.permanent).toBe(true);
      expect(err.message).toContain('554 5.7.1 message looks like spam');
    } finally {
      sender.close();
      await server.close();
    }
  });
});

describeWithMailStack('SMTP against the local mail stack', () => {
  let smtp: MailServerConfig;
  let smtps: MailServerConfig;

  beforeAll(() => {
    const stack = requireMailStack();
    smtp = mailServerConfigs(stack, dina).smtp;
    smtps = mailServerConfigs(stack, dina, { implicitTls: true }).smtp;
  });

  it('verifies good credentials over STARTTLS and implicit TLS', async () => {
    await verifySmtp(smtp);
    await verifySmtp(smtps);
  });

  it('refuses a wrong password with kind auth and never shows it', async () => {
    const password = 'Wrong-Passw0rd-xyz';
    const err = await caught(verifySmtp({ ...smtp, password }));
    expect(err.side).toBe('smtp');
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(
      new RegExp(`^SMTP login refused by 127\\.0\\.0\\.1:${smtp.port}: 535 5\\.7\\.8 Error: authentication failed`),
    );
    expect(err.serverResponse).toMatch(/^535/);
    expectNoSecret(err, password);
  });

  it('rejects a certificate no trusted CA signed (the stack CA is trusted only through the policy)', async () => {
    const untrusted = { allowedHosts: [smtps.host], plaintextHosts: [] };
    expect((await caught(verifySmtp({ ...smtps, policy: untrusted }))).kind).toBe('connection');
    expect((await caught(verifySmtp({ ...smtp, policy: untrusted }))).kind).toBe('connection');
  });

  describe('sender', () => {
    const sender = { current: null as ReturnType<typeof createSmtpSender> | null };
    beforeAll(() => {
      sender.current = createSmtpSender(smtp);
    });
    afterAll(() => sender.current?.close());

    it('sends several messages over one connection', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await sender.current!.send(message({ subject: `Note ${i}` }));
        expect(res.accepted).toEqual([dina.email]);
        expect(res.rejected).toEqual([]);
        expect(res.response).toMatch(/^250 /);
      }
    });

    it('an unknown recipient is a permanent rejection', async () => {
      const err = await caught(sender.current!.send(message({ to: { address: 'nobody@mail-alpha.test' } })));
      expect(err.kind).toBe('rejected');
      expect(err.permanent).toBe(true);
      expect(err.serverResponse).toMatch(/^550 5\.1\.1 <nobody@mail-alpha\.test>/);
      expect(err.message).toContain('refused recipient nobody@mail-alpha.test');
      // and the connection is still good for the next message
      const res = await sender.current!.send(message());
      expect(res.accepted).toEqual([dina.email]);
    });

    it('an outside recipient is refused (nothing leaves the machine)', async () => {
      const err = await caught(sender.current!.send(message({ to: { address: 'someone@example.com' } })));
      expect(err.kind).toBe('rejected');
      expect(err.permanent).toBe(true);
      expect(err.serverResponse).toContain('Relay access denied');
    });
  });

  it('a sender with a wrong password fails with kind auth', async () => {
    const password = 'Another-Wrong-1';
    const sender = createSmtpSender({ ...smtp, password });
    try {
      const err = await caught(sender.send(message()));
      expect(err.kind).toBe('auth');
      expectNoSecret(err, password);
    } finally {
      sender.close();
    }
  });
});
