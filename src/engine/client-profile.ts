/*
 * The mail program a mailbox's owner seems to use: one per mailbox, the same in every worker and
 * every run (drawn from its id, like its habits), so that two mailboxes do not share one client's
 * fingerprint. It decides what the engine's IMAP login says about itself (the IMAP `ID`: the
 * client's own name and version, or nothing where the client sends no ID — never the IMAP
 * library's), and how the mailbox's mail is written the way that client writes it: the form of
 * its Message-IDs, its multipart boundaries, the headers it adds about itself, the shape of its
 * HTML document, its reply attribution and quote, and where the signature goes.
 *
 * Everything here is pure: the same message (its Message-ID) always gets the same boundary and
 * markup, so a resend after a crash is the same message byte for byte.
 */
import { createHash } from 'node:crypto';

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
  /** The client encodes its text parts quoted-printable whatever they hold (else: 7bit when it can). */
  quotedPrintable: boolean;
}

const APPLE_MAIL_BUILD = '3826.300.87.2.22';

const PROFILES: ClientProfile[] = [
  {
    name: 'thunderbird',
    imapId: { name: 'Thunderbird', version: '128.5.2' },
    headers: { 'User-Agent': 'Mozilla Thunderbird' },
    quotedPrintable: false,
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
    quotedPrintable: true,
  },
  // Outlook and the Gmail app say nothing about themselves over IMAP
  { name: 'outlook', imapId: null, headers: { 'X-Mailer': 'Microsoft Outlook 16.0' }, quotedPrintable: true },
  { name: 'gmail-app', imapId: null, headers: {}, quotedPrintable: false },
];

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The mailbox's client, stable for its id. */
export function clientProfileOf(mailboxId: string): ClientProfile {
  return PROFILES[digest(`client:${mailboxId}`).readUIntBE(0, 6) % PROFILES.length];
}

export function clientProfileNamed(name: ClientProfileName): ClientProfile {
  return PROFILES.find((profile) => profile.name === name) ?? PROFILES[0];
}

export const CLIENT_PROFILE_NAMES: readonly ClientProfileName[] = PROFILES.map((profile) => profile.name);

/** A version 4 UUID from 16 bytes. */
function uuid(bytes: Buffer): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The local part of a Message-ID in the client's own form, from at least 32 bytes of entropy:
 * Thunderbird a lowercase UUID, Apple Mail an uppercase one, Outlook its `000001d…$…$…$` form,
 * the Gmail app `CA…` and base64.
 */
export function messageIdToken(profile: ClientProfileName, bytes: Buffer): string {
  switch (profile) {
    case 'thunderbird':
      return uuid(bytes);
    case 'apple-mail':
      return uuid(bytes).toUpperCase();
    case 'outlook': {
      const hex = bytes.toString('hex');
      return `000001d${hex.slice(0, 5)}$${hex.slice(5, 13)}$${hex.slice(13, 21)}$`;
    }
    case 'gmail-app':
      // 27 bytes: 36 characters with no `=` padding
      return `CA${bytes.subarray(0, 27).toString('base64').replace(/\//g, '_')}`;
  }
}

/** The token of a reply's Message-ID, derived from its parent's (a replanned reply gets the same one). */
export function replyMessageIdToken(profile: ClientProfileName, parentMessageId: string): string {
  return messageIdToken(profile, digest(`reply:${parentMessageId}`));
}

/** The boundary of the message's multipart/alternative, in the client's own style, stable per Message-ID. */
export function boundaryFor(profile: ClientProfileName, messageId: string): string {
  const bytes = digest(`boundary:${messageId}`);
  const hex = bytes.toString('hex');
  switch (profile) {
    case 'thunderbird':
      return `------------${[...bytes.subarray(0, 24)].map((b) => ALNUM[b % ALNUM.length]).join('')}`;
    case 'apple-mail':
      return `Apple-Mail=_${uuid(bytes).toUpperCase()}`;
    case 'outlook': {
      const upper = hex.toUpperCase();
      return `----=_NextPart_000_${upper.slice(0, 4)}_01DC${upper.slice(4, 8)}.${upper.slice(8, 16)}`;
    }
    case 'gmail-app':
      return `000000000000${hex.slice(0, 16)}`;
  }
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
