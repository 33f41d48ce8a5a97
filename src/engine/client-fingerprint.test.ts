// No single filter rule matches all warmup mail: 1,000 messages rendered the way the sender sends
// them (composeMessage → outgoingMail → the exact MIME bytes), from mailboxes with different client
// profiles, across every default template, share no header value, boundary shape, Message-ID shape
// or HTML skeleton; and no two mailboxes with different profiles have a constant one in common.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildRawMessage } from '../mail/smtp.js';
import { DEFAULT_TEMPLATES } from '../templates/default-templates.js';
import { CLIENT_PROFILE_NAMES, clientProfileNamed, messageIdToken, type ClientProfileName } from './client-profile.js';
import { composeMessage, messageIdFor, replyMessageIdFor, type Party } from './message-content.js';
import { outgoingMail } from './outgoing-mail.js';

const TOTAL = 1000;

interface Mailbox extends Party {
  profile: ClientProfileName;
  timeZone: string;
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];
const DOMAINS = ['echo-mail.com', 'foxtrot-group.de', 'golf.fr', 'hotel-partners.es'];

/** Two mailboxes per profile, each on its own domain and in its own zone. */
const MAILBOXES: Mailbox[] = CLIENT_PROFILE_NAMES.flatMap((profile, p) =>
  [0, 1].map((k) => ({
    email: `person${p}${k}@${k === 0 ? DOMAINS[p] : `mx${p}.${DOMAINS[(p + 1) % DOMAINS.length]}`}`,
    name: `Person ${String.fromCharCode(65 + p)}${k}`,
    profile,
    timeZone: ZONES[(p + k) % ZONES.length],
  })),
);

interface Rendered {
  sender: Mailbox;
  headers: string[];
  boundaryShape: string;
  messageIdShape: string;
  htmlSkeleton: string;
}

/**
 * The form of a token a filter rule would write: every run of letters and digits by its length,
 * the punctuation as it is, and which letter cases occur (`8-4-4-4-12|a` is a lowercase UUID).
 */
export function shapeOf(token: string): string {
  const cases = `${/[a-z]/.test(token) ? 'a' : ''}${/[A-Z]/.test(token) ? 'A' : ''}`;
  return `${token.replace(/[A-Za-z0-9]+/g, (run) => String(run.length))}|${cases}`;
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The markup before the first visible text, without whitespace: the document's wrapper. */
export function htmlSkeleton(html: string): string {
  const firstText = /(?:^|>)\s*[^<\s]/.exec(html);
  const end = firstText ? firstText.index + (firstText[0].startsWith('>') ? 1 : 0) : html.length;
  // the charset a meta tag names follows the text (us-ascii or utf-8), as in the client's own mail
  return html
    .slice(0, end)
    .replace(/\s+/g, '')
    .replace(/charset=(?:us-ascii|utf-8)/gi, 'charset=*');
}

function parse(sender: Mailbox, raw: string): Rendered {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, headEnd).replace(/\r\n[ \t]+/g, ' ');
  const headers = head.split('\r\n');
  const header = (name: string) =>
    headers.find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))?.replace(/^[^:]+:\s*/, '') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(header('Content-Type'))?.[1] ?? '';
  const messageId = /^<([^@>]+)@/.exec(header('Message-ID'))?.[1] ?? '';
  const htmlPart = raw
    .slice(headEnd)
    .split(`--${boundary}`)
    // the part whose own headers say text/html, whichever header a client writes first
    .find((part) => /^\r\n(?:[^\r\n]+\r\n)*?Content-Type: text\/html/i.test(part));
  expect(boundary).not.toBe('');
  expect(messageId).not.toBe('');
  expect(htmlPart).toBeDefined();
  const partBody = (htmlPart ?? '').slice((htmlPart ?? '').indexOf('\r\n\r\n') + 4);
  const html = /Content-Transfer-Encoding: quoted-printable/i.test(htmlPart ?? '')
    ? decodeQuotedPrintable(partBody)
    : partBody;
  return {
    sender,
    headers,
    boundaryShape: shapeOf(boundary),
    messageIdShape: shapeOf(messageId),
    htmlSkeleton: htmlSkeleton(html),
  };
}

/** What every message of the list has in common, as `kind: value` features. */
function constantFeatures(messages: Rendered[]): Set<string> {
  const features = (m: Rendered) =>
    new Set([
      // a header every MIME message carries alike is no fingerprint (RFC 2045 requires it)
      ...m.headers.filter((line) => line !== 'MIME-Version: 1.0').map((line) => `header ${line}`),
      `boundary ${m.boundaryShape}`,
      `message-id ${m.messageIdShape}`,
      `html ${m.htmlSkeleton}`,
    ]);
  const [first, ...rest] = messages.map(features);
  return new Set([...first].filter((feature) => rest.every((set) => set.has(feature))));
}

async function renderAll(): Promise<Rendered[]> {
  const out: Rendered[] = [];
  const start = new Date('2026-03-12T08:00:00Z');
  for (let n = 0; out.length < TOTAL; n += 1) {
    const template = DEFAULT_TEMPLATES[n % DEFAULT_TEMPLATES.length];
    const sender = MAILBOXES[n % MAILBOXES.length];
    const recipient = MAILBOXES[(n * 3 + 1) % MAILBOXES.length];
    const at = new Date(start.getTime() + n * 7 * 60_000);
    const threadId = messageIdFor(recipient.email, `thread.${n}`);
    const isReply = template.type !== 'initial';
    const messageId = isReply
      ? replyMessageIdFor(sender.email, threadId, sender.profile)
      : messageIdFor(sender.email, messageIdToken(sender.profile, createHash('sha256').update(`n${n}`).digest()));
    const parent = isReply
      ? composeMessage({
          template: DEFAULT_TEMPLATES.find((t) => t.type === 'initial' && t.language === template.language)!,
          kind: 'initial',
          sender: recipient,
          recipient: sender,
          profile: recipient.profile,
          language: template.language,
          timeZone: recipient.timeZone,
          at: new Date(at.getTime() - 2 * 60 * 60_000),
          messageId: threadId,
          threadId,
        })
      : undefined;
    const content = composeMessage({
      template,
      kind: isReply ? 'reply' : 'initial',
      sender,
      recipient,
      profile: sender.profile,
      language: template.language,
      timeZone: sender.timeZone,
      at,
      messageId,
      threadId,
      ...(parent
        ? {
            parent: {
              subject: parent.subject,
              body: parent.body,
              html: parent.html,
              sentAt: new Date(at.getTime() - 2 * 60 * 60_000),
              messageId: threadId,
            },
          }
        : {}),
    });
    const raw = await buildRawMessage(
      outgoingMail({
        sender,
        recipient,
        profile: clientProfileNamed(sender.profile),
        messageId,
        content,
        date: at,
        timeZone: sender.timeZone,
        ...(isReply ? { inReplyTo: threadId, references: [threadId] } : {}),
      }),
    );
    out.push(parse(sender, raw.toString('utf8')));
  }
  return out;
}

describe('client fingerprints', () => {
  it('a token shape and an HTML skeleton are read the way a filter rule would match them', () => {
    expect(shapeOf('cfe4c667-6fb0-4bc4-829a-041a8c02d1e6')).toBe('8-4-4-4-12|a');
    expect(shapeOf('660CF775-BFA7-4C95-B197-A37A994E5D0E')).toBe('8-4-4-4-12|A');
    expect(htmlSkeleton('<html>\n <body>\n  <p>Hi <b>x</b></p></body></html>')).toBe('<html><body><p>');
    expect(htmlSkeleton('<div dir="ltr"><div>Hi</div></div>')).toBe('<divdir="ltr"><div>');
  });

  it(
    `${TOTAL} messages across profiles and templates share no header, boundary, Message-ID shape or HTML skeleton`,
    {
      timeout: 120_000,
    },
    async () => {
      const messages = await renderAll();
      expect(messages).toHaveLength(TOTAL);
      expect(new Set(messages.map((m) => m.sender.profile))).toEqual(new Set(CLIENT_PROFILE_NAMES));

      // Nothing is common to all of them…
      expect([...constantFeatures(messages)]).toEqual([]);

      // …and within one mailbox its client's fingerprint is constant (the test would see one), yet
      // no constant feature of one mailbox is one of a mailbox with another client.
      const byMailbox = new Map<string, Rendered[]>();
      for (const m of messages) byMailbox.set(m.sender.email, [...(byMailbox.get(m.sender.email) ?? []), m]);
      const constants = new Map([...byMailbox.entries()].map(([email, list]) => [email, constantFeatures(list)]));
      for (const mailbox of MAILBOXES) {
        const own = constants.get(mailbox.email) ?? new Set<string>();
        expect(
          [...own].some((feature) => feature.startsWith('boundary ')),
          mailbox.profile,
        ).toBe(true);
        expect(
          [...own].some((feature) => feature.startsWith('html ')),
          mailbox.profile,
        ).toBe(true);
        // the Gmail app's base64 ids have no fixed punctuation; every other client's id has one form
        const idForm = [...own].some((feature) => feature.startsWith('message-id '));
        expect(idForm, mailbox.profile).toBe(mailbox.profile !== 'gmail-app');
      }
      for (const a of MAILBOXES) {
        for (const b of MAILBOXES) {
          if (a.profile === b.profile) continue;
          const shared = [...(constants.get(a.email) ?? [])].filter((f) => constants.get(b.email)?.has(f));
          expect(shared, `${a.profile} and ${b.profile}`).toEqual([]);
        }
      }
    },
  );
});
