// End to end on the real Postfix and Dovecot: what each client profile sends arrives with that
// client's structure (compared with the real samples' signatures), dated in the sender's zone,
// submitted under a host name (never an address literal); and the connection check is such a
// message too, still found by its token.
import { ImapFlow } from 'imapflow';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, expect, it } from 'vitest';
import {
  describeWithMailStack,
  mailServerConfigs,
  requireMailStack,
  type MailStack,
} from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS, type MailUser } from '../../test/mailstack/users.js';
import { loadClientFixtures, signatureOf, unexplainedDifferences } from '../../test/helpers/mime-signature.js';
import { heloNameOf } from '../mail/helo-name.js';
import { proveRoundTrip } from '../mail/round-trip.js';
import { createSmtpSender, type MailServerConfig, type OutgoingMail } from '../mail/smtp.js';
import { DEFAULT_TEMPLATES } from '../templates/default-templates.js';
import {
  CLIENT_PROFILE_NAMES,
  clientHtml,
  clientMessageId,
  clientProfileNamed,
  clientProfileOf,
  clientText,
  threadIndexFor,
  type ClientProfileName,
} from './client-profile.js';
import { connectionCheckWriter } from './connection-check.js';
import { outgoingMail } from './outgoing-mail.js';

const [mona, otto] = MAIL_USERS.clients;
const HELO = 'desk-7.mime-one.test';
/** A zone without summer time, so the expected offset does not depend on the day the test runs. */
const ZONE = 'Asia/Kolkata';
const FIXTURES = loadClientFixtures();

describeWithMailStack("each client's mail as the real mail stack delivers it", () => {
  let stack: MailStack;

  beforeAll(() => {
    stack = requireMailStack();
  });

  /** The user's servers, greeting as `helo` when given (WARMUP_HOSTNAME). */
  function servers(user: MailUser, helo?: string): { imap: MailServerConfig; smtp: MailServerConfig } {
    const configs = mailServerConfigs(stack, user);
    if (!helo) return configs;
    const policy = { ...configs.smtp.policy!, heloName: helo };
    return { imap: configs.imap, smtp: { ...configs.smtp, policy } };
  }

  /** The delivered bytes of the message with this Message-ID in the user's folder, once it is there. */
  async function delivered(user: MailUser, folder: string, messageId: string): Promise<string> {
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
        const lock = await client.getMailboxLock(folder);
        try {
          const uids = await client.search({ header: { 'message-id': messageId } }, { uid: true });
          if (uids && uids.length > 0) {
            const message = await client.fetchOne(String(uids[0]), { source: true }, { uid: true });
            if (message && message.source) return message.source.toString('utf8');
          }
        } finally {
          lock.release();
        }
        await sleep(250);
      }
      throw new Error(`${messageId} did not arrive in ${user.email}'s ${folder}`);
    } finally {
      await client.logout();
    }
  }

  function compareWithSamples(profile: ClientProfileName, kind: 'new' | 'reply', raw: string, domain: string): void {
    const ours = signatureOf(raw);
    const samples = FIXTURES.filter(({ fixture }) => fixture.client === profile && fixture.kind === kind);
    expect(samples.length).toBeGreaterThan(0);
    for (const { name, fixture } of samples) {
      expect(unexplainedDifferences(name, fixture, ours, domain), name).toEqual([]);
    }
  }

  function mailOf(profile: ClientProfileName, kind: 'new' | 'reply', at: Date): OutgoingMail {
    const seed = (text: string) => createHash('sha256').update(`${text}:${at.getTime()}`).digest();
    const rootId = clientMessageId(profile, otto.email, seed(`root:${profile}`), at);
    const messageId = clientMessageId(profile, mona.email, seed(`${kind}:${profile}`), at);
    const own =
      'Thanks for the notes from this morning. I read them on the way home and they cover everything we agreed.';
    const quote =
      kind === 'reply'
        ? {
            attribution: ['On 1 Dec 2026, Otto wrote:'],
            parentText: 'Did the notes reach you?',
            parentHtml: '<p>Did the notes reach you?</p>',
          }
        : undefined;
    return outgoingMail({
      sender: { email: mona.email, name: 'Mona Mime' },
      recipient: { email: otto.email, name: 'Otto Mime' },
      messageId,
      content: {
        subject: kind === 'reply' ? 'Re: Notes' : 'Notes',
        body: clientText(profile, own, 'Mona', quote),
        html: clientHtml(profile, own, 'Mona', quote),
      },
      profile: clientProfileNamed(profile),
      date: at,
      timeZone: ZONE,
      language: 'en',
      threadIndex: threadIndexFor(kind === 'reply' ? rootId : messageId, at, kind === 'reply' ? [at] : []),
      ...(kind === 'reply' ? { inReplyTo: rootId, references: [rootId] } : {}),
    });
  }

  it.each(CLIENT_PROFILE_NAMES)(
    '%s: a new message and a reply arrive in the client structure, in the sender zone, greeted by name',
    async (profile) => {
      const sender = createSmtpSender(servers(mona, HELO).smtp);
      try {
        for (const kind of ['new', 'reply'] as const) {
          const mail = mailOf(profile, kind, new Date());
          await sender.send(mail);
          const raw = await delivered(otto, 'INBOX', mail.messageId);
          compareWithSamples(profile, kind, raw, 'mime-one.test');
          expect(signatureOf(raw).date).toMatch(/ \+0530$/);
          expect(raw).toMatch(new RegExp(`^Received: from ${HELO.replace(/\./g, '\\.')} \\(`, 'm'));
          expect(raw).not.toMatch(/^Received: from \[/m);
        }
      } finally {
        sender.close();
      }
    },
  );

  it('without WARMUP_HOSTNAME, greets with the machine name: never an address literal', async () => {
    const sender = createSmtpSender(servers(mona).smtp);
    const mail = mailOf('thunderbird', 'new', new Date());
    try {
      await sender.send(mail);
    } finally {
      sender.close();
    }
    const raw = await delivered(otto, 'INBOX', mail.messageId);
    const greeting = /^Received: from (\S+) \(/m.exec(raw)?.[1];
    expect(greeting).toBe(heloNameOf(undefined));
    expect(greeting).not.toMatch(/^\[|^\d+\.\d+\.\d+\.\d+$/);
  });

  it('the connection check is ordinary mail of the mailbox, found by its token and filed away', async () => {
    const mailbox = {
      id: 'mbx_client_delivery_check',
      workspaceId: 'ws_client_delivery',
      email: otto.email,
      name: 'Otto Mime',
      warmup: JSON.stringify({ timezone: ZONE, language: 'en' }),
      provider: 'custom',
      smtp: JSON.stringify({ host: 'mime-two.test' }),
    };
    const writer = connectionCheckWriter({ installationSeed: 'client delivery test' }, mailbox);
    const written: OutgoingMail[] = [];
    const result = await proveRoundTrip(otto.email, servers(otto, HELO), {
      waitMs: 15_000,
      writeMail: (token, at) => {
        const mail = writer!(token, at);
        written.push(mail);
        return mail;
      },
    });
    expect(result).toEqual({ proven: true });
    const [mail] = written;
    const raw = await delivered(otto, 'Warmup', mail.messageId);
    compareWithSamples(clientProfileOf(mailbox).name, 'new', raw, 'mime-two.test');
    expect(signatureOf(raw).date).toMatch(/ \+0530$/);
    expect(raw).toMatch(new RegExp(`^Received: from ${HELO.replace(/\./g, '\\.')} \\(`, 'm'));
    // nothing a person reads names the tool or carries a token of its own
    for (const text of [mail.subject, mail.text, mail.html]) expect(text).not.toMatch(/warmup|connection check/i);
    expect(mail.messageId).not.toMatch(/check\./);
    // written fresh by the conversation generator, not one of the shipped templates every installation has
    expect(DEFAULT_TEMPLATES.map((t) => t.subject)).not.toContain(mail.subject);
  });
});
