// What a person wrote in a reply, as plain text for its owner to read: the start of the message's
// text part. Everything here reads what a stranger may have written, so the input is cut to a
// fixed size before anything else, every loop walks it once (no regex over the body, no
// backtracking), multiparts are followed to a fixed depth and part count, and the result is
// plain text of a bounded length with control characters removed.
import { fieldValues, headerBlock, headerFields, type HeaderField } from './headers.js';

/** The most of a reply that is ever downloaded (BODY.PEEK[]<0.N>) and parsed: its header and the start of its text. */
export const MAX_REPLY_BYTES = 128 * 1024;
/** The excerpt kept of what a person wrote, in characters. */
export const MAX_EXCERPT_CHARS = 2000;
/** A subject or a sender's name kept, in characters. */
export const MAX_LINE_CHARS = 300;
/** Multiparts inside multiparts are followed this deep, and at most this many parts are looked at. */
const MAX_DEPTH = 5;
const MAX_PARTS = 64;

interface Part {
  fields: HeaderField[];
  body: string;
}

/** The header block and the body of a part (both latin1 text: one char per byte). */
function splitPart(raw: string): Part {
  const head = headerBlock(raw);
  let bodyStart = head.length;
  // skip the empty line that ended the header
  if (raw.startsWith('\r\n\r\n', bodyStart)) bodyStart += 4;
  else if (raw.startsWith('\n\n', bodyStart)) bodyStart += 2;
  return { fields: headerFields(head), body: raw.slice(bodyStart) };
}

/**
 * A header parameter (`charset`, `boundary`) of a Content-Type value, unquoted. Split on `;`,
 * which neither a boundary nor a charset may hold: one pass.
 */
export function headerParameter(value: string, name: string): string | undefined {
  const segments = value.split(';');
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i];
    const eq = segment.indexOf('=');
    if (eq < 0 || segment.slice(0, eq).trim().toLowerCase() !== name) continue;
    let parameter = segment.slice(eq + 1).trim();
    if (parameter.startsWith('"')) {
      const close = parameter.indexOf('"', 1);
      parameter = parameter.slice(1, close < 0 ? parameter.length : close);
    }
    return parameter;
  }
  return undefined;
}

/** The media type of a Content-Type value, lower case (`text/plain` when there is none). */
function mediaType(fields: HeaderField[]): { type: string; value: string } {
  const value = fieldValues(fields, 'content-type')[0] ?? 'text/plain';
  const semi = value.indexOf(';');
  return { type: (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase() || 'text/plain', value };
}

/** The parts of a multipart body, between `--boundary` lines, at most MAX_PARTS of them. */
function multipartParts(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  let start = -1;
  let at = body.indexOf(delimiter);
  while (at >= 0 && parts.length < MAX_PARTS) {
    // a delimiter counts only at the start of a line
    if (at === 0 || body[at - 1] === '\n') {
      if (start >= 0) parts.push(body.slice(start, at));
      if (body.startsWith('--', at + delimiter.length)) return parts; // the closing delimiter
      const lineEnd = body.indexOf('\n', at);
      if (lineEnd < 0) return parts;
      start = lineEnd + 1;
    }
    at = body.indexOf(delimiter, at + delimiter.length);
  }
  // cut off (the download is bounded): what there is of the last part still counts
  if (start >= 0 && parts.length < MAX_PARTS) parts.push(body.slice(start));
  return parts;
}

/** The first text part of a message: text/plain if there is one, else text/html; depth-first. */
function firstTextPart(raw: string): { part: Part; html: boolean } | undefined {
  let html: Part | undefined;
  let budget = MAX_PARTS;
  const walk = (part: Part, depth: number): Part | undefined => {
    if (--budget < 0) return undefined;
    const { type, value } = mediaType(part.fields);
    if (type.startsWith('multipart/')) {
      const boundary = headerParameter(value, 'boundary');
      if (!boundary || depth >= MAX_DEPTH || boundary.length > 200) return undefined;
      for (const child of multipartParts(part.body, boundary)) {
        const found = walk(splitPart(child), depth + 1);
        if (found) return found;
        if (budget < 0) return undefined;
      }
      return undefined;
    }
    const disposition = (fieldValues(part.fields, 'content-disposition')[0] ?? '').trim().toLowerCase();
    if (disposition.startsWith('attachment')) return undefined;
    if (type === 'text/plain') return part;
    if (type === 'text/html' && !html) html = part;
    return undefined;
  };
  const plain = walk(splitPart(raw), 0);
  if (plain) return { part: plain, html: false };
  return html ? { part: html, html: true } : undefined;
}

const BASE64 = new Uint8Array(128).fill(255);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  .split('')
  .forEach((c, i) => (BASE64[c.charCodeAt(0)] = i));

/** Base64 to bytes, skipping anything that is not of its alphabet (line breaks, junk). */
function decodeBase64(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4) + 3);
  let n = 0;
  let bits = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3d) break; // '=' padding ends the data
    const v = c < 128 ? BASE64[c] : 255;
    if (v === 255) continue;
    bits = (bits << 6) | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[n++] = (bits >> count) & 0xff;
    }
  }
  return out.subarray(0, n);
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Quoted-printable to bytes: `=XX` escapes and `=` soft line breaks; anything malformed kept as is. */
function decodeQuotedPrintable(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3d) {
      if (text[i + 1] === '\n') {
        i += 1;
        continue;
      }
      if (text[i + 1] === '\r' && text[i + 2] === '\n') {
        i += 2;
        continue;
      }
      const hi = hexValue(text.charCodeAt(i + 1));
      const lo = hexValue(text.charCodeAt(i + 2));
      if (hi >= 0 && lo >= 0) {
        out[n++] = hi * 16 + lo;
        i += 2;
        continue;
      }
    }
    out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

/** Bytes in a charset a mail may name, as text; an unknown or broken charset reads as UTF-8 with replacement characters. */
function decodeCharset(bytes: Uint8Array, charset: string | undefined): string {
  try {
    return new TextDecoder(charset?.trim() || 'utf-8', { fatal: false }).decode(bytes);
  } catch {
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  }
}

/** The body of a text part as text: transfer encoding and charset undone. */
function decodeBody(part: Part): string {
  const encoding = (fieldValues(part.fields, 'content-transfer-encoding')[0] ?? '').trim().toLowerCase();
  const charset = headerParameter(mediaType(part.fields).value, 'charset');
  let bytes: Uint8Array;
  if (encoding === 'base64') bytes = decodeBase64(part.body);
  else if (encoding === 'quoted-printable') bytes = decodeQuotedPrintable(part.body);
  else bytes = Buffer.from(part.body, 'latin1');
  return decodeCharset(bytes, charset);
}

/** The text of HTML, roughly: tags dropped, a few entities and line-breaking tags kept as text. One pass. */
function htmlToText(html: string): string {
  const lower = html.toLowerCase();
  let out = '';
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '<') {
      const end = html.indexOf('>', i + 1);
      if (end < 0) break;
      const tag = lower.slice(i + 1, Math.min(end, i + 12));
      if (tag.startsWith('br') || tag.startsWith('/p') || tag.startsWith('/div') || tag.startsWith('/li')) out += '\n';
      // what a style or script element holds is not text
      for (const hidden of ['style', 'script']) {
        if (tag.startsWith(hidden)) {
          const close = lower.indexOf(`</${hidden}`, end);
          i = close < 0 ? html.length : close;
          break;
        }
      }
      if (i < end) i = end + 1;
      continue;
    }
    if (c === '&') {
      // an entity is short: looked for within a few characters only (an unbounded search per `&` is quadratic)
      const near = lower.slice(i, i + 10).indexOf(';');
      const semi = near < 0 ? -1 : i + near;
      const entity = semi > i ? lower.slice(i + 1, semi) : '';
      const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };
      if (entity in named) {
        out += named[entity];
        i = semi + 1;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

/**
 * Text for a person to read: control characters (but line breaks and tabs) removed, what the
 * reply quotes dropped (lines starting with `>`, and everything from an "On … wrote:" or
 * "Original Message" line on), runs of blank lines made one, at most `max` characters.
 */
export function readableText(text: string, max: number): string {
  const lines: string[] = [];
  let length = 0;
  let start = 0;
  while (start <= text.length && length <= max) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    let line = '';
    for (let i = start; i < end && line.length <= max; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x09) line += ' ';
      else if (c >= 0x20 && !(c >= 0x7f && c <= 0x9f) && c !== 0x2028 && c !== 0x2029) line += text[i];
    }
    line = line.trimEnd();
    const trimmed = line.trimStart();
    const lower = trimmed.toLowerCase();
    if (
      (lower.startsWith('on ') && lower.endsWith('wrote:')) ||
      lower.startsWith('-----original message') ||
      (lower.startsWith('am ') && lower.endsWith('schrieb:')) ||
      (lower.startsWith('le ') && lower.endsWith('a écrit :'))
    )
      break;
    if (!trimmed.startsWith('>') && !(trimmed === '' && (lines.length === 0 || lines[lines.length - 1] === ''))) {
      lines.push(line);
      length += line.length + 1;
    }
    if (newline < 0) break;
    start = newline + 1;
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const joined = lines.join('\n');
  return joined.length > max ? `${joined.slice(0, max - 1).trimEnd()}…` : joined;
}

/** One line of text (a subject, a name): control characters and line breaks out, at most MAX_LINE_CHARS. */
export function readableLine(text: string): string {
  let out = '';
  for (let i = 0; i < text.length && out.length < MAX_LINE_CHARS; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x09 || c === 0x0a || c === 0x0d) out += ' ';
    else if (c >= 0x20 && !(c >= 0x7f && c <= 0x9f) && c !== 0x2028 && c !== 0x2029) out += text[i];
  }
  return out.trim();
}

/**
 * What a person wrote in a reply (its raw start, as latin1 text: one char per byte), as a bounded
 * plain-text excerpt; '' when it holds no text part.
 */
export function replyExcerpt(raw: string, maxChars = MAX_EXCERPT_CHARS): string {
  const bounded = raw.length > MAX_REPLY_BYTES ? raw.slice(0, MAX_REPLY_BYTES) : raw;
  const found = firstTextPart(bounded);
  if (!found) return '';
  const text = decodeBody(found.part);
  return readableText(found.html ? htmlToText(text) : text, maxChars);
}
