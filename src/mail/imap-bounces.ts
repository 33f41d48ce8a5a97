// Delivery reports that name our messages: found in INBOX and spam, each downloaded once (a
// mark per folder), and parsed in one pass over what whoever sent the report wrote (header lines
// are unfolded and compared by prefix; the only regex is anchored with one quantifier).
import { fieldValues, headerFields, normalizeMessageId, LESS_THAN, GREATER_THAN } from './headers.js';
import { type ImapConnection } from './imap-connection.js';
export interface FoundBounce {
  /** Our Message-ID (as the caller passed it) that the delivery report names. */
  messageId: string;
  recipient?: string;
  diagnostic?: string;
  folder: string;
  uid: number;
}

/** How far a folder was scanned: what is at or below `lastUid` was downloaded already. */
export interface ScanMark {
  /** The folder's UIDVALIDITY (a number that may exceed 2^53, as text); a new one starts over. */
  uidValidity: string;
  lastUid: number;
}

export interface BounceScan {
  bounces: FoundBounce[];
  /** Per folder path, how far it is scanned now: pass them to the next scan. */
  marks: Record<string, ScanMark>;
}
/** At most this many delivery reports are downloaded per folder and call. */
export const MAX_BOUNCE_CANDIDATES = 200;
/** Of a delivery report: its status part comes first, the returned message after it. */
export const MAX_BOUNCE_BYTES = 256 * 1024;

/** The value without a leading `type;` (e.g. `rfc822;`, `smtp;`), trimmed. */
function withoutTypePrefix(value: string, type: string): string {
  const trimmed = value.trimStart();
  return trimmed.slice(0, type.length + 1).toLowerCase() === `${type};`
    ? trimmed.slice(type.length + 1).trim()
    : trimmed.trim();
}

/** `rfc822; <a@b>` → `a@b`: the first token up to whitespace, `>` or `;`, when it holds a local part and a domain. */
function recipientAddress(value: string): string | undefined {
  let rest = withoutTypePrefix(value, 'rfc822');
  if (rest.startsWith('<')) rest = rest.slice(1);
  let end = 0;
  while (end < rest.length) {
    const c = rest[end];
    if (c === '>' || c === ';' || c === ' ' || c === '\t' || c === '\r' || c === '\n') break;
    end++;
  }
  const address = rest.slice(0, end);
  const at = address.indexOf('@');
  return at > 0 && at < address.length - 1 ? address : undefined;
}

/** Every token of the text that could be a Message-ID, normalised (split on whitespace and brackets). */
function messageIdCandidates(text: string): Set<string> {
  const candidates = new Set<string>();
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x20;
    const separator =
      c <= 0x20 || c === LESS_THAN || c === GREATER_THAN || c === 0x22 || c === 0x3b || c === 0x2c || c === 0x3a;
    if (!separator) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (i - start <= 998) candidates.add(text.slice(start, i));
      start = -1;
    }
  }
  return candidates;
}

const STATUS_CODE = /^\d\.\d{1,3}\.\d{1,3}/;

/**
 * Which of our Message-IDs a delivery report names, with the failed recipient and the
 * server's diagnostic from its message/delivery-status part when it has one.
 */
export function parseBounce(
  raw: string,
  ours: Map<string, string>,
): { messageId: string; recipient?: string; diagnostic?: string }[] {
  const fields = headerFields(raw);
  const contentTypes = fieldValues(fields, 'content-type').map((v) => v.trimStart().toLowerCase());
  const isReport =
    contentTypes.some((v) => v.startsWith('multipart/report') || v.startsWith('message/delivery-status')) ||
    fieldValues(fields, 'from').some((v) => {
      const from = v.toLowerCase();
      return from.includes('mailer-daemon') || from.includes('postmaster');
    });
  if (!isReport) return [];
  // one pass over the text, then a lookup per token: linear however many ids are ours
  const tokens = messageIdCandidates(raw);
  const mentioned = new Set<string>();
  for (const [norm, original] of ours) if (tokens.has(norm)) mentioned.add(original);
  if (mentioned.size === 0) return [];

  const firstOf = <T>(values: string[], pick: (value: string) => T | undefined): T | undefined => {
    for (const value of values) {
      const picked = pick(value);
      if (picked !== undefined) return picked;
    }
    return undefined;
  };
  const recipient =
    firstOf(fieldValues(fields, 'final-recipient'), recipientAddress) ??
    firstOf(fieldValues(fields, 'original-recipient'), recipientAddress);
  const diagnostic =
    firstOf(fieldValues(fields, 'diagnostic-code'), (v) => withoutTypePrefix(v, 'smtp') || undefined) ??
    firstOf(fieldValues(fields, 'status'), (v) => (STATUS_CODE.test(v.trim()) ? v.trim() : undefined));
  return [...mentioned].map((messageId) => ({
    messageId,
    ...(recipient ? { recipient } : {}),
    ...(diagnostic ? { diagnostic } : {}),
  }));
}

export async function scanBounces(
  connection: ImapConnection,
  ourMessageIds: string[],
  since: Date,
  marks: Record<string, ScanMark>,
): Promise<BounceScan> {
  const ours = new Map<string, string>();
  for (const id of ourMessageIds) {
    const norm = normalizeMessageId(id);
    if (norm) ours.set(norm, id);
  }
  const scan: BounceScan = { bounces: [], marks: { ...marks } };
  if (ours.size === 0) return scan;
  const folders = (await connection.cachedFolders()).filter((f) => f.role === 'inbox' || f.role === 'spam');
  for (const folder of folders) {
    await connection.inFolder(
      folder.path,
      async (client) => {
        const uidValidity = String(client.mailbox ? client.mailbox.uidValidity : '');
        const before = marks[folder.path];
        // a new UIDVALIDITY renumbered the folder: what was scanned is unknown again
        const lastUid = before && before.uidValidity === uidValidity ? before.lastUid : 0;
        if (client.mailbox && client.mailbox.exists === 0) return;
        const query = {
          since,
          deleted: false,
          ...(lastUid > 0 ? { uid: `${lastUid + 1}:*` } : {}),
          or: [
            { from: 'mailer-daemon' },
            { from: 'postmaster' },
            { header: { 'content-type': 'report-type=delivery-status' } },
            { header: { 'content-type': 'multipart/report' } },
          ],
        };
        const found = await connection.step('SEARCH', client, () => client.search(query, { uid: true }));
        // `n:*` always matches the newest message, even below n
        const fresh = (found || []).filter((uid) => uid > lastUid).sort((a, b) => a - b);
        const batch = fresh.slice(0, MAX_BOUNCE_CANDIDATES);
        if (batch.length === 0) {
          scan.marks[folder.path] = { uidValidity, lastUid };
          return;
        }
        const messages = await connection.step('FETCH', client, () =>
          client.fetchAll(batch.join(','), { uid: true, source: { maxLength: MAX_BOUNCE_BYTES } }, { uid: true }),
        );
        for (const msg of messages) {
          if (!msg.source) continue;
          for (const bounce of parseBounce(msg.source.toString('latin1'), ours)) {
            scan.bounces.push({ ...bounce, folder: folder.path, uid: msg.uid });
          }
        }
        // the rest (more than a batch arrived) is the next scan's
        scan.marks[folder.path] = { uidValidity, lastUid: batch[batch.length - 1] };
      },
      true,
    );
  }
  return scan;
}
