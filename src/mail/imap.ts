// Reading a mailbox over IMAP (imapflow; this file and smtp.ts are the only ones that
// touch the mail libraries). One session = one connection, reused for a whole sync of
// a mailbox. Every server round trip has a deadline, so a server that hangs or drops
// fails the call with a MailConnectionError instead of hanging the engine.
import { ImapFlow } from 'imapflow';
import type { FetchMessageObject, ImapFlowError, ImapFlowOptions, ListResponse, MailboxLockObject } from 'imapflow';
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
import { resolveMailHost, tlsOptions, type ResolvedEndpoint } from './policy.js';

export { MailConnectionError, type MailServerConfig } from './errors.js';

/** Where processed warmup mail is filed; never searched unless asked for. */
export const WARMUP_FOLDER = 'Warmup';

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
}

export interface FoundBounce {
  /** Our Message-ID (as the caller passed it) that the delivery report names. */
  messageId: string;
  recipient?: string;
  diagnostic?: string;
  folder: string;
  uid: number;
}

export interface FindMessagesOptions {
  /** Also search these folders (e.g. WARMUP_FOLDER), which are otherwise skipped. */
  includeFolders?: string[];
  /** Only messages that arrived on or after this day (IMAP SINCE). */
  since?: Date;
  /**
   * Report every copy of a message in the folder where it is found (delivered twice), not just
   * the first; the search still stops at that folder, so it costs no extra round trip.
   */
  everyCopy?: boolean;
}

export interface ImapOptions {
  /** Deadline of the greeting, of connecting and of every command (default 10 s). */
  timeoutMs?: number;
  /** Aborting it drops the connection at once: every pending and later call fails with kind 'aborted'. */
  signal?: AbortSignal;
}

export interface ImapSession {
  /** Selectable folders with their role. */
  folders(): Promise<FolderInfo[]>;
  /**
   * Looks for messages by Message-ID in INBOX, spam, promotions and every other folder
   * except sent, trash, drafts and WARMUP_FOLDER. A message is reported from the first folder
   * in that order where it is found: once, or each copy there with `everyCopy`.
   */
  findMessages(messageIds: string[], opts?: FindMessagesOptions): Promise<FoundMessage[]>;
  markSeen(folder: string, uid: number): Promise<void>;
  flag(folder: string, uid: number): Promise<void>;
  /** Moves a message; resolves to its UID in the destination when the server says (UIDPLUS). */
  move(folder: string, uid: number, destination: string): Promise<number | undefined>;
  /** Creates (and subscribes) the folder unless it exists; resolves to its path. */
  ensureFolder(name: string): Promise<string>;
  /** Stores a message (e.g. a copy in Sent); resolves to its UID when the server says. */
  append(folder: string, raw: Buffer | string, flags?: string[], date?: Date): Promise<number | undefined>;
  fetchRaw(folder: string, uid: number): Promise<Buffer>;
  /** Delivery status notifications in INBOX and spam since `since` that name one of our Message-IDs. */
  findBounces(ourMessageIds: string[], since: Date): Promise<FoundBounce[]>;
  /** Logs out (or drops the connection if the server does not answer). Never throws. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Ids per SEARCH: one OR tree each, so a batch costs one round trip per folder. */
const SEARCH_BATCH = 50;
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
      const client = new ImapFlow({ ...clientOptions(config, endpoint, timeoutMs, accessToken), verifyOnly: true });
      client.on('error', () => undefined);
      try {
        await withDeadline(client.connect(), timeoutMs, () => {
          client.close();
          return unreachableError(
            'imap',
            config,
            `no greeting and login within ${formatSeconds(timeoutMs)}`,
            'ETIMEOUT',
          );
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
  const session = new Session(config, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.signal);
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

class Session implements ImapSession {
  private client: ImapFlow | null = null;
  private connecting: Promise<ImapFlow> | null = null;
  private folderCache: FolderInfo[] | null = null;
  private closed = false;
  private readonly config: MailServerConfig;
  private readonly timeoutMs: number;
  private readonly signal: AbortSignal | undefined;

  constructor(config: MailServerConfig, timeoutMs: number, signal: AbortSignal | undefined) {
    this.config = config;
    this.timeoutMs = timeoutMs;
    this.signal = signal;
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
    return client;
  }

  private async login(endpoint: ResolvedEndpoint, accessToken: string | undefined): Promise<ImapFlow> {
    const client = new ImapFlow(clientOptions(this.config, endpoint, this.timeoutMs, accessToken));
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
    const order = (f: FolderInfo): number => (isIncluded(f) && rank[f.role] >= 3 ? 5 : rank[f.role]);
    candidates.sort((a, b) => order(a) - order(b));

    const found: FoundMessage[] = [];
    for (const folder of candidates) {
      if (remaining.size === 0) break;
      await this.inFolder(
        folder.path,
        async (client) => {
          if (client.mailbox && client.mailbox.exists === 0) return;
          const ids = [...remaining.keys()];
          // found in this folder: further copies here are reported too (everyCopy), not elsewhere
          const foundHere = new Map<string, string>();
          for (let i = 0; i < ids.length; i += SEARCH_BATCH) {
            const batch = ids.slice(i, i + SEARCH_BATCH);
            const query = {
              or: batch.map((id) => ({ header: { 'message-id': id } })),
              ...(opts.since ? { since: opts.since } : {}),
            };
            const uids = await this.step('SEARCH', client, () => client.search(query, { uid: true }));
            if (!uids || uids.length === 0) continue;
            const messages = await this.step('FETCH', client, () =>
              client.fetchAll(
                uids.join(','),
                { uid: true, flags: true, envelope: true, headers: ['references'] },
                { uid: true },
              ),
            );
            for (const msg of messages) {
              const norm = normalizeMessageId(msg.envelope?.messageId ?? '');
              const copy = opts.everyCopy ? foundHere.get(norm) : undefined;
              const original = remaining.get(norm) ?? copy;
              if (original === undefined) continue; // a substring hit on another id (or a second copy)
              remaining.delete(norm);
              foundHere.set(norm, original);
              found.push(toFoundMessage(msg, original, folder));
            }
          }
        },
        true,
      );
    }
    return found;
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

  async move(folder: string, uid: number, destination: string): Promise<number | undefined> {
    return this.inFolder(folder, async (client) => {
      const res = await this.step('MOVE', client, () => client.messageMove(String(uid), destination, { uid: true }));
      if (!res) throw this.refused(`MOVE of UID ${uid} from ${folder} to ${destination}`);
      return res.uidMap?.get(uid);
    });
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
    const ours = new Map<string, string>();
    for (const id of ourMessageIds) {
      const norm = normalizeMessageId(id);
      if (norm) ours.set(norm, id);
    }
    if (ours.size === 0) return [];
    const folders = (await this.cachedFolders()).filter((f) => f.role === 'inbox' || f.role === 'spam');
    const bounces: FoundBounce[] = [];
    for (const folder of folders) {
      await this.inFolder(
        folder.path,
        async (client) => {
          if (client.mailbox && client.mailbox.exists === 0) return;
          const query = {
            since,
            or: [
              { from: 'mailer-daemon' },
              { from: 'postmaster' },
              { header: { 'content-type': 'report-type=delivery-status' } },
              { header: { 'content-type': 'multipart/report' } },
            ],
          };
          const uids = await this.step('SEARCH', client, () => client.search(query, { uid: true }));
          if (!uids || uids.length === 0) return;
          const newest = uids.slice(-MAX_BOUNCE_CANDIDATES);
          const messages = await this.step('FETCH', client, () =>
            client.fetchAll(newest.join(','), { uid: true, source: { maxLength: MAX_BOUNCE_BYTES } }, { uid: true }),
          );
          for (const msg of messages) {
            if (!msg.source) continue;
            for (const bounce of parseBounce(msg.source.toString('latin1'), ours)) {
              bounces.push({ ...bounce, folder: folder.path, uid: msg.uid });
            }
          }
        },
        true,
      );
    }
    return bounces;
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

function hasFlag(flags: Set<string>, flag: string): boolean {
  for (const f of flags) if (f.toLowerCase() === flag.toLowerCase()) return true;
  return false;
}

function toFoundMessage(msg: FetchMessageObject, messageId: string, folder: FolderInfo): FoundMessage {
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
  const references = msg.headers ? parseReferences(msg.headers.toString('utf8')) : [];
  if (references.length) found.references = references;
  return found;
}

// The parsers below read what a server (or whoever sent the mail) wrote, so each runs in one
// pass over its input: header lines are unfolded and compared by prefix, and the only
// regexes left are anchored with no two quantifiers that can match the same text.

/** Header fields of a raw message (or header block), unfolded: name in lower case, value as is. */
function headerFields(raw: string): { name: string; value: string }[] {
  const fields: { name: string; value: string }[] = [];
  // the field a continuation line belongs to; none after a line that is not a field
  let current: { name: string; value: string } | undefined;
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
function fieldValues(fields: { name: string; value: string }[], name: string): string[] {
  return fields.filter((f) => f.name === name).map((f) => f.value);
}

/** `<...>` tokens of a header value, in order. */
function angleTokens(value: string): string[] {
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
