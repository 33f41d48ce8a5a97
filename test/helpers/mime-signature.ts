// The structure signature of a raw message (header names in order with their casing, the MIME
// tree, charset spelling, transfer encodings, preamble, Message-ID and boundary), and its
// comparison with the signature of a real client's sample under test/fixtures/clients/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface PartSignature {
  type: string;
  params: string;
  /** The part's Content-Transfer-Encoding, null when it has none. */
  encoding: string | null;
  headerOrder: string[];
}

export interface MessageSignature {
  headers: string[];
  contentType: string;
  boundary: string | null;
  /** The text before the first boundary line, trimmed; null when the first line is the boundary. */
  preamble: string | null;
  parts: PartSignature[];
  messageId: string;
  contentLanguage: string | null;
  threadIndex: boolean;
  /** How the Content-Type's boundary parameter continues: on a tab line, a space line, or none. */
  folding: '\t' | ' ' | 'none';
  date: string;
}

export interface ClientFixture {
  client: string;
  kind: 'new' | 'reply';
  source: string;
  note: string;
  headers: string[] | null;
  contentType: string | null;
  parts: Array<{ type: string; params: string; encoding: Array<string | null>; headerOrder?: string[] }> | null;
  textPart?: { params: string; encoding: string[] };
  messageId: string;
  boundary: string | null;
  preamble: string | null;
  contentLanguage: string | null;
  threadIndex: boolean;
  folding: '\t' | ' ' | 'none';
}

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/clients');

export function loadClientFixtures(): Array<{ name: string; fixture: ClientFixture }> {
  return readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      name: file.replace(/\.json$/, ''),
      fixture: JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as ClientFixture,
    }));
}

/** Header names (as written) and unfolded values, in order; raw keeps each header's lines. */
function headerBlock(text: string): Array<{ name: string; value: string; raw: string }> {
  const out: Array<{ name: string; value: string; raw: string }> = [];
  for (const line of text.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length > 0) {
      const last = out[out.length - 1];
      last.value = `${last.value} ${line.trim()}`.trim();
      last.raw += `\r\n${line}`;
    } else {
      const colon = line.indexOf(':');
      if (colon > 0) out.push({ name: line.slice(0, colon), value: line.slice(colon + 1).trim(), raw: line });
    }
  }
  return out;
}

function split(raw: string): { head: string; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  return end < 0 ? { head: raw, body: '' } : { head: raw.slice(0, end), body: raw.slice(end + 4) };
}

/** Headers a transport adds on the way (they say nothing about the client). */
const TRANSPORT =
  /^(Return-Path|Delivered-To|Received|X-Original-To|DKIM-Signature|Authentication-Results|X-Spam-.*)$/i;

export function signatureOf(message: Buffer | string): MessageSignature {
  const raw = (typeof message === 'string' ? message : message.toString('utf8')).replace(/\r?\n/g, '\r\n');
  const { head, body } = split(raw);
  const headers = headerBlock(head).filter((h) => !TRANSPORT.test(h.name));
  const get = (name: string) => headers.find((h) => h.name.toLowerCase() === name.toLowerCase());
  const contentTypeHeader = get('Content-Type');
  const contentType = contentTypeHeader?.value.split(';')[0].trim().toLowerCase() ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(contentTypeHeader?.value ?? '')?.[1] ?? null;
  const folding = !contentTypeHeader?.raw.includes('\r\n')
    ? 'none'
    : contentTypeHeader.raw.includes('\r\n\t')
      ? '\t'
      : ' ';
  let preamble: string | null = null;
  const parts: PartSignature[] = [];
  if (boundary) {
    const sections = body.split(new RegExp(`(?:^|\\r\\n)--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?`));
    preamble = body.startsWith(`--${boundary}`) ? null : sections[0].trim();
    for (const section of sections.slice(1)) {
      const content = section.replace(/^\r\n/, '');
      if (content.trim() === '') continue;
      const partHeaders = headerBlock(split(content).head);
      const typeHeader = partHeaders.find((h) => h.name.toLowerCase() === 'content-type');
      const [type, ...params] = (typeHeader?.value ?? 'text/plain').split(';');
      parts.push({
        type: type.trim().toLowerCase(),
        params: params.map((p) => p.trim()).join('; '),
        encoding: partHeaders.find((h) => h.name.toLowerCase() === 'content-transfer-encoding')?.value ?? null,
        headerOrder: partHeaders.map((h) => h.name),
      });
    }
  }
  return {
    headers: headers.map((h) => h.name),
    contentType,
    boundary,
    preamble,
    parts,
    messageId: get('Message-ID')?.value ?? '',
    contentLanguage: get('Content-Language')?.value ?? null,
    threadIndex: get('Thread-Index') !== undefined,
    folding,
    date: get('Date')?.value ?? '',
  };
}

/**
 * Every way the message differs from the sample, as short sentences (`header order: …`). Facts
 * the sample does not have (an older sample's header order, a signed sample's parts) are not
 * compared; the caller decides which listed differences it accepts.
 */
export function differences(fixture: ClientFixture, ours: MessageSignature, senderDomain: string): string[] {
  const found: string[] = [];
  if (fixture.headers) {
    const sample = fixture.headers.join(', ');
    const mine = ours.headers.join(', ');
    if (sample !== mine) found.push(`header order: sample [${sample}] ours [${mine}]`);
  }
  if (fixture.contentType && fixture.contentType !== ours.contentType) {
    found.push(`content type: sample ${fixture.contentType} ours ${ours.contentType}`);
  }
  if (fixture.parts) {
    fixture.parts.forEach((part, i) => {
      const mine = ours.parts[i];
      if (!mine) return found.push(`part ${i + 1}: missing`);
      if (part.type !== mine.type) found.push(`part ${i + 1} type: sample ${part.type} ours ${mine.type}`);
      if (part.params !== mine.params)
        found.push(`part ${i + 1} params: sample "${part.params}" ours "${mine.params}"`);
      if (!part.encoding.includes(mine.encoding)) {
        found.push(`part ${i + 1} encoding: sample ${part.encoding.join('|')} ours ${mine.encoding}`);
      }
      if (part.headerOrder && part.headerOrder.join(', ') !== mine.headerOrder.join(', ')) {
        found.push(
          `part ${i + 1} header order: sample [${part.headerOrder.join(', ')}] ours [${mine.headerOrder.join(', ')}]`,
        );
      }
    });
    if (ours.parts.length > fixture.parts.length && fixture.parts.length > 1) found.push('parts: more than the sample');
  }
  if (fixture.textPart) {
    const text = ours.parts.find((p) => p.type === 'text/plain');
    if (text?.params !== fixture.textPart.params)
      found.push(`text part params: sample "${fixture.textPart.params}" ours "${text?.params}"`);
    if (!text || !fixture.textPart.encoding.includes(text.encoding ?? '')) {
      found.push(`text part encoding: sample ${fixture.textPart.encoding.join('|')} ours ${text?.encoding}`);
    }
  }
  const idForm = new RegExp(fixture.messageId.replace('SENDER', senderDomain.replace(/\./g, '\\.')));
  if (!idForm.test(ours.messageId)) found.push(`message-id form: ${ours.messageId} is not ${idForm.source}`);
  if (fixture.boundary && !(ours.boundary && new RegExp(fixture.boundary).test(ours.boundary))) {
    found.push(`boundary form: ${ours.boundary} is not ${fixture.boundary}`);
  }
  if (fixture.boundary && fixture.folding !== ours.folding) {
    found.push(`content-type folding: sample ${JSON.stringify(fixture.folding)} ours ${JSON.stringify(ours.folding)}`);
  }
  if (fixture.contentType?.startsWith('multipart/') && fixture.preamble !== ours.preamble) {
    found.push(`preamble: sample ${JSON.stringify(fixture.preamble)} ours ${JSON.stringify(ours.preamble)}`);
  }
  if (fixture.contentLanguage === null && ours.contentLanguage !== null)
    found.push('content-language: sample has none');
  if (
    fixture.contentLanguage !== null &&
    !(ours.contentLanguage && new RegExp(fixture.contentLanguage).test(ours.contentLanguage))
  ) {
    found.push(`content-language: ${ours.contentLanguage} is not ${fixture.contentLanguage}`);
  }
  if (fixture.threadIndex !== ours.threadIndex)
    found.push(`thread-index: sample ${fixture.threadIndex} ours ${ours.threadIndex}`);
  return found;
}

/** Differences from a sample that are expected, each with why. */
export const ALLOWED: Array<{ fixture: RegExp; difference: RegExp; reason: string }> = [
  {
    fixture: /^(thunderbird-new|thunderbird-reply|gmail-reply)$/,
    difference: /^header order: /,
    reason:
      'the sample is a single text part, so its Content-Transfer-Encoding sits among the top headers; a multipart message carries it on each part (the order of every other header is compared below without it)',
  },
  {
    fixture: /^(thunderbird-reply|outlook-reply)$/,
    difference: /^header order: /,
    reason: 'the sample has a Cc; warmup mail has one recipient (the order of the others is compared below without it)',
  },
  {
    fixture: /^gmail-reply$/,
    difference: /^header order: /,
    reason: "X-Gm-Features is added by Gmail's own servers, which warmup mail does not pass through",
  },
  {
    fixture: /^(thunderbird-new|thunderbird-reply|gmail-reply)$/,
    difference: /^content type: sample text\/plain ours multipart\/alternative$/,
    reason:
      'the sample is plain text only; warmup mail has HTML and plain text, whose tree is compared with thunderbird-alternative and gmail-new',
  },
  {
    fixture: /^thunderbird-alternative$/,
    difference: /^part [12] params: sample "charset=utf-8/,
    reason:
      'Thunderbird 45 spelled the charset utf-8; current Thunderbird writes UTF-8 (thunderbird-new, thunderbird-reply)',
  },
  {
    fixture: /^thunderbird-alternative$/,
    difference: /^content-language: sample has none$/,
    reason:
      'Thunderbird 45 wrote no Content-Language; current Thunderbird always does (thunderbird-new, thunderbird-reply)',
  },
  {
    fixture: /^outlook-reply$/,
    difference: /^part 1 (params|encoding): /,
    reason:
      'the sample\'s text is not ASCII (charset="UTF-8", quoted-printable); for ASCII text Outlook writes us-ascii and 7bit, as outlook-new shows (non-ASCII is checked below)',
  },
];

/** Header names a sample has that warmup mail does not, and why (see ALLOWED). */
export const SAMPLE_ONLY_HEADERS = new Set(['Cc', 'X-Gm-Features', 'Content-Transfer-Encoding']);

/** The differences from the sample that ALLOWED does not explain. */
export function unexplainedDifferences(
  name: string,
  fixture: ClientFixture,
  ours: MessageSignature,
  senderDomain: string,
): string[] {
  return differences(fixture, ours, senderDomain).filter(
    (difference) => !ALLOWED.some((allowed) => allowed.fixture.test(name) && allowed.difference.test(difference)),
  );
}
