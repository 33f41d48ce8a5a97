// Header parsing shared by the mail layer. Everything here reads what a server (or whoever sent
// the mail) wrote, so each function runs in one pass over its input: header lines are unfolded
// and compared by prefix, and no regex can backtrack.

export interface HeaderField {
  /** Lower case. */
  name: string;
  value: string;
}

export const LESS_THAN = 0x3c;
export const GREATER_THAN = 0x3e;

/** Header fields of a raw message (or header block), unfolded: name in lower case, value as is. */
export function headerFields(raw: string): HeaderField[] {
  const fields: HeaderField[] = [];
  // the field a continuation line belongs to; none after a line that is not a field
  let current: HeaderField | undefined;
  let lineStart = 0;
  while (lineStart < raw.length) {
    const newline = raw.indexOf('\n', lineStart);
    const next = newline < 0 ? raw.length : newline + 1;
    let lineEnd = newline < 0 ? raw.length : newline;
    if (lineEnd > lineStart && raw.charCodeAt(lineEnd - 1) === 0x0d) lineEnd--;
    const first = raw.charCodeAt(lineStart);
    if (first === 0x20 || first === 0x09) {
      if (current) current.value += ` ${raw.slice(lineStart, lineEnd).trimStart()}`; // folded continuation
    } else {
      // A field name is short; anything else (body text, a long line) is not a field.
      // (searched within the line only: an unbounded indexOf per line would be quadratic)
      let colon = -1;
      for (let k = lineStart; k < Math.min(lineEnd, lineStart + 81); k++) {
        if (raw.charCodeAt(k) === 0x3a) {
          colon = k;
          break;
        }
      }
      if (colon > lineStart) {
        current = { name: raw.slice(lineStart, colon).trim().toLowerCase(), value: raw.slice(colon + 1, lineEnd) };
        fields.push(current);
      } else {
        current = undefined;
      }
    }
    lineStart = next;
  }
  return fields;
}

/** The values of every field called `name` (lower case), anywhere in the text, in order. */
export function fieldValues(fields: HeaderField[], name: string): string[] {
  return fields.filter((f) => f.name === name).map((f) => f.value);
}

/** `<...>` tokens of a header value, in order. */
export function angleTokens(value: string): string[] {
  const tokens: string[] = [];
  let open = -1;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === LESS_THAN) open = i;
    else if (c === GREATER_THAN) {
      if (open >= 0 && i > open + 1) tokens.push(value.slice(open, i + 1));
      open = -1;
    } else if (c <= 0x20) open = -1; // a Message-ID holds no whitespace
  }
  return tokens;
}

/** The most of a message's header that is ever parsed; what a person's mail client writes is far less. */
export const MAX_HEADER_CHARS = 64 * 1024;

/** The header block of a raw message: up to its first empty line, at most `maxChars` characters. */
export function headerBlock(raw: string, maxChars = MAX_HEADER_CHARS): string {
  const bounded = raw.length > maxChars ? raw.slice(0, maxChars) : raw;
  const crlf = bounded.indexOf('\r\n\r\n');
  const lf = bounded.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length === 0 ? bounded : bounded.slice(0, Math.min(...ends));
}

/** The Message-IDs a message answers, as `<…>` tokens: its In-Reply-To, then its References. */
export function answeredMessageIds(fields: HeaderField[]): string[] {
  return [...fieldValues(fields, 'in-reply-to'), ...fieldValues(fields, 'references')].flatMap(angleTokens);
}

/** '<a@b>' and 'a@b' are the same Message-ID. (No regex: /^<+|>+$/ is quadratic on a run of '>'.) */
export function normalizeMessageId(id: string): string {
  const trimmed = id.trim();
  let start = 0;
  let end = trimmed.length;
  while (start < end && trimmed.charCodeAt(start) === LESS_THAN) start++;
  while (end > start && trimmed.charCodeAt(end - 1) === GREATER_THAN) end--;
  return trimmed.slice(start, end).trim();
}

/** Message-IDs of a raw "References:" header block (folded or not). */
export function parseReferences(headerBlock: string): string[] {
  const value = fieldValues(headerFields(headerBlock), 'references')[0];
  return value === undefined ? [] : angleTokens(value);
}
