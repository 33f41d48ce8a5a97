/*
 * The mail program a mailbox's owner seems to use: one per mailbox, the same in every worker and
 * every run (drawn from its id, like its habits, among the programs that fit its mail service), so
 * that two mailboxes do not share one client's fingerprint. It decides what the engine's IMAP login says about itself (the IMAP `ID`: the
 * client's own name and version, or nothing where the client sends no ID — never the IMAP
 * library's), and how the mailbox's mail is written the way that client writes it: the form of
 * its Message-IDs, its multipart boundaries, the headers it adds about itself, the shape of its
 * HTML document, its reply attribution and quote, and where the signature goes. The bytes
 * themselves (header order, MIME tree, encodings) are written by mail/client-mime.ts.
 *
 * Everything here is pure: the same message (its Message-ID) always gets the same boundary and
 * markup, so a resend after a crash is the same message byte for byte.
 */
import { createHash } from 'node:crypto';
import { zoneOffsetMinutes } from '../mail/date-header.js';

export type ClientProfileName = 'thunderbird' | 'apple-mail' | 'outlook' | 'gmail-app';

export interface ClientProfile {
  name: ClientProfileName;
  /** The fields of the IMAP ID command; null: the client sends `ID NIL`. */
  imapId: Record<string, string> | null;
  /**
   * Headers the client writes about itself. Thunderbird sends `User-Agent`, Apple Mail `X-Mailer`
   * and its own `Mime-Version` comment, Outlook (Windows) `X-Mailer`; the Gmail app sends none.
   */
  headers: Record<string, string>;
}

const APPLE_MAIL_BUILD = '3826.300.87.2.22';

const PROFILES: ClientProfile[] = [
  {
    name: 'thunderbird',
    imapId: { name: 'Thunderbird', version: '128.5.2' },
    headers: { 'User-Agent': 'Mozilla Thunderbird' },
  },
  {
    name: 'apple-mail',
    imapId: {
      name: 'Mac OS X Mail',
      version: `16.0 (${APPLE_MAIL_BUILD})`,
      os: 'Mac OS X',
      'os-version': '14.7.1 (23H222)',
    },
    headers: {
      'Mime-Version': `1.0 (Mac OS X Mail 16.0 \\(${APPLE_MAIL_BUILD}\\))`,
      'X-Mailer': `Apple Mail (2.${APPLE_MAIL_BUILD})`,
    },
  },
  // Outlook and the Gmail app say nothing about themselves over IMAP
  { name: 'outlook', imapId: null, headers: { 'X-Mailer': 'Microsoft Outlook 16.0' } },
  { name: 'gmail-app', imapId: null, headers: {} },
];

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** What tells which mail service a mailbox lives at; a mailbox row has these columns. */
export interface MailboxClientFacts {
  id: string;
  /** The provider preset it was added with (`gmail`, `outlook`, `icloud`, …, `custom`). */
  provider: string;
  /** The OAuth provider it signs in with, if any (`google`, `microsoft`, `generic`). */
  oauth_provider?: string | null;
  /** Its SMTP settings as stored (JSON with a `host`): a custom mailbox may still be at Google or Microsoft. */
  smtp?: string | null;
}

export type MailService = 'google' | 'microsoft' | 'apple' | 'other';

const SERVICE_HOSTS: ReadonlyArray<[MailService, RegExp]> = [
  ['google', /(^|\.)(gmail|googlemail|google)\.com$/],
  ['microsoft', /(^|\.)(office365|outlook|hotmail|live)\.com$/],
  ['apple', /(^|\.)(me|icloud|mac)\.com$/],
];

function smtpHostOf(smtp: string | null | undefined): string {
  if (!smtp) return '';
  try {
    const host = (JSON.parse(smtp) as { host?: unknown }).host;
    return typeof host === 'string' ? host.toLowerCase().replace(/\.$/, '') : '';
  } catch {
    return '';
  }
}

/** The mail service a mailbox's mail goes out through: its preset, else its OAuth sign-in, else its SMTP host. */
export function mailServiceOf(facts: MailboxClientFacts): MailService {
  if (facts.provider === 'gmail' || facts.oauth_provider === 'google') return 'google';
  if (facts.provider === 'outlook' || facts.oauth_provider === 'microsoft') return 'microsoft';
  if (facts.provider === 'icloud') return 'apple';
  const host = smtpHostOf(facts.smtp);
  return SERVICE_HOSTS.find(([, pattern]) => pattern.test(host))?.[0] ?? 'other';
}

/**
 * The programs a mailbox of each service plausibly writes with, each as often as it is listed. The
 * Gmail app (and Gmail on the web, whose mail is the same) sends only through Google, so only a
 * Google mailbox may get its `@mail.gmail.com` Message-IDs; a Microsoft 365 or Outlook.com mailbox
 * mostly writes with Outlook, an iCloud one with Apple Mail; desktop programs fit every service.
 */
export const PROFILES_BY_SERVICE: Readonly<Record<MailService, readonly ClientProfileName[]>> = {
  google: ['gmail-app', 'gmail-app', 'thunderbird', 'apple-mail', 'outlook'],
  microsoft: ['outlook', 'outlook', 'outlook', 'thunderbird', 'apple-mail'],
  apple: ['apple-mail', 'apple-mail', 'apple-mail', 'thunderbird', 'outlook'],
  other: ['thunderbird', 'apple-mail', 'outlook'],
};

/** The mailbox's client: among those that fit its mail service, stable for its id. */
export function clientProfileOf(mailbox: MailboxClientFacts): ClientProfile {
  const fitting = PROFILES_BY_SERVICE[mailServiceOf(mailbox)];
  return clientProfileNamed(fitting[digest(`client:${mailbox.id}`).readUIntBE(0, 6) % fitting.length]);
}

export function clientProfileNamed(name: ClientProfileName): ClientProfile {
  return PROFILES.find((profile) => profile.name === name) ?? PROFILES[0];
}

export const CLIENT_PROFILE_NAMES: readonly ClientProfileName[] = PROFILES.map((profile) => profile.name);

/**
 * The prefix the client puts before a reply's subject. Outlook writes its own word in upper case,
 * localised where its public samples show it: `RE:` (Microsoft's documented reply prefix), `AW:`
 * ("Antwort") in German. French Outlook is reported both as `RE :` and `REF :`, so it keeps `RE:`
 * there as in Spanish, until a real sample says otherwise. Thunderbird, Apple Mail and Gmail write
 * `Re:` in every language.
 */
export function replyPrefix(profile: ClientProfileName, language: string): string {
  if (profile !== 'outlook') return 'Re:';
  return language === 'de' ? 'AW:' : 'RE:';
}

/** A version 4 UUID from 16 bytes. */
function uuid(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 100-nanosecond intervals since 1601-01-01 UTC (a Windows FILETIME), as Outlook stamps its IDs. */
export function fileTime(at: Date): bigint {
  return (BigInt(at.getTime()) + 11_644_473_600_000n) * 10_000n;
}

function hex(value: bigint, digits: number): string {
  return value.toString(16).padStart(digits, '0').slice(-digits);
}

/**
 * The local part of a Message-ID in the client's own form, from at least 32 bytes of entropy:
 * Thunderbird a lowercase UUID, Apple Mail an uppercase one, Outlook `CCCC` + the send time as a
 * FILETIME in UTC (`01dc…$…$`) + a random word, the Gmail app `CA` and base64 of varying length.
 * `at` is when the message goes out (Outlook's ID carries it).
 */
export function messageIdToken(profile: ClientProfileName, bytes: Buffer, at: Date = new Date(0)): string {
  switch (profile) {
    case 'thunderbird':
      return uuid(bytes);
    case 'apple-mail':
      return uuid(bytes).toUpperCase();
    case 'outlook': {
      // the first word counts the messages of the Outlook session: small, never always 0000
      const counter = bytes[20] % 0x80;
      const time = fileTime(at);
      return `${hex(BigInt(counter), 4)}${hex(time >> 32n, 8)}$${hex(time & 0xffffffffn, 8)}$${bytes.subarray(0, 4).toString('hex')}$`;
    }
    case 'gmail-app': {
      // `CA`, then base64-like characters (`+`, `-`, `_` and `=` inside), 47 to 49 of them
      const length = 47 + (bytes[31] % 3);
      const body = Buffer.concat([bytes, digest(bytes.toString('hex'))])
        .toString('base64')
        .replace(/\//g, '_')
        .replace(/=+$/, '');
      const chars = [...body.slice(0, length)].map((c, i) => (bytes[i % 32] % 23 === 0 ? (i % 2 ? '=' : '-') : c));
      return `CA${chars.join('')}`;
    }
  }
}

/** The host of the client's Message-IDs: the Gmail app's are Google's, the others the sender's domain. */
export function messageIdHost(profile: ClientProfileName, senderEmail: string): string {
  return profile === 'gmail-app' ? 'mail.gmail.com' : senderEmail.slice(senderEmail.lastIndexOf('@') + 1).toLowerCase();
}

/** A whole Message-ID of the client, `<token@host>`. */
export function clientMessageId(profile: ClientProfileName, senderEmail: string, bytes: Buffer, at?: Date): string {
  return `<${messageIdToken(profile, bytes, at)}@${messageIdHost(profile, senderEmail)}>`;
}

/** The token of a reply's Message-ID, derived from its parent's (a replanned reply gets the same one). */
export function replyMessageIdToken(profile: ClientProfileName, parentMessageId: string, at?: Date): string {
  return messageIdToken(profile, digest(`reply:${parentMessageId}`), at);
}

const OUTLOOK_ID = /^<([0-9a-f]{4})([0-9a-f]{8})\$([0-9a-f]{8})\$/;

/** The send time an Outlook Message-ID carries, or undefined for another form. */
export function outlookIdTime(messageId: string): Date | undefined {
  const m = /^<[0-9a-f]{4}([0-9a-f]{8})\$([0-9a-f]{8})\$/.exec(messageId);
  if (!m) return undefined;
  const time = (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
  return new Date(Number(time / 10_000n - 11_644_473_600_000n));
}

/**
 * The boundary of the message's multipart/alternative, in the client's own style, stable per
 * Message-ID. Outlook's carries the Message-ID's counter plus one and the same moment as a FILETIME
 * of the sender's local time (real Outlook mail shows exactly that pairing).
 */
export function boundaryFor(profile: ClientProfileName, messageId: string, timeZone = 'UTC'): string {
  const bytes = digest(`boundary:${messageId}`);
  const hexText = bytes.toString('hex');
  switch (profile) {
    case 'thunderbird':
      return `------------${[...bytes.subarray(0, 24)].map((b) => ALNUM[b % ALNUM.length]).join('')}`;
    case 'apple-mail':
      return `Apple-Mail=_${uuid(bytes).toUpperCase()}`;
    case 'outlook': {
      const parsed = OUTLOOK_ID.exec(messageId);
      const at = outlookIdTime(messageId);
      if (!parsed || !at) {
        const upper = hexText.toUpperCase();
        return `----=_NextPart_000_${upper.slice(0, 4)}_01DC${upper.slice(4, 8)}.${upper.slice(8, 16)}`;
      }
      const counter = (parseInt(parsed[1], 16) + 1) & 0xffff;
      const local = fileTime(new Date(at.getTime() + zoneOffsetMinutes(at, timeZone) * 60_000));
      const upper = (value: bigint) => hex(value, 8).toUpperCase();
      return `----=_NextPart_000_${hex(BigInt(counter), 4).toUpperCase()}_${upper(local >> 32n)}.${upper(local & 0xffffffffn)}`;
    }
    case 'gmail-app':
      return `000000000000${hexText.slice(0, 16)}`;
  }
}

/**
 * Outlook's Thread-Index: the thread's start as the top 48 bits of a FILETIME and a GUID of the
 * thread (22 bytes), then one 5-byte block per reply: the time since the start in units of 2^18
 * (or 2^23 past about 1.7 years, with the top bit set) and a random byte. Base64, as on the wire.
 */
export function threadIndexFor(threadId: string, startedAt: Date, replies: Date[]): string {
  const start = fileTime(startedAt);
  const header = Buffer.alloc(6);
  header.writeUIntBE(Number(start >> 16n), 0, 6);
  const guid = digest(`thread-index:${threadId}`).subarray(0, 16);
  const blocks = replies.map((at, i) => {
    const delta = fileTime(at) - start;
    const positive = delta > 0n ? delta : 0n;
    const small = positive >> 18n < 0x80000000n;
    const units = small ? positive >> 18n : ((positive >> 23n) & 0x7fffffffn) | 0x80000000n;
    const block = Buffer.alloc(5);
    block.writeUInt32BE(Number(units & 0xffffffffn), 0);
    block[4] = digest(`thread-index:${threadId}:${i}`)[0];
    return block;
  });
  return Buffer.concat([header, guid, ...blocks]).toString('base64');
}

// ---------------------------------------------------------------------------------------------
// Text and HTML as the client writes them.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Paragraphs (split on blank lines) of a plain text, each as its lines. */
function paragraphsOf(text: string): string[][] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.replace(/^\n+|\n+$/g, ''))
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => paragraph.split('\n').map((line) => escapeHtml(line)));
}

/** The inner markup of a message's HTML: what is inside its `<body>`, or all of it for a bare fragment. */
export function htmlInner(html: string): string {
  const open = /<body\b[^>]*>/i.exec(html);
  if (!open) return html.trim();
  const start = open.index + open[0].length;
  const end = html.toLowerCase().lastIndexOf('</body>');
  return html.slice(start, end > start ? end : undefined).trim();
}

/** A quoted parent, as the reply shows it. */
export interface QuoteParts {
  /** The attribution line ("On …, Erin wrote:"), or for Outlook its header block, as lines. */
  attribution: string[];
  /** The parent's whole text (its own quotes included). */
  parentText: string;
  /** The parent's HTML (a document or a fragment). */
  parentHtml: string;
  /** The parent's Message-ID (Thunderbird cites it). */
  parentMessageId?: string;
}

/** The full plain text: own words, signature and quote, the way the client lays them out. */
export function clientText(profile: ClientProfileName, own: string, signature: string, quote?: QuoteParts): string {
  const body = own.trimEnd();
  const signed =
    profile === 'thunderbird' || profile === 'gmail-app' ? `${body}\n\n-- \n${signature}` : `${body}\n\n${signature}`;
  if (!quote) return `${signed}\n`;
  const parent = quote.parentText.replace(/\r\n?/g, '\n').trimEnd();
  if (profile === 'outlook') {
    // Outlook does not prefix the quote: the header block marks where the older mail starts
    return `${signed}\n\n${quote.attribution.join('\n')}\n\n${parent}\n`;
  }
  const quoted = parent
    .split('\n')
    .map((line) => (line === '' ? '>' : line.startsWith('>') ? `>${line}` : `> ${line}`))
    .join('\n');
  const gap = profile === 'thunderbird' ? '\n' : '\n\n';
  return `${signed}\n\n${quote.attribution.join('\n')}${gap}${quoted}\n`;
}

const OUTLOOK_STYLE =
  '<style><!--\n/* Font Definitions */\n@font-face\n\t{font-family:Aptos;}\n/* Style Definitions */\n' +
  'p.MsoNormal, li.MsoNormal, div.MsoNormal\n\t{margin:0cm;\n\tfont-size:12.0pt;\n\tfont-family:"Aptos",sans-serif;}\n' +
  '.MsoChpDefault\n\t{mso-style-type:export-only;}\n@page WordSection1\n\t{size:612.0pt 792.0pt;\n\tmargin:72.0pt 72.0pt 72.0pt 72.0pt;}\n' +
  'div.WordSection1\n\t{page:WordSection1;}\n--></style>';

/** The full HTML document (or, for the Gmail app, the fragment it sends): own words, signature and quote. */
export function clientHtml(profile: ClientProfileName, own: string, signature: string, quote?: QuoteParts): string {
  const paragraphs = paragraphsOf(own);
  const name = escapeHtml(signature);
  const attribution = quote ? quote.attribution.map(escapeHtml) : [];
  const parent = quote ? htmlInner(quote.parentHtml) : '';
  switch (profile) {
    case 'thunderbird': {
      const text = paragraphs.map((lines) => `    <p>${lines.join('<br>\n      ')}</p>`).join('\n');
      const cite = quote?.parentMessageId
        ? ` cite="mid:${escapeHtml(quote.parentMessageId.replace(/^<|>$/g, ''))}"`
        : '';
      const quoted = quote
        ? `    <div class="moz-cite-prefix">${attribution.join('<br>')}<br>\n    </div>\n` +
          `    <blockquote type="cite"${cite}>\n${parent}\n    </blockquote>\n`
        : '';
      return (
        '<!DOCTYPE html>\n<html>\n  <head>\n' +
        '    <meta http-equiv="content-type" content="text/html; charset=UTF-8">\n  </head>\n  <body>\n' +
        `${text}\n    <pre class="moz-signature" cols="72">-- \n${name}</pre>\n${quoted}  </body>\n</html>\n`
      );
    }
    case 'apple-mail': {
      const text = paragraphs
        .map((lines) => lines.map((line) => `<div>${line}</div>`).join(''))
        .join('<div><br></div>');
      const quoted = quote
        ? `<div><br><blockquote type="cite"><div>${attribution.join('<br>')}</div><br class="Apple-interchange-newline">` +
          `<div>${parent}</div></blockquote></div>`
        : '';
      return (
        '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>' +
        '<body style="overflow-wrap: break-word; -webkit-nbsp-mode: space; line-break: after-white-space;">' +
        `${text}<div><br></div><div>${name}</div>${quoted}</body></html>`
      );
    }
    case 'outlook': {
      const p = (inner: string) => `<p class=MsoNormal>${inner}<o:p></o:p></p>\n`;
      const blank = '<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n';
      const text = paragraphs.map((lines) => p(lines.join('<br>\n'))).join(blank);
      const header = attribution.map((line) => line.replace(/^([^:]+:)/, '<b>$1</b>')).join('<br>\n');
      const quoted = quote
        ? `${blank}<div style='border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm'>\n` +
          `${p(header)}</div>\n${blank}${parent}\n`
        : '';
      return (
        '<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" ' +
        'xmlns:w="urn:schemas-microsoft-com:office:word" xmlns:m="http://schemas.microsoft.com/office/2004/12/omml" ' +
        'xmlns="http://www.w3.org/TR/REC-html40"><head><meta http-equiv=Content-Type content="text/html; charset=utf-8">' +
        `<meta name=Generator content="Microsoft Word 15 (filtered medium)">${OUTLOOK_STYLE}</head>` +
        `<body lang=EN-US link="#467886" vlink="#96607D" style='word-wrap:break-word'><div class=WordSection1>\n` +
        `${text}${blank}${p(name)}${quoted}</div></body></html>`
      );
    }
    case 'gmail-app': {
      const text = paragraphs
        .map((lines) => lines.map((line) => `<div>${line}</div>`).join(''))
        .join('<div><br></div>');
      const quoted = quote
        ? `<br><div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">${attribution.join('<br>')}<br></div>` +
          '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">' +
          `${parent}</blockquote></div>`
        : '';
      return (
        `<div dir="ltr">${text}<div><br></div><span class="gmail_signature_prefix">-- </span><br>` +
        `<div dir="ltr" class="gmail_signature">${name}</div></div>${quoted}\n`
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Attribution lines.

function localeOf(language: string): string {
  return Intl.DateTimeFormat.supportedLocalesOf([language]).length > 0 ? language : 'en';
}

function format(at: Date, language: string, timeZone: string, options: Intl.DateTimeFormatOptions): string {
  return new Intl.DateTimeFormat(localeOf(language), { ...options, timeZone }).format(at);
}

const OUTLOOK_LABELS: Record<string, { from: string; sent: string; to: string; subject: string }> = {
  en: { from: 'From:', sent: 'Sent:', to: 'To:', subject: 'Subject:' },
  de: { from: 'Von:', sent: 'Gesendet:', to: 'An:', subject: 'Betreff:' },
  fr: { from: 'De :', sent: 'Envoyé :', to: 'À :', subject: 'Objet :' },
  es: { from: 'De:', sent: 'Enviado el:', to: 'Para:', subject: 'Asunto:' },
};

export interface AttributionInput {
  sentAt: Date;
  author: { name: string; email: string };
  /** Outlook's header block names the parent's recipient (the replier) and subject too. */
  recipient: { name: string; email: string };
  subject: string;
  language: string;
  timeZone: string;
}

/** "On <date>, <name> wrote:" the way the client writes it, in the reply's language (Outlook: its header block). */
export function attributionLines(profile: ClientProfileName, input: AttributionInput): string[] {
  const { sentAt, author, language, timeZone } = input;
  const who = `${author.name} <${author.email}>`;
  let when: string;
  switch (profile) {
    case 'outlook': {
      const labels = OUTLOOK_LABELS[language] ?? OUTLOOK_LABELS.en;
      const sent = format(sentAt, language, timeZone, { dateStyle: 'full', timeStyle: 'short' });
      return [
        `${labels.from} ${who}`,
        `${labels.sent} ${sent}`,
        `${labels.to} ${input.recipient.name} <${input.recipient.email}>`,
        `${labels.subject} ${input.subject}`,
      ];
    }
    case 'thunderbird':
      when = format(sentAt, language, timeZone, {
        year: '2-digit',
        month: 'numeric',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).replace(',', '');
      return [wrote(language, when, author.name)];
    case 'apple-mail':
      when = format(sentAt, language, timeZone, { dateStyle: 'medium', timeStyle: 'short' });
      return [wrote(language, when, who)];
    case 'gmail-app': {
      // "Thu, Mar 12, 2026 at 3:20 PM", and no comma before the name
      const day = format(sentAt, language, timeZone, {
        weekday: 'short',
        year: 'numeric',
        month: 'short',
        day: 'numeric',
      });
      const time = format(sentAt, language, timeZone, { hour: 'numeric', minute: '2-digit' });
      when = `${day} ${language === 'en' ? 'at' : ''} ${time}`.replace(/\s+/g, ' ');
      return [wrote(language, when, who).replace(`${when}, `, `${when} `)];
    }
  }
}

function wrote(language: string, when: string, author: string): string {
  switch (language) {
    case 'de':
      return `Am ${when} schrieb ${author}:`;
    case 'fr':
      return `Le ${when}, ${author} a écrit :`;
    case 'es':
      return `El ${when}, ${author} escribió:`;
    default:
      return `On ${when}, ${author} wrote:`;
  }
}
