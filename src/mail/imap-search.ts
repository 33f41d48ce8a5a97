// Finding our messages by Message-ID in every folder a delivery can land in (or the owner can
// move it to), with the original ID a provider kept, or by thread for a reply that lost its ID.
import type { FetchMessageObject, SearchObject } from 'imapflow';
import {
  angleTokens,
  fieldValues,
  headerFields,
  MAX_HEADER_CHARS,
  normalizeMessageId,
  type HeaderField,
} from './headers.js';
import {
  type GmailCategory,
  type FolderRole,
  type FolderInfo,
  DELIVERY_ROLES,
  isWarmupFolder,
  hasFlag,
} from './imap-folders.js';
import { categorize } from './imap-gmail.js';
import { type ImapConnection, capable } from './imap-connection.js';
export interface FoundMessage {
  /** The Message-ID as the caller passed it. */
  messageId: string;
  folder: string;
  role: FolderRole;
  uid: number;
  seen: boolean;
  flagged: boolean;
  /** Sender address. */
  from: string;
  subject: string;
  inReplyTo?: string;
  references?: string[];
  /** Its `DKIM-Signature` and `Received` fields as a header block (bounded), for engine/sender-evidence.ts. */
  deliveryHeaders?: string;
  /**
   * How it was recognised: its own Message-ID, the original one a provider kept when it rewrote
   * it (Outlook.com's X-Microsoft-Original-Message-ID), or its thread headers (a reply whose
   * Message-ID was rewritten with nothing kept).
   */
  identifiedBy?: 'message-id' | 'original-message-id' | 'thread';
  /** What the receiving side wrote about it (Authentication-Results, spam reports), unparsed. */
  receiverHeaders?: HeaderField[];
  /** On a Gmail server (X-GM-EXT-1), of a message found in INBOX: the tab Gmail shows it in. */
  category?: GmailCategory;
  /** On a Gmail server: its labels as X-GM-LABELS reports them (e.g. \\Inbox, \\Important). */
  labels?: string[];
}

/**
 * A reply of ours that a provider may have given a new Message-ID, keeping nothing of the old one:
 * recognised as the message that answers `parentMessageId`, from `from`, with our own `Date`.
 */
export interface ThreadHint {
  /** Our Message-ID of the reply (what the result reports, as the caller passed it). */
  messageId: string;
  parentMessageId: string;
  /** The sender's address. */
  from: string;
  /** When we sent it: a person's own answer in the same thread carries another Date. */
  sentAt: Date;
}

/**
 * A reply found by its thread headers carries the Date we gave it (the sender writes the time it
 * records as sent): seconds apart at most, while a person's own answer in the thread is written later.
 */
export const THREAD_DATE_TOLERANCE_MS = 2 * 60_000;

/** Header fields where receiving servers state their verdict on a message. */
export const RECEIVER_HEADER_NAMES = [
  'authentication-results',
  'arc-authentication-results',
  'x-forefront-antispam-report',
  'x-ms-exchange-organization-scl',
  'x-microsoft-antispam',
  'x-spam-status',
  'x-spam-score',
] as const;

/** Header fields fetched with every message found: identification, thread, the sender's evidence and the receiver's verdicts. */
export const FOUND_HEADER_NAMES = [
  'references',
  'x-microsoft-original-message-id',
  // what the receiver saw of the sender: its DKIM selector and sending addresses (engine/sender-evidence.ts)
  'dkim-signature',
  'received',
  ...RECEIVER_HEADER_NAMES,
];

export interface FindMessagesOptions {
  /** Also search these folders (e.g. WARMUP_FOLDER), which are otherwise skipped. */
  includeFolders?: string[];
  /**
   * Of the messages looked for, those filed already: looked for only where a further delivery lands
   * (inbox, spam, promotions), as a second copy. Their filed copy is not fetched again, and a copy
   * the owner moved to a folder of their own stays where the owner put it.
   */
  filedAlready?: string[];
  /** Only messages that arrived on or after this day (IMAP SINCE). */
  since?: Date;
  /**
   * Report every copy of a message in the folder where it is found (delivered twice), not just
   * the first; the search still stops at that folder, so it costs no extra round trip.
   */
  everyCopy?: boolean;
  /**
   * Replies that may have lost their Message-ID on the way: also looked for by the message they
   * answer (In-Reply-To), their sender and their Date. Their `messageId` need not be in `messageIds`.
   */
  threads?: ThreadHint[];
}
/** Ids per SEARCH: one OR tree each, so a batch costs one round trip per folder. */
export const SEARCH_BATCH = 50;

/** Header text kept per found message: DKIM signatures and a relay path fit many times over. */
const MAX_DELIVERY_HEADER_CHARS = 32 * 1024;

/**
 * The SEARCHes that find our messages in one folder, each one OR tree of at most SEARCH_BATCH
 * ids: by Message-ID or the original one a provider kept (X-Microsoft-Original-Message-ID), and
 * replies by the Message-ID they answer.
 */
export function searchesFor(ids: string[], parents: string[]): SearchObject[][] {
  const searches: SearchObject[][] = [];
  for (let i = 0; i < ids.length; i += SEARCH_BATCH) {
    searches.push(
      ids
        .slice(i, i + SEARCH_BATCH)
        .flatMap((id): SearchObject[] => [
          { header: { 'message-id': id } },
          { header: { 'x-microsoft-original-message-id': id } },
        ]),
    );
  }
  for (let i = 0; i < parents.length; i += SEARCH_BATCH) {
    searches.push(parents.slice(i, i + SEARCH_BATCH).map((id): SearchObject => ({ header: { 'in-reply-to': id } })));
  }
  return searches;
}

/**
 * Which of the messages looked for this one is (SEARCH HEADER matches substrings): its own
 * Message-ID, else the original one a provider kept, else — for a reply whose Message-ID was
 * replaced — the message it answers, from our sender, dated when we sent it. A further copy of a
 * message found in this folder counts when `foundHere` is given.
 */
export function identify(
  msg: FetchMessageObject,
  fields: HeaderField[],
  remaining: Map<string, string>,
  byParent: Map<string, Array<ThreadHint & { norm: string }>>,
  foundHere: Map<string, string> | undefined,
): { norm: string; original: string; by: NonNullable<FoundMessage['identifiedBy']> } | undefined {
  const lookup = (norm: string): string | undefined => remaining.get(norm) ?? foundHere?.get(norm);
  const own = normalizeMessageId(msg.envelope?.messageId ?? '');
  const ownOriginal = own ? lookup(own) : undefined;
  if (ownOriginal !== undefined) return { norm: own, original: ownOriginal, by: 'message-id' };
  for (const value of fieldValues(fields, 'x-microsoft-original-message-id')) {
    for (const token of angleTokens(value)) {
      const norm = normalizeMessageId(token);
      const original = lookup(norm);
      if (original !== undefined) return { norm, original, by: 'original-message-id' };
    }
  }
  const parent = normalizeMessageId(msg.envelope?.inReplyTo ?? '');
  const from = (msg.envelope?.from?.[0]?.address ?? '').toLowerCase();
  const date = msg.envelope?.date ? new Date(msg.envelope.date).getTime() : NaN;
  for (const hint of (parent && byParent.get(parent)) || []) {
    if (hint.from.toLowerCase() !== from || !(Math.abs(date - hint.sentAt.getTime()) <= THREAD_DATE_TOLERANCE_MS)) {
      continue;
    }
    const original = lookup(hint.norm);
    if (original !== undefined) return { norm: hint.norm, original, by: 'thread' };
  }
  return undefined;
}

export function toFoundMessage(
  msg: FetchMessageObject,
  messageId: string,
  folder: FolderInfo,
  fields: HeaderField[] = [],
  identifiedBy: FoundMessage['identifiedBy'] = 'message-id',
): FoundMessage {
  const flags = msg.flags ?? new Set<string>();
  const envelope = msg.envelope;
  const found: FoundMessage = {
    messageId,
    folder: folder.path,
    role: folder.role,
    uid: msg.uid,
    seen: hasFlag(flags, '\\Seen'),
    flagged: hasFlag(flags, '\\Flagged'),
    from: envelope?.from?.[0]?.address ?? '',
    subject: envelope?.subject ?? '',
  };
  if (envelope?.inReplyTo) found.inReplyTo = envelope.inReplyTo.trim();
  const references = fieldValues(fields, 'references').flatMap(angleTokens);
  if (references.length) found.references = references;
  found.identifiedBy = identifiedBy;
  const receiverNames: ReadonlySet<string> = new Set(RECEIVER_HEADER_NAMES);
  found.receiverHeaders = fields.filter((field) => receiverNames.has(field.name));
  const delivery = fields
    .filter((field) => field.name === 'dkim-signature' || field.name === 'received')
    .map((field) => `${field.name}:${field.value}\r\n`)
    .join('');
  if (delivery) found.deliveryHeaders = delivery.slice(0, MAX_DELIVERY_HEADER_CHARS);
  return found;
}

export async function findMessages(
  connection: ImapConnection,
  messageIds: string[],
  opts: FindMessagesOptions = {},
): Promise<FoundMessage[]> {
  const remaining = new Map<string, string>();
  for (const id of messageIds) {
    const norm = normalizeMessageId(id);
    if (norm && !remaining.has(norm)) remaining.set(norm, id);
  }
  // replies that may have lost their Message-ID, by the Message-ID they answer
  const byParent = new Map<string, Array<ThreadHint & { norm: string }>>();
  for (const hint of opts.threads ?? []) {
    const norm = normalizeMessageId(hint.messageId);
    const parent = normalizeMessageId(hint.parentMessageId);
    if (!norm || !parent) continue;
    if (!remaining.has(norm)) remaining.set(norm, hint.messageId);
    byParent.set(parent, [...(byParent.get(parent) ?? []), { ...hint, norm }]);
  }
  if (remaining.size === 0) return [];

  const all = await connection.cachedFolders();
  const included = new Set((opts.includeFolders ?? []).map((p) => p.toLowerCase()));
  const rank: Record<FolderRole, number> = {
    inbox: 0,
    spam: 1,
    promotions: 2,
    other: 3,
    archive: 4,
    sent: 9,
    trash: 9,
    drafts: 9,
  };
  // a name matches with or without a namespace prefix ("Warmup" is "INBOX.Warmup" on some servers)
  const isIncluded = (f: FolderInfo): boolean =>
    included.has(f.path.toLowerCase()) || included.has(f.name.toLowerCase());
  const candidates = all.filter((f) => {
    if (isIncluded(f)) return true;
    if (rank[f.role] === 9 || isWarmupFolder(f)) return false;
    // virtual views of messages that live elsewhere (Gmail's Starred, Important)
    return f.specialUse !== '\\Flagged' && f.specialUse !== '\\Important';
  });
  // An \All folder (Gmail's [Gmail]/All Mail) holds every message of the other folders but spam
  // and trash: asked last, it only finds what is nowhere else (archived), never a second copy.
  const order = (f: FolderInfo): number =>
    f.specialUse === '\\All' ? 6 : isIncluded(f) && rank[f.role] >= 3 ? 5 : rank[f.role];
  candidates.sort((a, b) => order(a) - order(b));

  const filed = new Set((opts.filedAlready ?? []).map(normalizeMessageId));
  // Mail filed already is not looked for in Warmup or Gmail's All Mail (which show the filed copy),
  // nor in the owner's folders.
  const wantedIn = (folder: FolderInfo): Map<string, string> =>
    filed.size > 0 && !DELIVERY_ROLES.has(folder.role)
      ? new Map([...remaining].filter(([norm]) => !filed.has(norm)))
      : remaining;

  const found: FoundMessage[] = [];
  for (const folder of candidates) {
    if (remaining.size === 0) break;
    const wanted = wantedIn(folder);
    if (wanted.size === 0) continue;
    await connection.inFolder(
      folder.path,
      async (client) => {
        if (client.mailbox && client.mailbox.exists === 0) return;
        const gmail = capable(client, 'X-GM-EXT-1');
        const here: FoundMessage[] = [];
        // found in this folder: further copies here are reported too (everyCopy), not elsewhere
        const foundHere = new Map<string, string>();
        const searches = searchesFor(
          [...wanted.keys()],
          [...byParent.keys()].filter((parent) => byParent.get(parent)!.some((h) => wanted.has(h.norm))),
        );
        const seenUids = new Set<number>();
        for (const terms of searches) {
          // a \Deleted message is the owner's to expunge (or our own copy left behind by a move)
          const query = { deleted: false, or: terms, ...(opts.since ? { since: opts.since } : {}) };
          const hits = await connection.step('SEARCH', client, () => client.search(query, { uid: true }));
          const uids = (hits || []).filter((uid) => !seenUids.has(uid));
          for (const uid of uids) seenUids.add(uid);
          if (uids.length === 0) continue;
          const messages = await connection.step('FETCH', client, () =>
            client.fetchAll(
              uids.join(','),
              { uid: true, flags: true, envelope: true, headers: FOUND_HEADER_NAMES, labels: gmail },
              { uid: true },
            ),
          );
          for (const msg of messages) {
            const fields = msg.headers ? headerFields(msg.headers.toString('latin1').slice(0, MAX_HEADER_CHARS)) : [];
            const match = identify(msg, fields, wanted, byParent, opts.everyCopy ? foundHere : undefined);
            if (!match) continue; // a substring hit on another id (or a second copy)
            remaining.delete(match.norm);
            wanted.delete(match.norm);
            foundHere.set(match.norm, match.original);
            const message = toFoundMessage(msg, match.original, folder, fields, match.by);
            if (gmail && msg.labels) message.labels = [...msg.labels];
            here.push(message);
          }
        }
        if (gmail && folder.role === 'inbox') await categorize(connection, client, here);
        found.push(...here);
      },
      true,
    );
  }
  return found;
}
