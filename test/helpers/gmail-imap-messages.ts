// What the Gmail-like test server reads of a stored message: its header fields, its IMAP
// envelope, and the IMAP date forms.
import { nstring } from './gmail-imap-wire.js';

// ---- messages: headers, envelope --------------------------------------------------------------

/** The header block of a raw message (up to the first empty line), as latin1 text. */
export function headerBlock(raw: Buffer): string {
  const textRaw = raw.toString('latin1');
  const end = textRaw.indexOf('\r\n\r\n');
  return end < 0 ? textRaw : textRaw.slice(0, end + 2);
}

/** Header fields in order, each with its raw lines (folded as sent). */
export function headerLines(raw: Buffer): Array<{ name: string; lines: string }> {
  const fields: Array<{ name: string; lines: string }> = [];
  for (const line of headerBlock(raw).split('\r\n')) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && fields.length > 0) {
      fields[fields.length - 1]!.lines += `\r\n${line}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trim().toLowerCase(), lines: line });
  }
  return fields;
}

export function headerValue(raw: Buffer, name: string): string {
  const field = headerLines(raw).find((f) => f.name === name);
  if (!field) return '';
  return field.lines
    .slice(field.lines.indexOf(':') + 1)
    .replace(/\r\n[ \t]+/g, ' ')
    .trim();
}

/** `"Name" <a@b>, c@d` → IMAP address structures (enough for what warmup mail carries). */
function addressList(value: string): string {
  if (!value) return 'NIL';
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let angle = false;
  for (const c of value) {
    if (c === '"') quoted = !quoted;
    if (!quoted && c === '<') angle = true;
    if (!quoted && c === '>') angle = false;
    if (c === ',' && !quoted && !angle) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  const structures = parts
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const open = part.lastIndexOf('<');
      const address = open >= 0 ? part.slice(open + 1, part.indexOf('>', open)).trim() : part;
      const name = open >= 0 ? part.slice(0, open).trim().replace(/^"|"$/g, '') : '';
      const at = address.lastIndexOf('@');
      const mailbox = at >= 0 ? address.slice(0, at) : address;
      const host = at >= 0 ? address.slice(at + 1) : '';
      return `(${nstring(name)} NIL ${nstring(mailbox)} ${nstring(host)})`;
    });
  return structures.length ? `(${structures.join('')})` : 'NIL';
}

export function envelope(raw: Buffer): string {
  const h = (name: string) => headerValue(raw, name);
  const from = addressList(h('from'));
  return `(${[
    nstring(h('date')),
    nstring(h('subject')),
    from,
    addressList(h('sender')) === 'NIL' ? from : addressList(h('sender')),
    addressList(h('reply-to')) === 'NIL' ? from : addressList(h('reply-to')),
    addressList(h('to')),
    addressList(h('cc')),
    addressList(h('bcc')),
    nstring(h('in-reply-to')),
    nstring(h('message-id')),
  ].join(' ')})`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function imapDate(date: Date): string {
  const day = String(date.getUTCDate()).padStart(2, '0');
  const time = date.toISOString().slice(11, 19);
  return `"${day}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()} ${time} +0000"`;
}

/** `1-Mar-2025` → that day at 00:00 UTC. */
export function parseSearchDate(value: string): Date {
  const [day, month, year] = value.split('-');
  return new Date(Date.UTC(Number(year), MONTHS.indexOf(month ?? ''), Number(day)));
}
