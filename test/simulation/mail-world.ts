/*
 * An in-memory mail world: the network of a simulation, faked exactly at the mail layer's
 * boundary (the `SmtpSender` and `ImapSession` interfaces of src/mail/). A send over a mailbox's
 * SMTP delivers at once into the recipient's folders — the inbox, or spam by the recipient's own
 * seeded spam rate — and each mailbox's IMAP session reads, flags and moves there. Every send is
 * written to a log with the simulated time it left, which is what the invariants judge: what
 * really went out, not what the database says went out.
 *
 * Deterministic: no timers, no wall clock; time is the simulation's clock and chance its seeded
 * random. Kept to the interfaces, so a change of `ImapSession` shows up here as a type error.
 */
import type { Clock } from '../../src/clock.js';
import type { Random } from '../../src/engine/random.js';
import { MailConnectionError, type MailServerConfig } from '../../src/mail/errors.js';
import {
  normalizeMessageId,
  WARMUP_FOLDER,
  type FindMessagesOptions,
  type FolderInfo,
  type FolderRole,
  type BounceScan,
  type FolderMessage,
  type FoundAnswer,
  type FoundBounce,
  type FoundMessage,
  type ImapSession,
  type ScanMark,
} from '../../src/mail/imap.js';
import type { OutgoingMail, SendResult, SmtpSender } from '../../src/mail/smtp.js';
import type { MailClients } from '../../src/mailboxes/mail-clients.js';

/** One message that left a mailbox's SMTP, as the world saw it. */
export interface WorldSend {
  at: Date;
  from: string;
  to: string;
  messageId: string;
  inReplyTo?: string;
  subject: string;
  /** Where it landed: the recipient's inbox or spam folder. */
  placement: 'inbox' | 'spam';
}

interface StoredMessage {
  uid: number;
  messageId: string;
  from: string;
  subject: string;
  inReplyTo?: string;
  references?: string[];
  seen: boolean;
  flagged: boolean;
}

interface Folder {
  path: string;
  role: FolderRole;
  specialUse?: string;
  uidNext: number;
  messages: StoredMessage[];
}

interface Account {
  email: string;
  /** Chance that mail to this account lands in spam. */
  spamRate: number;
  folders: Map<string, Folder>;
}

export interface MailWorld {
  /** A mailbox the world knows, with the share of its inbound mail its provider files as spam. */
  addAccount(email: string, spamRate: number): void;
  /** Everything sent, in the order it left. */
  readonly sends: readonly WorldSend[];
  /** The fake clients, for the engine (`EngineDeps.smtp`/`imap`) and the mailboxes service. */
  readonly clients: MailClients;
  /** Messages an account holds in a folder (for checks of the harness itself). */
  folderSize(email: string, path: string): number;
}

const HOST_PORT = { host: 'mail.sim', port: 0 };

function protocolError(side: 'smtp' | 'imap', message: string): MailConnectionError {
  return new MailConnectionError({ side, kind: 'protocol', message, ...HOST_PORT });
}

export function createMailWorld(clock: Clock, random: Random): MailWorld {
  const accounts = new Map<string, Account>();
  const sends: WorldSend[] = [];

  function accountOf(config: MailServerConfig, side: 'smtp' | 'imap'): Account {
    const account = accounts.get(config.username.toLowerCase());
    if (!account) {
      throw new MailConnectionError({
        side,
        kind: 'auth',
        message: `${side.toUpperCase()} login of ${config.username} refused: no such account`,
        ...HOST_PORT,
      });
    }
    return account;
  }

  function newFolder(path: string, role: FolderRole, specialUse?: string): Folder {
    return { path, role, specialUse, uidNext: 1, messages: [] };
  }

  function store(folder: Folder, message: Omit<StoredMessage, 'uid'>): number {
    const uid = folder.uidNext++;
    folder.messages.push({ ...message, uid });
    return uid;
  }

  function deliver(from: string, mail: OutgoingMail): WorldSend {
    const to = mail.to.address.toLowerCase();
    const recipient = accounts.get(to);
    if (!recipient) {
      throw new MailConnectionError({
        side: 'smtp',
        kind: 'rejected',
        permanent: true,
        message: `recipient ${to} refused: no such user`,
        ...HOST_PORT,
      });
    }
    // Mail to oneself (the round trip) is never spam; everything else by the recipient's rate.
    const spam = to !== from && random() < recipient.spamRate;
    const folder = recipient.folders.get(spam ? 'Junk' : 'INBOX');
    if (!folder) throw new Error(`account ${to} has no ${spam ? 'Junk' : 'INBOX'}`);
    store(folder, {
      messageId: normalizeMessageId(mail.messageId),
      from,
      subject: mail.subject,
      ...(mail.inReplyTo ? { inReplyTo: normalizeMessageId(mail.inReplyTo) } : {}),
      ...(mail.references ? { references: mail.references.map(normalizeMessageId) } : {}),
      seen: false,
      flagged: false,
    });
    const sent: WorldSend = {
      at: clock.now(),
      from,
      to,
      messageId: normalizeMessageId(mail.messageId),
      subject: mail.subject,
      placement: spam ? 'spam' : 'inbox',
      ...(mail.inReplyTo ? { inReplyTo: normalizeMessageId(mail.inReplyTo) } : {}),
    };
    sends.push(sent);
    return sent;
  }

  function smtp(config: MailServerConfig): SmtpSender {
    let closed = false;
    return {
      async send(mail: OutgoingMail): Promise<SendResult> {
        if (closed) throw protocolError('smtp', 'the SMTP sender was closed');
        const account = accountOf(config, 'smtp');
        if (mail.from.address.toLowerCase() !== account.email) {
          throw new MailConnectionError({
            side: 'smtp',
            kind: 'rejected',
            permanent: true,
            message: `${account.email} may not send as ${mail.from.address}`,
            ...HOST_PORT,
          });
        }
        deliver(account.email, mail);
        return { accepted: [mail.to.address], rejected: [], response: '250 2.0.0 queued' };
      },
      close() {
        closed = true;
      },
    };
  }

  /** Search order of `findMessages`: inbox, spam, promotions, then every other folder but sent/trash/drafts/Warmup. */
  function searchOrder(account: Account, include: readonly string[]): Folder[] {
    const rank: Partial<Record<FolderRole, number>> = { inbox: 0, spam: 1, promotions: 2 };
    const isWarmup = (f: Folder) => f.path.toLowerCase() === WARMUP_FOLDER.toLowerCase();
    const skipped = new Set<FolderRole>(['sent', 'trash', 'drafts']);
    const usual = [...account.folders.values()]
      .filter((f) => !skipped.has(f.role) && !isWarmup(f))
      .sort((a, b) => (rank[a.role] ?? 3) - (rank[b.role] ?? 3));
    const extra = include
      .map((name) => account.folders.get(name))
      .filter((f): f is Folder => f !== undefined && !usual.includes(f));
    return [...usual, ...extra];
  }

  function session(account: Account): ImapSession {
    let open = true;
    function folderOf(path: string): Folder {
      if (!open) throw protocolError('imap', 'the IMAP session was closed');
      const folder = account.folders.get(path);
      if (!folder) throw protocolError('imap', `no folder ${path}`);
      return folder;
    }
    function messageOf(path: string, uid: number): StoredMessage {
      const message = folderOf(path).messages.find((m) => m.uid === uid);
      if (!message) throw protocolError('imap', `no message ${uid} in ${path}`);
      return message;
    }
    return {
      async folders(): Promise<FolderInfo[]> {
        return [...account.folders.values()].map((f) => ({
          path: f.path,
          name: f.path,
          delimiter: '/',
          role: f.role,
          ...(f.specialUse ? { specialUse: f.specialUse } : {}),
          subscribed: true,
        }));
      },
      async findMessages(messageIds: string[], opts: FindMessagesOptions = {}): Promise<FoundMessage[]> {
        const order = searchOrder(account, opts.includeFolders ?? []);
        const found: FoundMessage[] = [];
        for (const asked of messageIds) {
          const id = normalizeMessageId(asked);
          for (const folder of order) {
            const copies = folder.messages.filter((m) => m.messageId === id);
            if (copies.length === 0) continue;
            for (const m of opts.everyCopy ? copies : copies.slice(0, 1)) {
              found.push({
                messageId: asked,
                folder: folder.path,
                role: folder.role,
                uid: m.uid,
                seen: m.seen,
                flagged: m.flagged,
                from: m.from,
                subject: m.subject,
                ...(m.inReplyTo ? { inReplyTo: m.inReplyTo } : {}),
                ...(m.references ? { references: m.references } : {}),
              });
            }
            break;
          }
        }
        return found;
      },
      async markSeen(path: string, uid: number): Promise<void> {
        messageOf(path, uid).seen = true;
      },
      async flag(path: string, uid: number): Promise<void> {
        messageOf(path, uid).flagged = true;
      },
      async move(path: string, uid: number, destination: string): Promise<number | undefined> {
        const message = messageOf(path, uid);
        const target = folderOf(destination);
        const source = folderOf(path);
        source.messages = source.messages.filter((m) => m !== message);
        return store(target, { ...message });
      },
      async ensureFolder(name: string): Promise<string> {
        if (!open) throw protocolError('imap', 'the IMAP session was closed');
        if (!account.folders.has(name)) account.folders.set(name, newFolder(name, 'other'));
        return name;
      },
      async append(path: string): Promise<number | undefined> {
        // Nothing in the engine stores raw mail in a simulation's folders.
        throw protocolError('imap', `append to ${path} is not simulated`);
      },
      async fetchRaw(path: string, uid: number): Promise<Buffer> {
        const m = messageOf(path, uid);
        return Buffer.from(`Message-ID: <${m.messageId}>\r\nSubject: ${m.subject}\r\n\r\n`);
      },
      async findBounces(): Promise<FoundBounce[]> {
        // Every recipient of the world exists: nothing bounces after acceptance.
        return [];
      },
      async scanBounces(_ids: string[], _since: Date, marks: Record<string, ScanMark>): Promise<BounceScan> {
        return { bounces: [], marks };
      },
      async findAnswers(): Promise<FoundAnswer[]> {
        // Nobody in the world writes by hand or answers automatically: every answer is the engine's own.
        return [];
      },
      async findOlderThan(): Promise<FolderMessage[]> {
        // The Warmup folder's retention is not simulated (its end-to-end test runs on Dovecot).
        return [];
      },
      async remove(path: string, uids: number[]): Promise<{ expunged: boolean }> {
        const folder = folderOf(path);
        folder.messages = folder.messages.filter((m) => !uids.includes(m.uid));
        return { expunged: true };
      },
      async close(): Promise<void> {
        open = false;
      },
    };
  }

  const clients: MailClients = {
    smtp,
    imap: async (config) => session(accountOf(config, 'imap')),
    verifySmtp: async (config) => {
      accountOf(config, 'smtp');
    },
    verifyImap: async (config) => {
      accountOf(config, 'imap');
    },
  };

  return {
    addAccount(email, spamRate) {
      const key = email.toLowerCase();
      accounts.set(key, {
        email: key,
        spamRate,
        folders: new Map([
          ['INBOX', newFolder('INBOX', 'inbox', '\\Inbox')],
          ['Junk', newFolder('Junk', 'spam', '\\Junk')],
          ['Sent', newFolder('Sent', 'sent', '\\Sent')],
        ]),
      });
    },
    sends,
    clients,
    folderSize(email, path) {
      return accounts.get(email.toLowerCase())?.folders.get(path)?.messages.length ?? 0;
    },
  };
}
