// Reading a mailbox over IMAP: the session the engine uses, and what the rest of the code imports
// (src/mail is the only folder that touches the mail libraries). One session = one connection
// (imap-connection.ts), reused for a whole sync of a mailbox; searching, bounces, answers and
// Gmail's extensions each live in their own imap-*.ts. Moves, flags and removals are here.
import type { ImapFlow } from 'imapflow';
import type { MailServerConfig } from './errors.js';
import { findAnswers, findOlderThan, type FolderMessage, type FoundAnswer } from './imap-answers.js';
import { scanBounces, type BounceScan, type FoundBounce, type ScanMark } from './imap-bounces.js';
import { capable, DEFAULT_TIMEOUT_MS, ImapConnection, MAX_MESSAGE_BYTES, type ImapOptions } from './imap-connection.js';
import type { FolderInfo, GmailCategory } from './imap-folders.js';
import { isGmail, markImportant, promote } from './imap-gmail.js';
import { findMessages, type FindMessagesOptions, type FoundMessage } from './imap-search.js';
import { fetchPart, listParts, type FolderPage, type MessagePart } from './imap-parts.js';

export { MailConnectionError, type MailServerConfig } from './errors.js';
export { normalizeMessageId, parseReferences } from './headers.js';
export type { FolderMessage, FoundAnswer } from './imap-answers.js';
export type { FolderPage, MessagePart, PartsMessage } from './imap-parts.js';
export { parseBounce, type BounceScan, type FoundBounce, type ScanMark } from './imap-bounces.js';
export { MAX_MESSAGE_BYTES, verifyImap, type ImapOptions } from './imap-connection.js';
export {
  classifyFolder,
  DELIVERY_ROLES,
  GMAIL_CATEGORIES,
  WARMUP_FOLDER,
  type FolderInfo,
  type FolderRole,
  type GmailCategory,
} from './imap-folders.js';
export {
  RECEIVER_HEADER_NAMES,
  THREAD_DATE_TOLERANCE_MS,
  type FindMessagesOptions,
  type FoundMessage,
  type ThreadHint,
} from './imap-search.js';

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
  /**
   * Messages of `folder` above UID `afterUid`, not \Deleted, oldest first, at most `limit`, each by
   * its size, subject and MIME parts; nothing is downloaded and \Seen is untouched. (Added for
   * reading DMARC reports; optional, as a simulated session may not read attachments.)
   */
  listParts?(folder: string, afterUid: number, limit: number): Promise<FolderPage>;
  /** One part of a message, decoded; null when it is larger than `maxBytes` (never downloaded whole). */
  fetchPart?(folder: string, uid: number, part: MessagePart, maxBytes: number): Promise<Buffer | null>;
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

/** Opens one logged-in connection. Throws MailConnectionError when that fails. */
export async function openImapSession(config: MailServerConfig, opts: ImapOptions = {}): Promise<ImapSession> {
  const session = new Session(config, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.signal, opts.clientId ?? null);
  await session.connect();
  return session;
}

class Session implements ImapSession {
  private readonly connection: ImapConnection;

  constructor(
    config: MailServerConfig,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    clientId: Record<string, string> | null,
  ) {
    this.connection = new ImapConnection(config, timeoutMs, signal, clientId);
  }

  async connect(): Promise<void> {
    await this.connection.connect();
  }

  async folders(): Promise<FolderInfo[]> {
    return this.connection.folders();
  }

  async findMessages(messageIds: string[], opts: FindMessagesOptions = {}): Promise<FoundMessage[]> {
    return findMessages(this.connection, messageIds, opts);
  }

  serverAddress(): string | undefined {
    return this.connection.serverAddress();
  }

  async isGmail(): Promise<boolean> {
    return isGmail(this.connection);
  }

  async promote(folder: string, uid: number, category: GmailCategory): Promise<boolean> {
    return promote(this.connection, folder, uid, category);
  }

  async markImportant(folder: string, uid: number): Promise<boolean> {
    return markImportant(this.connection, folder, uid);
  }

  async markSeen(folder: string, uid: number): Promise<void> {
    await this.addFlag(folder, uid, '\\Seen');
  }

  async flag(folder: string, uid: number): Promise<void> {
    await this.addFlag(folder, uid, '\\Flagged');
  }

  private async addFlag(folder: string, uid: number, flag: string): Promise<void> {
    await this.connection.inFolder(folder, async (client) => {
      const ok = await this.connection.step('STORE', client, () =>
        client.messageFlagsAdd(String(uid), [flag], { uid: true }),
      );
      if (!ok) throw this.connection.refused(`STORE ${flag} on UID ${uid} in ${folder}`);
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
    const source = (await this.connection.cachedFolders()).find((f) => f.path === folder);
    return this.connection.inFolder(folder, async (client) => {
      // On Gmail a message leaves All Mail only for the Trash: filing one found there (archived)
      // gives it the destination's label, and it stays in All Mail as every message does.
      if (source?.specialUse === '\\All' && capable(client, 'X-GM-EXT-1')) {
        const copied = await this.connection.step('COPY', client, () =>
          client.messageCopy(String(uid), destination, { uid: true }),
        );
        if (!copied) throw this.connection.refused(`COPY of UID ${uid} from ${folder} to ${destination}`);
        return copied.uidMap?.get(uid);
      }
      if (!capable(client, 'MOVE')) {
        const copied = await this.connection.step('COPY', client, () =>
          client.messageCopy(String(uid), destination, { uid: true }),
        );
        if (!copied) throw this.connection.refused(`COPY of UID ${uid} from ${folder} to ${destination}`);
        await this.removeSelected(client, folder, [uid]);
        return copied.uidMap?.get(uid);
      }
      const res = await this.connection.step('MOVE', client, () =>
        client.messageMove(String(uid), destination, { uid: true }),
      );
      if (!res) throw this.connection.refused(`MOVE of UID ${uid} from ${folder} to ${destination}`);
      return res.uidMap?.get(uid);
    });
  }

  async remove(folder: string, uids: number[]): Promise<{ expunged: boolean }> {
    if (uids.length === 0) return { expunged: capable(await this.connection.connect(), 'UIDPLUS') };
    return this.connection.inFolder(folder, (client) => this.removeSelected(client, folder, uids));
  }

  /** \Deleted on exactly these UIDs of the selected folder, then UID EXPUNGE of them (UIDPLUS only). */
  private async removeSelected(client: ImapFlow, folder: string, uids: number[]): Promise<{ expunged: boolean }> {
    const range = uids.join(',');
    if (capable(client, 'UIDPLUS')) {
      // with UIDPLUS announced imapflow sends STORE +FLAGS (\Deleted) and UID EXPUNGE of exactly this set
      const done = await this.connection.step('UID EXPUNGE', client, () => client.messageDelete(range, { uid: true }));
      if (!done) throw this.connection.refused(`UID EXPUNGE of UID ${range} in ${folder}`);
      return { expunged: true };
    }
    const flagged = await this.connection.step('STORE', client, () =>
      client.messageFlagsAdd(range, ['\\Deleted'], { uid: true }),
    );
    if (!flagged) throw this.connection.refused(`STORE \\Deleted on UID ${range} in ${folder}`);
    return { expunged: false };
  }

  async ensureFolder(name: string): Promise<string> {
    const existing = (await this.folders()).find(
      (f) => f.path === name || (name.toUpperCase() === 'INBOX' && f.role === 'inbox'),
    );
    if (existing) return existing.path;
    const client = await this.connection.connect();
    const res = await this.connection.step('CREATE', client, () => client.mailboxCreate(name));
    this.connection.forgetFolders();
    return res.path;
  }

  async append(folder: string, raw: Buffer | string, flags: string[] = [], date?: Date): Promise<number | undefined> {
    const client = await this.connection.connect();
    const res = await this.connection.step('APPEND', client, () => client.append(folder, raw, flags, date));
    if (!res) throw this.connection.refused(`APPEND to ${folder}`);
    return res.uid;
  }

  async fetchRaw(folder: string, uid: number): Promise<Buffer> {
    return this.connection.inFolder(folder, async (client) => {
      const msg = await this.connection.step('FETCH', client, () =>
        client.fetchOne(String(uid), { source: { maxLength: MAX_MESSAGE_BYTES } }, { uid: true }),
      );
      if (!msg || !msg.source) throw this.connection.refused(`FETCH of UID ${uid} in ${folder} (no such message)`);
      return msg.source;
    });
  }

  async findBounces(ourMessageIds: string[], since: Date): Promise<FoundBounce[]> {
    return (await this.scanBounces(ourMessageIds, since, {})).bounces;
  }

  async scanBounces(ourMessageIds: string[], since: Date, marks: Record<string, ScanMark>): Promise<BounceScan> {
    return scanBounces(this.connection, ourMessageIds, since, marks);
  }

  async findAnswers(ourMessageIds: string[], since: Date, limit: number): Promise<FoundAnswer[]> {
    return findAnswers(this.connection, ourMessageIds, since, limit);
  }

  async findOlderThan(folder: string, before: Date, limit: number): Promise<FolderMessage[]> {
    return findOlderThan(this.connection, folder, before, limit);
  }

  async listParts(folder: string, afterUid: number, limit: number): Promise<FolderPage> {
    return listParts(this.connection, folder, afterUid, limit);
  }

  async fetchPart(folder: string, uid: number, part: MessagePart, maxBytes: number): Promise<Buffer | null> {
    return fetchPart(this.connection, folder, uid, part, maxBytes);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
