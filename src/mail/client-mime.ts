/*
 * The bytes of a message as a person's mail client writes them: its header order and casing, its
 * MIME tree, charset spelling, transfer encodings and line wrapping, its preamble and
 * Content-Language, each client as its real mail shows it (test/fixtures/clients/ holds the
 * structure of real samples, and client-mime.test.ts compares this writer with them).
 *
 * Pure: the same message always gives the same bytes, so a resend after a crash is the same
 * message byte for byte. Line ends are CRLF, as on the wire.
 */
import { formatDateHeader } from './date-header.js';

export type MimeStyle = 'thunderbird' | 'apple-mail' | 'outlook' | 'gmail-app';

export interface ClientMessage {
  style: MimeStyle;
  from: { name?: string; address: string };
  to: { name?: string; address: string };
  subject: string;
  text: string;
  html: string;
  /** '<local@host>' in the client's own form. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  date: Date;
  /** The sender's IANA zone: `Date` carries its local time and offset. */
  timeZone: string;
  /** The multipart boundary, in the client's form (see engine/client-profile.ts). */
  boundary: string;
  /** The language the mail is written in ('en', 'de'…), for Content-Language. */
  language: string;
  /** Outlook's Thread-Index (base64), derived from the thread and the send time. */
  threadIndex?: string;
  /** Headers the client writes about itself (`User-Agent`, `X-Mailer`, Apple's `Mime-Version`). */
  selfHeaders: Record<string, string>;
}

const CRLF = '\r\n';
const ASCII = /^[\x20-\x7e\t\r\n]*$/;

function isAscii(text: string): boolean {
  return ASCII.test(text);
}

function longestLine(text: string): number {
  return Math.max(0, ...text.split(/\r?\n/).map((line) => line.length));
}

/** Text with CRLF line ends and exactly one final line end. */
function crlf(text: string): string {
  return `${text.replace(/\r\n?/g, '\n').replace(/\n+$/, '')}\n`.replace(/\n/g, CRLF);
}

// ---------------------------------------------------------------------------------------------
// Header words (RFC 2047).

/** `=?charset?Q?…?=` words of at most 75 characters, or the value itself when it is ASCII. */
function encodeWords(value: string, charset: string): string {
  if (isAscii(value)) return value;
  const words: string[] = [];
  let current = '';
  for (const char of value) {
    const bytes = Buffer.from(char, 'utf8');
    const encoded =
      bytes.length === 1 && /[A-Za-z0-9!*+\-/]/.test(char)
        ? char
        : char === ' '
          ? '_'
          : [...bytes].map((b) => `=${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    if (current.length + encoded.length > 75 - 7 - charset.length) {
      words.push(current);
      current = '';
    }
    current += encoded;
  }
  if (current) words.push(current);
  return words.map((word) => `=?${charset}?Q?${word}?=`).join(' ');
}

/** A display name as the client writes it: Outlook always quotes it, the others only when they must. */
function address(style: MimeStyle, who: { name?: string; address: string }, charset: string): string {
  if (!who.name) return style === 'outlook' ? `<${who.address}>` : who.address;
  if (!isAscii(who.name)) return `${encodeWords(who.name, charset)} <${who.address}>`;
  const needsQuotes = style === 'outlook' || /[()<>[\]:;@\\,."]/.test(who.name);
  const name = needsQuotes ? `"${who.name.replace(/(["\\])/g, '\\$1')}"` : who.name;
  return `${name} <${who.address}>`;
}

/** Folds a header at spaces to lines of at most 78 characters, continuation lines starting with `indent`. */
function fold(name: string, value: string, indent = ' '): string {
  const line = `${name}: ${value}`;
  if (line.length <= 78) return line;
  const out: string[] = [];
  const [first, ...words] = value.split(' ');
  // never between the name and the first word: a Message-ID stays on its header's line
  let current = `${name}: ${first}`;
  for (const word of words) {
    if (current && current.length + 1 + word.length > 78) {
      out.push(current);
      current = `${indent}${word}`;
    } else current = current ? `${current} ${word}` : word;
  }
  out.push(current);
  return out.join(CRLF);
}

// ---------------------------------------------------------------------------------------------
// Quoted-printable, in the two styles clients use.

function qpChar(byte: number): string {
  return `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/** Escaped line (no soft breaks yet): printable ASCII stays, `=` and the rest become `=XX`. */
function qpEscape(line: string): string[] {
  const tokens: string[] = [];
  for (const byte of Buffer.from(line, 'utf8')) {
    tokens.push(byte === 0x3d || byte < 0x20 || byte > 0x7e ? qpChar(byte) : String.fromCharCode(byte));
  }
  // a space or tab at the end of a line must be encoded
  const last = tokens.length - 1;
  if (last >= 0 && (tokens[last] === ' ' || tokens[last] === '\t')) tokens[last] = qpChar(tokens[last].charCodeAt(0));
  return tokens;
}

/**
 * Quoted-printable with soft breaks. `atSpaces`: Apple Mail and Outlook break a long line after a
 * space (the line ends ` =`); Gmail fills each line to 76 characters and breaks where it falls.
 */
function quotedPrintable(text: string, atSpaces: boolean): string {
  const out: string[] = [];
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const tokens = qpEscape(line);
    let current = '';
    let lastSpace = -1;
    for (const token of tokens) {
      if (current.length + token.length > 75) {
        if (atSpaces && lastSpace > 0) {
          out.push(`${current.slice(0, lastSpace + 1)}=`);
          current = current.slice(lastSpace + 1);
        } else {
          out.push(`${current}=`);
          current = '';
        }
        lastSpace = -1;
      }
      if (token === ' ') lastSpace = current.length;
      current += token;
    }
    out.push(current);
  }
  return out.join(CRLF);
}

// ---------------------------------------------------------------------------------------------
// format=flowed (RFC 3676), as Thunderbird sends its plain text.

function flowed(text: string): string {
  const out: string[] = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (raw === '-- ') {
      out.push(raw);
      continue;
    }
    const quote = /^>+ ?/.exec(raw)?.[0] ?? '';
    let rest = raw.slice(quote.length).replace(/ +$/, '');
    // space-stuffing: a line that starts with a space or "From " is sent with one more space
    const stuff = (line: string) =>
      quote === '' && (line.startsWith(' ') || line.startsWith('From ')) ? ` ${line}` : line;
    const width = 72 - quote.length;
    while (rest.length > width) {
      const cut = rest.lastIndexOf(' ', width);
      if (cut <= 0) break;
      out.push(`${quote}${stuff(rest.slice(0, cut + 1))}`);
      rest = rest.slice(cut + 1);
    }
    out.push(`${quote}${stuff(rest)}`);
  }
  return out.join(CRLF);
}

/** Hard wrap at spaces to lines of at most `width` characters (Outlook's plain text). */
function hardWrap(text: string, width: number): string {
  const out: string[] = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    let rest = raw;
    while (rest.length > width) {
      const cut = rest.lastIndexOf(' ', width);
      if (cut <= 0) break;
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    }
    out.push(rest);
  }
  return out.join(CRLF);
}

// ---------------------------------------------------------------------------------------------
// The parts.

interface Part {
  headers: string[];
  body: string;
}

function thunderbirdParts(m: ClientMessage): Part[] {
  const text = flowed(m.text.replace(/\n+$/, ''));
  const html = crlf(m.html);
  // Thunderbird sends 8bit when the text is not ASCII (and the server takes 8BITMIME), else 7bit
  const encoding = (body: string) => (isAscii(body) && longestLine(body) <= 998 ? '7bit' : '8bit');
  return [
    {
      headers: [
        'Content-Type: text/plain; charset=UTF-8; format=flowed',
        `Content-Transfer-Encoding: ${encoding(text)}`,
      ],
      body: `${text}${CRLF}`,
    },
    { headers: ['Content-Type: text/html; charset=UTF-8', `Content-Transfer-Encoding: ${encoding(html)}`], body: html },
  ];
}

function appleParts(m: ClientMessage): Part[] {
  const part = (type: string, body: string, endsSoft: boolean): Part => {
    const ascii = isAscii(body);
    const plain = ascii && longestLine(body) <= 76;
    const charset = ascii ? 'us-ascii' : 'utf-8';
    const encoded = plain
      ? crlf(body)
      : `${quotedPrintable(body.replace(/\n+$/, ''), true)}${endsSoft ? '=' : ''}${CRLF}`;
    return {
      headers: [
        `Content-Transfer-Encoding: ${plain ? '7bit' : 'quoted-printable'}`,
        `Content-Type: ${type};`,
        `\tcharset=${charset}`,
      ],
      body: encoded,
    };
  };
  return [part('text/plain', m.text, false), part('text/html', m.html, true)];
}

function outlookParts(m: ClientMessage): Part[] {
  const textAscii = isAscii(m.text);
  const htmlAscii = isAscii(m.html);
  const text = textAscii
    ? `${hardWrap(m.text.replace(/\n+$/, ''), 76)}${CRLF}`
    : `${quotedPrintable(m.text, true)}${CRLF}`;
  return [
    {
      headers: [
        'Content-Type: text/plain;',
        `\tcharset="${textAscii ? 'us-ascii' : 'utf-8'}"`,
        `Content-Transfer-Encoding: ${textAscii ? '7bit' : 'quoted-printable'}`,
      ],
      body: text,
    },
    {
      headers: [
        'Content-Type: text/html;',
        `\tcharset="${htmlAscii ? 'us-ascii' : 'utf-8'}"`,
        'Content-Transfer-Encoding: quoted-printable',
      ],
      body: `${quotedPrintable(m.html.replace(/\n+$/, ''), true)}${CRLF}`,
    },
  ];
}

function gmailParts(m: ClientMessage): Part[] {
  const part = (type: string, body: string): Part => {
    // Gmail leaves ASCII alone (no Content-Transfer-Encoding) and quotes the rest
    const plain = isAscii(body) && longestLine(body) <= 998;
    return plain
      ? { headers: [`Content-Type: ${type}; charset="UTF-8"`], body: crlf(body) }
      : {
          headers: [`Content-Type: ${type}; charset="UTF-8"`, 'Content-Transfer-Encoding: quoted-printable'],
          body: `${quotedPrintable(body.replace(/\n+$/, ''), false)}${CRLF}`,
        };
  };
  return [part('text/plain', m.text), part('text/html', m.html)];
}

// ---------------------------------------------------------------------------------------------
// The top headers, in each client's order.

/** Content-Language as the client spells it: Thunderbird `en-US`, Outlook `en-us`. */
export function contentLanguageOf(style: MimeStyle, language: string): string {
  const regions: Record<string, string> = { en: 'US', de: 'DE', fr: 'FR', es: 'ES', it: 'IT', nl: 'NL', pt: 'PT' };
  const base = language.toLowerCase().split('-')[0];
  const tag = `${base}-${regions[base] ?? base.toUpperCase()}`;
  return style === 'outlook' ? tag.toLowerCase() : tag;
}

function topHeaders(m: ClientMessage): string[] {
  const charset = m.style === 'apple-mail' || m.style === 'outlook' ? 'utf-8' : 'UTF-8';
  const from = address(m.style, m.from, charset);
  const to = address(m.style, m.to, charset);
  const subject = encodeWords(m.subject, charset);
  const date = formatDateHeader(m.date, m.timeZone);
  const references = m.references?.length ? m.references.join(' ') : undefined;
  const reply = m.inReplyTo !== undefined;
  const self = m.selfHeaders;
  const h: Array<[string, string | undefined, string?]> = [];
  const add = (name: string, value: string | undefined, indent?: string) => {
    if (value !== undefined) h.push([name, value, indent]);
  };
  switch (m.style) {
    case 'thunderbird': {
      add('Message-ID', m.messageId);
      add('Date', date);
      add('MIME-Version', '1.0');
      add('User-Agent', self['User-Agent']);
      if (reply) add('Subject', subject);
      add('Content-Language', contentLanguageOf(m.style, m.language));
      add('To', to);
      add('References', references);
      add('From', from);
      add('In-Reply-To', m.inReplyTo);
      if (!reply) add('Subject', subject);
      add('Content-Type', `multipart/alternative; boundary="${m.boundary}"`);
      break;
    }
    case 'apple-mail': {
      const contentType = `multipart/alternative;${CRLF}\tboundary="${m.boundary}"`;
      add('From', from);
      if (reply) add('Message-Id', m.messageId);
      add('Content-Type', contentType);
      add('Mime-Version', self['Mime-Version'] ?? '1.0');
      add('Subject', subject);
      if (reply) {
        add('Date', date);
        add('In-Reply-To', m.inReplyTo);
        add('To', to);
        add('References', references);
      } else {
        add('Message-Id', m.messageId);
        add('Date', date);
        add('To', to);
      }
      add('X-Mailer', self['X-Mailer']);
      break;
    }
    case 'outlook': {
      add('From', from);
      add('To', to);
      add('References', references);
      add('In-Reply-To', m.inReplyTo);
      add('Subject', subject);
      add('Date', date);
      add('Message-ID', m.messageId);
      add('MIME-Version', '1.0');
      add('Content-Type', `multipart/alternative;${CRLF}\tboundary="${m.boundary}"`);
      add('X-Mailer', self['X-Mailer']);
      add('Thread-Index', m.threadIndex);
      add('Content-Language', contentLanguageOf(m.style, m.language));
      break;
    }
    case 'gmail-app': {
      add('MIME-Version', '1.0');
      add('References', references);
      add('In-Reply-To', m.inReplyTo);
      add('From', from);
      add('Date', date);
      add('Message-ID', m.messageId);
      add('Subject', subject);
      add('To', to);
      add('Content-Type', `multipart/alternative; boundary="${m.boundary}"`);
      break;
    }
  }
  const indent = m.style === 'apple-mail' || m.style === 'outlook' ? '\t' : ' ';
  return h.map(([name, value]) => (value!.includes(CRLF) ? `${name}: ${value}` : fold(name, value!, indent)));
}

const PREAMBLE: Record<MimeStyle, string> = {
  thunderbird: `This is a multi-part message in MIME format.${CRLF}`,
  'apple-mail': CRLF,
  outlook: `This is a multipart message in MIME format.${CRLF}${CRLF}`,
  'gmail-app': '',
};

const PARTS: Record<MimeStyle, (m: ClientMessage) => Part[]> = {
  thunderbird: thunderbirdParts,
  'apple-mail': appleParts,
  outlook: outlookParts,
  'gmail-app': gmailParts,
};

/** The whole message, CRLF line ends, in the client's own form. */
export function writeClientMessage(message: ClientMessage): Buffer {
  // Apple Mail and Outlook name the part's charset in the HTML's own meta tag too
  const m =
    (message.style === 'apple-mail' || message.style === 'outlook') && isAscii(message.html)
      ? { ...message, html: message.html.replace(/charset=utf-8/i, 'charset=us-ascii') }
      : message;
  const parts = PARTS[m.style](m);
  // Apple Mail and Gmail leave a blank line before each boundary after a part; Thunderbird and Outlook too
  const body = parts.map((part) => `--${m.boundary}${CRLF}${part.headers.join(CRLF)}${CRLF}${CRLF}${part.body}`);
  const separator = m.style === 'thunderbird' ? '' : CRLF;
  const multipart = `${PREAMBLE[m.style]}${body.join(separator)}${separator}--${m.boundary}--${CRLF}`;
  return Buffer.from(`${topHeaders(m).join(CRLF)}${CRLF}${CRLF}${multipart}`, 'utf8');
}
