// Reading a mailbox over IMAP (imapflow; this file and smtp.ts are the only ones that
// touch the mail libraries). One session = one connection, reused for a whole sync of
// a mailbox. Every server round trip has a deadline, so a server that hangs or drops
// fails the call with a MailConnectionError instead of hanging the engine.
import { ImapFlow } from 'imapflow';
import type {
  FetchMessageObject,
  ImapFlowError,
  ImapFlowOptions,
  ListResponse,
  MailboxLockObject,
  SearchObject,
} from 'imapflow';
import {
  MailConnectionError,
  abortedError,
  describeNetworkCode,
  formatSeconds,
  isNetworkCode,
  tlsFailureOf,
  unreachableError,
  withDeadline,
  type MailErrorKind,
  type MailServerConfig,
  withTokenRetry,
} from './errors.js';
import { automaticReplySign } from './auto-reply.js';
import {
  angleTokens,
  answeredMessageIds,
  fieldValues,
  headerBlock,
  headerFields,
  MAX_HEADER_CHARS,
  type HeaderField,
} from './headers.js';
import { resolveMailHost, tlsOptions, type ResolvedEndpoint } from './policy.js';

export { MailConnectionError, type MailServerConfig } from './errors.js';

/** Where processed warmup mail is filed; never searched unless asked for. */
export const WARMUP_FOLDER = 'Warmup';

/**
 * Gmail's inbox tabs. Over IMAP they are not folders: every tab's mail sits in INBOX, and only an
 * X-GM-RAW search (`category:promotions`) tells which tab a message is shown in. Gmail's own word
 * for Primary in searches is `personal`.
 */
export const GMAIL_CATEGORIES = ['primary', 'promotions', 'updates', 'social', 'forums'] as const;
export type GmailCategory = (typeof GMAIL_CATEGORIES)[number];

export type FolderRole = 'inbox' | 'spam' | 'promotions' | 'sent' | 'trash' | 'drafts' | 'archive' | 'other';

export interface FolderInfo {
  path: string;
  /** Last segment of the path. */
  name: string;
  delimiter: string;
  role: FolderRole;
  /** SPECIAL-USE flag as reported (or inferred by name), e.g. '\\Junk'. */
  specialUse?: string;
  subscribed: boolean;
}

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
const FOUND_HEADER_NAMES = [
  'references',
  'x-microsoft-original-message-id',
  // what the receiver saw of the sender: its DKIM selector and sending addresses (engine/sender-evidence.ts)
  'dkim-signature',
  'received',
  ...RECEIVER_HEADER_NAMES,
];

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

/** A message in the owner's folders that answers one of our messages (a person's or an automatic reply). */
export interface FoundAnswer {
  folder: string;
  role: FolderRole;
  uid: number;
  /** Its own Message-ID, with angle brackets ('' when it has none). */
  messageId: string;
  /**
   * The Message-IDs it had before a provider rewrote it (X-Microsoft-Original-Message-ID), with
   * angle brackets: a warmup reply of ours that Outlook.com renamed is still ours.
   */
  originalMessageIds: string[];
  /** Its Date, when it has a readable one (a reply of ours renamed with nothing kept is known by it). */
  date: Date | null;
  /** Which of our Message-IDs (as the caller passed them) it names, In-Reply-To first. */
  answers: string[];
  /** Sender address. */
  from: string;
  /** Why it is an automatic reply (e.g. `Auto-Submitted: auto-replied`); null: a person wrote it. */
  automatic: string | null;
}

/** A message of a folder, by the Message-IDs that identify it. */
export interface FolderMessage {
  uid: number;
  /** With angle brackets ('' when it has none). */
  messageId: string;
  /** The Message-IDs it answers (In-Reply-To, then References), with angle brackets. */
  answers: string[];
}

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

export interface ImapOptions {
  /** Deadline of the greeting, of connecting and of every command (default 10 s). */
  timeoutMs?: number;
  /** Aborting it drops the connection at once: every pending and later call fails with kind 'aborted'. */
  signal?: AbortSignal;
  /**
   * What the login says about the client (IMAP ID): a mail program's own fields, or null for
   * `ID NIL`. Default null: never the IMAP library's name, which would mark every login alike.
   */
  clientId?: Record<string, string> | null;
}

export interface ImapSession {
  /** Selectable folders with their role. */
  folders(): Promise<FolderInfo[]>;
  /**
   * Looks for messages by Message-ID in INBOX, spam, promotions and every other folder
   * except sent, trash, drafts and WARMUP_FOLDER. A message is reported from the first folder
   * in that order where it is found: once, or each copy there with `everyCopy`. \Deleted
   * messages are never reported (the owner's to expunge, or our copy left behind by a move).
   */
  findMessages(messageIds: string[], opts?: FindMessagesOptions): Promise<FoundMessage[]>;
  markSeen(folder: string, uid: number): Promise<void>;
  flag(folder: string, uid: number): Promise<void>;
  /**
   * Moves a message; resolves to its UID in the destination when the server says (UIDPLUS).
   * Without MOVE: COPY, \Deleted on this message, UID EXPUNGE of it with UIDPLUS, else it stays
   * \Deleted; never a plain EXPUNGE (which would take the owner's \Deleted messages too).
   */
  move(folder: string, uid: number, destination: string): Promise<number | undefined>;
  /** Creates (and subscribes) the folder unless it exists; resolves to its path. */
  ensureFolder(name: string): Promise<string>;
  /** Stores a message (e.g. a copy in Sent); resolves to its UID when the server says. */
  append(folder: string, raw: Buffer | string, flags?: string[], date?: Date): Promise<number | undefined>;
  fetchRaw(folder: string, uid: number): Promise<Buffer>;
  /** Delivery status notifications in INBOX and spam since `since` that name one of our Message-IDs. */
  findBounces(ourMessageIds: string[], since: Date): Promise<FoundBounce[]>;
  /**
   * `findBounces` that downloads each report once: only what lies above each folder's mark is
   * fetched, and the marks after this scan come back. (Added for the engine's scan state.)
   */
  scanBounces(ourMessageIds: string[], since: Date, marks: Record<string, ScanMark>): Promise<BounceScan>;
  /**
   * Messages in INBOX, spam and promotions since `since`, not \Deleted, whose In-Reply-To or
   * References name one of our Message-IDs, at most `limit` per folder (oldest first), each with
   * whether it is an automatic reply. Reads a bounded start of each (MAX_HEADER_CHARS).
   */
  findAnswers(ourMessageIds: string[], since: Date, limit: number): Promise<FoundAnswer[]>;
  /** Messages of `folder` that arrived before `before` and are not \Deleted, at most `limit`, oldest first. */
  findOlderThan(folder: string, before: Date, limit: number): Promise<FolderMessage[]>;
  /**
   * Removes exactly these messages: \Deleted, then UID EXPUNGE of these UIDs when the server has
   * UIDPLUS. Without UIDPLUS they stay \Deleted (`expunged: false`): a plain EXPUNGE would take
   * the owner's \Deleted messages with them.
   */
  remove(folder: string, uids: number[]): Promise<{ expunged: boolean }>;
  /** Logs out (or drops the connection if the server does not answer). Never throws. */
  close(): Promise<void>;
  /**
   * The address the session's connection went to (the host name resolved and checked): the mail
   * server the mailbox actually lives on, whatever its name. Undefined before a connection.
   */
  serverAddress?(): string | undefined;
  // Gmail's extensions (X-GM-EXT-1). Optional: a session without them is a server without them.
  /** Whether the server announced X-GM-EXT-1 after login. */
  isGmail?(): Promise<boolean>;
  /**
   * Takes a message of INBOX from Gmail's `category` tab to Primary, the nearest a client can over
   * IMAP: it removes the tab's label (`CATEGORY_PROMOTIONS`…, the name Gmail's API gives it). Gmail
   * documents no IMAP way to change a tab, so the result is checked: true only when a fresh
   * X-GM-RAW search no longer finds the message in that tab. A server that refuses the change
   * answers false too. Nothing is done (false) on a server without X-GM-EXT-1.
   */
  promote?(folder: string, uid: number, category: GmailCategory): Promise<boolean>;
  /** Gmail's Important marker (`+X-GM-LABELS (\\Important)`); false, with nothing done, without X-GM-EXT-1. */
  markImportant?(folder: string, uid: number): Promise<boolean>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Ids per SEARCH: one OR tree each, so a batch costs one round trip per folder. */
const SEARCH_BATCH = 50;
/**
 * Messages of INBOX whose Gmail tab is asked per round of X-GM-RAW searches: one search per tab
 * other than Primary (four) for up to this many, so a sync costs a few searches, not one per
 * message (a mailbox receives a few dozen warmup emails a day).
 */
const CATEGORY_BATCH = 100;
/** At most this many delivery reports are downloaded per folder and call. */
const MAX_BOUNCE_CANDIDATES = 200;
/** The most of one message that is ever downloaded (warmup mail is a few KiB). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Of a delivery report: its status part comes first, the returned message after it. */
const MAX_BOUNCE_BYTES = 256 * 1024;
/**
 * What a server may send in one go. imapflow's defaults (1 GiB literals, 2 GiB responses)
 * let one hostile server exhaust the process's memory; partial fetches never need more than
 * MAX_MESSAGE_BYTES, so a server that sends more than twice that breaks its own connection.
 */
const RESPONSE_LIMITS = {
  maxLineLength: 1024 * 1024,
  maxLiteralSize: 2 * MAX_MESSAGE_BYTES,
  maxResponseSize: 4 * MAX_MESSAGE_BYTES,
  maxResponseTokens: 100_000,
} as const;

const SPAM_NAMES = new Set([
  'spam',
  'junk',
  'bulk',
  'junk e-mail',
  'junk email',
  'junk mail',
  'bulk mail',
  'spam mail',
]);
const PROMOTION_NAMES = new Set(['promotions', 'social', 'updates', 'forums']);
const SENT_NAMES = new Set(['sent', 'sent items', 'sent mail', 'sent messages']);
const TRASH_NAMES = new Set(['trash', 'deleted items', 'deleted messages', 'bin']);
const DRAFT_NAMES = new Set(['drafts', 'draft']);
const ARCHIVE_NAMES = new Set(['archive', 'archives', 'all mail']);
/** Where a delivery lands: the only folders a second copy of mail filed already is looked for in. */
export const DELIVERY_ROLES: ReadonlySet<FolderRole> = new Set(['inbox', 'spam', 'promotions']);

/** The role of a folder from its SPECIAL-USE flag, else from its name. */
export function classifyFolder(folder: {
  path: string;
  name?: string;
  delimiter?: string;
  specialUse?: string;
}): FolderRole {
  const path = folder.path;
  const leaf = (folder.name ?? lastSegment(path, folder.delimiter)).trim().toLowerCase();
  const full = path.toLowerCase();
  switch (folder.specialUse) {
    case '\\Inbox':
      return 'inbox';
    case '\\Junk':
      return 'spam';
    case '\\Sent':
      return 'sent';
    case '\\Trash':
      return 'trash';
    case '\\Drafts':
      return 'drafts';
    case '\\Archive':
    case '\\All':
      return 'archive';
  }
  if (full === 'inbox') return 'inbox';
  if (SPAM_NAMES.has(leaf) || full === '[gmail]/spam' || full === '[google mail]/spam') return 'spam';
  if (PROMOTION_NAMES.has(leaf) || /categor(y|ies)[/.]/.test(full)) return 'promotions';
  if (SENT_NAMES.has(leaf)) return 'sent';
  if (TRASH_NAMES.has(leaf)) return 'trash';
  if (DRAFT_NAMES.has(leaf)) return 'drafts';
  if (ARCHIVE_NAMES.has(leaf)) return 'archive';
  return 'other';
}

function lastSegment(path: string, delimiter: string | undefined): string {
  if (!delimiter) return path;
  const parts = path.split(delimiter);
  return parts[parts.length - 1] ?? path;
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

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;

function isWarmupFolder(folder: FolderInfo): boolean {
  return folder.name.toLowerCase() === WARMUP_FOLDER.toLowerCase();
}

/** Connects and logs in, then logs out. Throws MailConnectionError (side 'imap'). */
export async function verifyImap(config: MailServerConfig, opts: ImapOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const endpoint = await resolveEndpoint(config, timeoutMs);
  await withTokenRetry(
    config,
    async (accessToken) => {
      const client = new ImapFlow({
        ...clientOptions(config, endpoint, timeoutMs, accessToken),
        clientInfo: clientInfoOf(null),
        verifyOnly: true,
      });
      client.on('error', () => undefined);
      try {
        await withDeadline(client.connect(), timeoutMs, () => {
          // After a greeting it is a mail server that is slow to log in, and saying so gives
          // nothing away about the network; before one, the answer is the generic one.
          const greeted = client.greeting !== undefined;
          client.close();
          return greeted
            ? timeoutError(config, timeoutMs, 'login')
            : unreachableError('imap', config, `no greeting and login within ${formatSeconds(timeoutMs)}`, 'ETIMEOUT');
        });
      } catch (err) {
        throw toMailError(err, config, timeoutMs, 'connect');
      } finally {
        if (!client.isClosed) client.close();
      }
    },
    'imap',
  );
}

/** Opens one logged-in connection. Throws MailConnectionError when that fails. */
export async function openImapSession(config: MailServerConfig, opts: ImapOptions = {}): Promise<ImapSession> {
  const session = new Session(config, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.signal, opts.clientId ?? null);
  await session.connect();
  return session;
}

/** The checked address of the configured host, or the generic "could not connect" error. */
async function resolveEndpoint(config: MailServerConfig, timeoutMs: number): Promise<ResolvedEndpoint> {
  try {
    return await withDeadline(resolveMailHost(config.host, config.policy), timeoutMs, () => new Error('DNS timeout'));
  } catch (err) {
    throw unreachableError('imap', config, err instanceof Error ? err.message : String(err), errorCode(err));
  }
}

function clientOptions(
  config: MailServerConfig,
  endpoint: ResolvedEndpoint,
  timeoutMs: number,
  accessToken: string | undefined,
): ImapFlowOptions {
  return {
    // the address that passed the policy check; the name stays for the certificate check
    host: endpoint.address,
    ...(endpoint.servername ? { servername: endpoint.servername } : {}),
    port: config.port,
    secure: config.secure,
    // without implicit TLS, STARTTLS is a must (a stripped STARTTLS fails instead of sending
    // the password in the clear), unless the operator allowed plaintext for this host
    ...(!config.secure && !endpoint.plaintextAllowed ? { doSTARTTLS: true } : {}),
    // an OAuth mailbox logs in with AUTHENTICATE XOAUTH2 and its access token
    auth:
      accessToken !== undefined
        ? { user: config.username, accessToken }
        : { user: config.username, pass: config.password },
    tls: tlsOptions(config.policy),
    ...RESPONSE_LIMITS,
    logger: false,
    // Commands are issued one at a time by the engine; no IDLE in between (which would
    // cost two extra round trips per command).
    disableAutoIdle: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    // Inactivity between two calls of a session; every command has its own deadline.
    // A connection the server or this timer dropped is reopened by the next call.
    socketTimeout: Math.max(120_000, timeoutMs * 2),
  };
}

/**
 * imapflow's ID fields with its own name, version, vendor and support URL blanked (blank fields
 * are left out of the command), then the client's: nothing at all gives `ID NIL`.
 */
function clientInfoOf(clientId: Record<string, string> | null): ImapFlowOptions['clientInfo'] {
  return { name: '', version: '', vendor: '', 'support-url': '', ...(clientId ?? {}) };
}

class Session implements ImapSession {
  private client: ImapFlow | null = null;
  private connecting: Promise<ImapFlow> | null = null;
  private address: string | undefined;
  private folderCache: FolderInfo[] | null = null;
  private closed = false;
  private readonly config: MailServerConfig;
  private readonly timeoutMs: number;
  private readonly signal: AbortSignal | undefined;

  private readonly clientId: Record<string, string> | null;

  constructor(
    config: MailServerConfig,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    clientId: Record<string, string> | null,
  ) {
    this.config = config;
    this.timeoutMs = timeoutMs;
    this.signal = signal;
    this.clientId = clientId;
  }

  /** Gives `client`'s call up when the session's signal fires: the socket goes, the call fails at once. */
  private abortWith(client: ImapFlow) {
    return {
      signal: this.signal,
      onAbort: () => {
        client.close();
        return abortedError('imap', this.config);
      },
    };
  }

  async connect(): Promise<ImapFlow> {
    if (this.closed) throw new Error('IMAP session is closed');
    if (this.client?.usable) return this.client;
    if (!this.connecting) {
      this.connecting = this.open().finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  private async open(): Promise<ImapFlow> {
    this.client?.close();
    this.client = null;
    this.folderCache = null;
    if (this.signal?.aborted) throw abortedError('imap', this.config);
    // resolved and checked on every (re)connection: the name may point elsewhere by now
    const endpoint = await resolveEndpoint(this.config, this.timeoutMs);
    const client = await withTokenRetry(this.config, (accessToken) => this.login(endpoint, accessToken), 'imap');
    this.client = client;
    this.address = endpoint.address;
    return client;
  }

  serverAddress(): string | undefined {
    return this.address;
  }

  private async login(endpoint: ResolvedEndpoint, accessToken: string | undefined): Promise<ImapFlow> {
    const client = new ImapFlow({
      ...clientOptions(this.config, endpoint, this.timeoutMs, accessToken),
      clientInfo: clientInfoOf(this.clientId),
    });
    client.on('error', () => undefined);
    try {
      await withDeadline(
        client.connect(),
        this.timeoutMs,
        () => {
          client.close();
          return unreachableError(
            'imap',
            this.config,
            `no greeting and login within ${formatSeconds(this.timeoutMs)}`,
            'ETIMEOUT',
          );
        },
        this.abortWith(client),
      );
    } catch (err) {
      if (!client.isClosed) client.close();
      throw toMailError(err, this.config, this.timeoutMs, 'connect');
    }
    return client;
  }

  /** One server round trip (or a few) under the session deadline. */
  private async step<T>(what: string, client: ImapFlow, op: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(
        op(),
        this.timeoutMs,
        () => {
          // a half-answered command leaves the connection unusable: drop it, the next
          // call reconnects
          client.close();
          return timeoutError(this.config, this.timeoutMs, what);
        },
        this.abortWith(client),
      );
    } catch (err) {
      throw toMailError(err, this.config, this.timeoutMs, what);
    }
  }

  /** Runs `op` with `path` selected (and refreshed with NOOP when `fresh`). */
  private async inFolder<T>(path: string, op: (client: ImapFlow) => Promise<T>, fresh = false): Promise<T> {
    const client = await this.connect();
    const lock: MailboxLockObject = await this.step(`SELECT ${path}`, client, () => client.getMailboxLock(path));
    try {
      // Dovecot (and others) may not report a delivery to an already selected mailbox
      // until the client asks: NOOP makes the server sync before the SEARCH.
      if (fresh) await this.step('NOOP', client, () => client.noop());
      return await op(client);
    } finally {
      lock.release();
    }
  }

  async folders(): Promise<FolderInfo[]> {
    const client = await this.connect();
    const list: ListResponse[] = await this.step('LIST', client, () => client.list());
    const folders = list
      .filter((f) => !hasFlag(f.flags, '\\Noselect') && !hasFlag(f.flags, '\\NonExistent'))
      .map((f): FolderInfo => {
        const info: FolderInfo = {
          path: f.path,
          name: f.name,
          delimiter: f.delimiter,
          role: classifyFolder(f),
          subscribed: f.subscribed,
        };
        if (f.specialUse) info.specialUse = f.specialUse;
        // Gmail's view of its Important label, which imapflow does not name as a special use
        else if (hasFlag(f.flags, '\\Important')) info.specialUse = '\\Important';
        return info;
      });
    this.folderCache = folders;
    return folders;
  }

  private async cachedFolders(): Promise<FolderInfo[]> {
    return this.folderCache ?? this.folders();
  }

  async findMessages(messageIds: string[], opts: FindMessagesOptions = {}): Promise<FoundMessage[]> {
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

    const all = await this.cachedFolders();
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
      await this.inFolder(
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
            const hits = await this.step('SEARCH', client, () => client.search(query, { uid: true }));
            const uids = (hits || []).filter((uid) => !seenUids.has(uid));
            for (const uid of uids) seenUids.add(uid);
            if (uids.length === 0) continue;
            const messages = await this.step('FETCH', client, () =>
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
          if (gmail && folder.role === 'inbox') await this.categorize(client, here);
          found.push(...here);
        },
        true,
      );
    }
    return found;
  }

  /**
   * Gmail's tab of each message found in INBOX: one X-GM-RAW `category:` search per tab other than
   * Primary, limited to the messages' UIDs; a message in none of them is in Primary.
   */
  private async categorize(client: ImapFlow, messages: FoundMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += CATEGORY_BATCH) {
      const batch = messages.slice(i, i + CATEGORY_BATCH);
      const uids = batch.map((message) => message.uid).join(',');
      const tabs = new Map<number, GmailCategory>();
      for (const category of GMAIL_CATEGORIES) {
        if (category === 'primary') continue;
        const hits = await this.step('SEARCH', client, () =>
          client.search({ uid: uids, gmraw: `category:${category}` }, { uid: true }),
        );
        for (const uid of hits || []) if (!tabs.has(uid)) tabs.set(uid, category);
      }
      for (const message of batch) message.category = tabs.get(message.uid) ?? 'primary';
    }
  }

  async isGmail(): Promise<boolean> {
    return capable(await this.connect(), 'X-GM-EXT-1');
  }

  async promote(folder: string, uid: number, category: GmailCategory): Promise<boolean> {
    if (category === 'primary') return false;
    return this.inFolder(folder, async (client) => {
      if (!capable(client, 'X-GM-EXT-1')) return false;
      const range = String(uid);
      const label = `CATEGORY_${category.toUpperCase()}`;
      const stored = await this.step('STORE', client, () =>
        client.messageFlagsRemove(range, [label], { uid: true, useLabels: true }),
      );
      if (!stored) return false;
      // it took effect only if the message is still here and no longer in the tab
      const present = await this.step('SEARCH', client, () => client.search({ uid: range }, { uid: true }));
      if (!present || !present.includes(uid)) return false;
      const inTab = await this.step('SEARCH', client, () =>
        client.search({ uid: range, gmraw: `category:${category}` }, { uid: true }),
      );
      return Array.isArray(inTab) && inTab.length === 0;
    });
  }

  async markImportant(folder: string, uid: number): Promise<boolean> {
    return this.inFolder(folder, async (client) => {
      if (!capable(client, 'X-GM-EXT-1')) return false;
      const ok = await this.step('STORE', client, () =>
        client.messageFlagsAdd(String(uid), ['\\Important'], { uid: true, useLabels: true }),
      );
      if (!ok) throw this.refused(`STORE +X-GM-LABELS (\\Important) on UID ${uid} in ${folder}`);
      return true;
    });
  }

  async markSeen(folder: string, uid: number): Promise<void> {
    await this.addFlag(folder, uid, '\\Seen');
  }

  async flag(folder: string, uid: number): Promise<void> {
    await this.addFlag(folder, uid, '\\Flagged');
  }

  private async addFlag(folder: string, uid: number, flag: string): Promise<void> {
    await this.inFolder(folder, async (client) => {
      const ok = await this.step('STORE', client, () => client.messageFlagsAdd(String(uid), [flag], { uid: true }));
      if (!ok) throw this.refused(`STORE ${flag} on UID ${uid} in ${folder}`);
    });
  }

  /**
   * MOVE where the server has it. Without MOVE: COPY, then \Deleted on this one message, then
   * UID EXPUNGE of its UID only when the server has UIDPLUS. Never a plain EXPUNGE: it removes
   * every \Deleted message of the folder, the owner's too (imapflow's own fallback does that).
   * Without UIDPLUS the source copy stays behind, marked \Deleted, for the owner's client or the
   * server to expunge; every search of the engine skips \Deleted messages.
   */
  async move(folder: string, uid: number, destination: string): Promise<number | undefined> {
    const source = (await this.cachedFolders()).find((f) => f.path === folder);
    return this.inFolder(folder, async (client) => {
      // On Gmail a message leaves All Mail only for the Trash: filing one found there (archived)
      // gives it the destination's label, and it stays in All Mail as every message does.
      if (source?.specialUse === '\\All' && capable(client, 'X-GM-EXT-1')) {
        const copied = await this.step('COPY', client, () =>
          client.messageCopy(String(uid), destination, { uid: true }),
        );
        if (!copied) throw this.refused(`COPY of UID ${uid} from ${folder} to ${destination}`);
        return copied.uidMap?.get(uid);
      }
      if (!capable(client, 'MOVE')) {
        const copied = await this.step('COPY', client, () =>
          client.messageCopy(String(uid), destination, { uid: true }),
        );
        if (!copied) throw this.refused(`COPY of UID ${uid} from ${folder} to ${destination}`);
        await this.removeSelected(client, folder, [uid]);
        return copied.uidMap?.get(uid);
      }
      const res = await this.step('MOVE', client, () => client.messageMove(String(uid), destination, { uid: true }));
      if (!res) throw this.refused(`MOVE of UID ${uid} from ${folder} to ${destination}`);
      return res.uidMap?.get(uid);
    });
  }

  async remove(folder: string, uids: number[]): Promise<{ expunged: boolean }> {
    if (uids.length === 0) return { expunged: capable(await this.connect(), 'UIDPLUS') };
    return this.inFolder(folder, (client) => this.removeSelected(client, folder, uids));
  }

  /** \Deleted on exactly these UIDs of the selected folder, then UID EXPUNGE of them (UIDPLUS only). */
  private async removeSelected(client: ImapFlow, folder: string, uids: number[]): Promise<{ expunged: boolean }> {
    const range = uids.join(',');
    if (capable(client, 'UIDPLUS')) {
      // with UIDPLUS announced imapflow sends STORE +FLAGS (\Deleted) and UID EXPUNGE of exactly this set
      const done = await this.step('UID EXPUNGE', client, () => client.messageDelete(range, { uid: true }));
      if (!done) throw this.refused(`UID EXPUNGE of UID ${range} in ${folder}`);
      return { expunged: true };
    }
    const flagged = await this.step('STORE', client, () => client.messageFlagsAdd(range, ['\\Deleted'], { uid: true }));
    if (!flagged) throw this.refused(`STORE \\Deleted on UID ${range} in ${folder}`);
    return { expunged: false };
  }

  /** imapflow answers some refused commands with `false` instead of an error. */
  private refused(what: string): MailConnectionError {
    return new MailConnectionError({
      side: 'imap',
      kind: 'protocol',
      message: `IMAP server ${endpoint(this.config)} refused ${what}`,
      host: this.config.host,
      port: this.config.port,
    });
  }

  async ensureFolder(name: string): Promise<string> {
    const existing = (await this.folders()).find(
      (f) => f.path === name || (name.toUpperCase() === 'INBOX' && f.role === 'inbox'),
    );
    if (existing) return existing.path;
    const client = await this.connect();
    const res = await this.step('CREATE', client, () => client.mailboxCreate(name));
    this.folderCache = null;
    return res.path;
  }

  async append(folder: string, raw: Buffer | string, flags: string[] = [], date?: Date): Promise<number | undefined> {
    const client = await this.connect();
    const res = await this.step('APPEND', client, () => client.append(folder, raw, flags, date));
    if (!res) throw this.refused(`APPEND to ${folder}`);
    return res.uid;
  }

  async fetchRaw(folder: string, uid: number): Promise<Buffer> {
    return this.inFolder(folder, async (client) => {
      const msg = await this.step('FETCH', client, () =>
        client.fetchOne(String(uid), { source: { maxLength: MAX_MESSAGE_BYTES } }, { uid: true }),
      );
      if (!msg || !msg.source) throw this.refused(`FETCH of UID ${uid} in ${folder} (no such message)`);
      return msg.source;
    });
  }

  async findBounces(ourMessageIds: string[], since: Date): Promise<FoundBounce[]> {
    return (await this.scanBounces(ourMessageIds, since, {})).bounces;
  }

  async scanBounces(ourMessageIds: string[], since: Date, marks: Record<string, ScanMark>): Promise<BounceScan> {
    const ours = new Map<string, string>();
    for (const id of ourMessageIds) {
      const norm = normalizeMessageId(id);
      if (norm) ours.set(norm, id);
    }
    const scan: BounceScan = { bounces: [], marks: { ...marks } };
    if (ours.size === 0) return scan;
    const folders = (await this.cachedFolders()).filter((f) => f.role === 'inbox' || f.role === 'spam');
    for (const folder of folders) {
      await this.inFolder(
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
          const found = await this.step('SEARCH', client, () => client.search(query, { uid: true }));
          // `n:*` always matches the newest message, even below n
          const fresh = (found || []).filter((uid) => uid > lastUid).sort((a, b) => a - b);
          const batch = fresh.slice(0, MAX_BOUNCE_CANDIDATES);
          if (batch.length === 0) {
            scan.marks[folder.path] = { uidValidity, lastUid };
            return;
          }
          const messages = await this.step('FETCH', client, () =>
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

  async findAnswers(ourMessageIds: string[], since: Date, limit: number): Promise<FoundAnswer[]> {
    const ours = new Map<string, string>();
    for (const id of ourMessageIds) {
      const norm = normalizeMessageId(id);
      if (norm) ours.set(norm, id);
    }
    if (ours.size === 0) return [];
    const folders = (await this.cachedFolders()).filter(
      (f) => (f.role === 'inbox' || f.role === 'spam' || f.role === 'promotions') && !isWarmupFolder(f),
    );
    const ids = [...ours.keys()];
    const answers: FoundAnswer[] = [];
    for (const folder of folders) {
      await this.inFolder(
        folder.path,
        async (client) => {
          if (client.mailbox && client.mailbox.exists === 0) return;
          const uids = new Set<number>();
          for (let i = 0; i < ids.length; i += SEARCH_BATCH) {
            const batch = ids.slice(i, i + SEARCH_BATCH);
            const query = {
              since,
              deleted: false,
              or: batch.flatMap((id): SearchObject[] => [
                { header: { 'in-reply-to': id } },
                { header: { references: id } },
              ]),
            };
            const found = await this.step('SEARCH', client, () => client.search(query, { uid: true }));
            for (const uid of found || []) uids.add(uid);
          }
          const oldest = [...uids].sort((a, b) => a - b).slice(0, limit);
          if (oldest.length === 0) return;
          const messages = await this.step('FETCH', client, () =>
            client.fetchAll(
              oldest.join(','),
              { uid: true, envelope: true, source: { maxLength: MAX_HEADER_CHARS } },
              { uid: true },
            ),
          );
          for (const msg of messages) {
            if (!msg.source) continue;
            const fields = headerFields(headerBlock(msg.source.toString('latin1')));
            const named: string[] = [];
            for (const token of answeredMessageIds(fields)) {
              const original = ours.get(normalizeMessageId(token));
              if (original !== undefined && !named.includes(original)) named.push(original);
            }
            // SEARCH HEADER matches substrings: only a real In-Reply-To/References counts
            if (named.length === 0) continue;
            const ownId = normalizeMessageId(msg.envelope?.messageId ?? '');
            const date = msg.envelope?.date ? new Date(msg.envelope.date) : null;
            answers.push({
              folder: folder.path,
              role: folder.role,
              uid: msg.uid,
              messageId: ownId ? `<${ownId}>` : '',
              originalMessageIds: fieldValues(fields, 'x-microsoft-original-message-id')
                .flatMap(angleTokens)
                .map((token) => `<${normalizeMessageId(token)}>`),
              date: date && Number.isFinite(date.getTime()) ? date : null,
              answers: named,
              from: msg.envelope?.from?.[0]?.address ?? '',
              automatic: automaticReplySign(fields, msg.envelope?.subject),
            });
          }
        },
        true,
      );
    }
    return answers;
  }

  async findOlderThan(folder: string, before: Date, limit: number): Promise<FolderMessage[]> {
    const wanted = folder.toLowerCase();
    const match = (await this.cachedFolders()).find(
      (f) => f.path.toLowerCase() === wanted || f.name.toLowerCase() === wanted,
    );
    if (!match) return [];
    return this.inFolder(match.path, async (client) => {
      if (client.mailbox && client.mailbox.exists === 0) return [];
      const found = await this.step('SEARCH', client, () => client.search({ before, deleted: false }, { uid: true }));
      const oldest = (found || []).sort((a, b) => a - b).slice(0, limit);
      if (oldest.length === 0) return [];
      const messages = await this.step('FETCH', client, () =>
        client.fetchAll(
          oldest.join(','),
          { uid: true, envelope: true, headers: ['in-reply-to', 'references'] },
          { uid: true },
        ),
      );
      return messages.map((msg): FolderMessage => {
        const ownId = normalizeMessageId(msg.envelope?.messageId ?? '');
        const fields = msg.headers ? headerFields(headerBlock(msg.headers.toString('latin1'))) : [];
        return {
          uid: msg.uid,
          messageId: ownId ? `<${ownId}>` : '',
          answers: answeredMessageIds(fields).map((token) => `<${normalizeMessageId(token)}>`),
        };
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (!client || client.isClosed) return;
    try {
      // a stopping engine does not wait for a goodbye
      if (this.signal?.aborted) return;
      await withDeadline(client.logout(), Math.min(this.timeoutMs, 2_000), () => new Error('logout timeout'));
    } catch {
      // the server did not say goodbye; the socket goes anyway
    } finally {
      if (!client.isClosed) client.close();
    }
  }
}

/** Whether the server announced this capability (MOVE, UIDPLUS…) after login. */
function capable(client: ImapFlow, name: string): boolean {
  return client.capabilities.has(name);
}

function hasFlag(flags: Set<string>, flag: string): boolean {
  for (const f of flags) if (f.toLowerCase() === flag.toLowerCase()) return true;
  return false;
}

/** Header text kept per found message: DKIM signatures and a relay path fit many times over. */
const MAX_DELIVERY_HEADER_CHARS = 32 * 1024;

/**
 * The SEARCHes that find our messages in one folder, each one OR tree of at most SEARCH_BATCH
 * ids: by Message-ID or the original one a provider kept (X-Microsoft-Original-Message-ID), and
 * replies by the Message-ID they answer.
 */
function searchesFor(ids: string[], parents: string[]): SearchObject[][] {
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
function identify(
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

function toFoundMessage(
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

// The parsers below read what a server (or whoever sent the mail) wrote, so each runs in one
// pass over its input: header lines are unfolded and compared by prefix, and the only
// regexes left are anchored with no two quantifiers that can match the same text.

/** Message-IDs of a raw "References:" header block (folded or not). */
export function parseReferences(headerBlock: string): string[] {
  const value = fieldValues(headerFields(headerBlock), 'references')[0];
  return value === undefined ? [] : angleTokens(value);
}

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

function endpoint(config: MailServerConfig): string {
  return `${config.host}:${config.port}`;
}

function timeoutError(config: MailServerConfig, timeoutMs: number, what: string): MailConnectionError {
  return new MailConnectionError({
    side: 'imap',
    kind: 'timeout',
    message:
      what === 'connect'
        ? `IMAP server ${endpoint(config)} did not answer within ${formatSeconds(timeoutMs)}`
        : `IMAP server ${endpoint(config)} did not answer ${what.split(' ')[0]} within ${formatSeconds(timeoutMs)}`,
    host: config.host,
    port: config.port,
    code: 'ETIMEOUT',
    secret: config.password,
    username: config.username,
  });
}

const TIMEOUT_CODES = new Set([
  'CONNECT_TIMEOUT',
  'GREETING_TIMEOUT',
  'UPGRADE_TIMEOUT',
  'ETIMEOUT',
  'ETIMEDOUT',
  'LockTimeout',
]);
const CLOSED_CODES = new Set([
  'NoConnection',
  'EConnectionClosed',
  'ClosedAfterConnectText',
  'ClosedAfterConnectTLS',
  'StateLogout',
]);

/** Maps whatever imapflow threw onto the one error contract. */
function toMailError(err: unknown, config: MailServerConfig, timeoutMs: number, what: string): MailConnectionError {
  if (err instanceof MailConnectionError) return err;
  const e = (err ?? {}) as ImapFlowError;
  const code = e.code;
  const where = endpoint(config);
  // imapflow's `response` is the tagged line ("4 NO [AUTHENTICATIONFAILED] Authentication
  // failed."): keep it without the tag as serverResponse, and the bare text for the message
  const line = (typeof e.response === 'string' && e.response.trim()) || undefined;
  const response = line?.replace(/^\S+\s+(?=(NO|BAD|BYE)\b)/i, '') ?? (e.responseText?.trim() || undefined);
  const text =
    e.responseText?.trim() || response?.replace(/^(NO|BAD|BYE)\s+/i, '').replace(/^\[[^\]]*\]\s*/, '') || undefined;
  const make = (kind: MailErrorKind, message: string): MailConnectionError =>
    new MailConnectionError({
      side: 'imap',
      kind,
      message,
      host: config.host,
      port: config.port,
      secret: config.password,
      username: config.username,
      ...(code ? { code } : {}),
      ...(response ? { serverResponse: response } : {}),
    });

  if (e.authenticationFailed) {
    return make('auth', `IMAP login refused by ${where}: ${text ?? e.serverResponseCode ?? 'authentication failed'}`);
  }
  // While connecting, anything but a refused login or a refused STARTTLS of a server that
  // greeted as a mail server (refused, silent, closed, a foreign banner, a failed
  // implicit-TLS handshake) gets one answer that says nothing about the port.
  if (what === 'connect' && !(e.tlsFailed && !config.secure)) {
    return unreachableError(
      'imap',
      config,
      `${code ?? 'error'}: ${line ?? e.message ?? String(err)}`,
      code,
      tlsFailureOf(err),
    );
  }
  if (code && TIMEOUT_CODES.has(code)) return timeoutError(config, timeoutMs, what);
  if (e.tlsFailed) {
    // OpenSSL's own text goes to the log only; the tenant reads what it means
    const tlsFailure = tlsFailureOf(err);
    const failure = new MailConnectionError({
      side: 'imap',
      kind: 'connection',
      message:
        tlsFailure === 'untrusted_certificate'
          ? `Cannot connect to IMAP server ${where}: its TLS certificate is not trusted`
          : /STARTTLS/i.test(e.message ?? '')
            ? `Cannot connect to IMAP server ${where}: the server does not offer STARTTLS`
            : `Cannot connect to IMAP server ${where}: the TLS handshake failed`,
      host: config.host,
      port: config.port,
      secret: config.password,
      username: config.username,
      secure: config.secure,
      reason: `${code ?? 'TLS'}: ${e.message ?? ''}`,
      ...(code ? { code } : {}),
      ...(tlsFailure ? { tlsFailure } : {}),
    });
    return failure;
  }
  if (isNetworkCode(code)) {
    const phrase = describeNetworkCode(code) ?? e.message;
    return what === 'connect'
      ? make('connection', `Cannot connect to IMAP server ${where}: ${phrase}`)
      : make('connection', `IMAP server ${where} dropped the connection during ${what.split(' ')[0]}: ${phrase}`);
  }
  if (code && CLOSED_CODES.has(code)) {
    return what === 'connect'
      ? make('connection', `Cannot connect to IMAP server ${where}: the server closed the connection`)
      : make('connection', `IMAP server ${where} closed the connection during ${what.split(' ')[0]}`);
  }
  if (e.responseStatus === 'NO' || e.responseStatus === 'BAD') {
    return make('protocol', `IMAP server ${where} refused ${what}: ${text ?? e.message}`);
  }
  return make(
    'protocol',
    `IMAP server ${where} failed during ${what.split(' ')[0]}: ${text ?? e.message ?? String(err)}`,
  );
}

/** The code of a refused host or a failed lookup (EREFUSEDHOST, ENOTFOUND…), which says whether retrying can help. */
function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
