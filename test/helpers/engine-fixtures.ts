// Rows and fakes for unit tests of the engine's mail work (sender, reader): mailboxes and
// warmup messages written straight into a test database, an in-memory SMTP server and an
// in-memory IMAP account that behave like the mail layer's contract. End-to-end suites use
// the real mail stack instead.
import type { Kysely } from 'kysely';
import type { Database, MailboxRow, WarmupMessageRow } from '../../src/db/schema.js';
import { newId } from '../../src/db/ids.js';
import type { MailboxStatus } from '../../src/mailboxes/mailboxes.schemas.js';
import type { Dialect } from '../../src/db/database.js';
import { MailConnectionError, type MailServerConfig } from '../../src/mail/errors.js';
import type {
  FindMessagesOptions,
  FolderInfo,
  FolderRole,
  FoundBounce,
  FoundMessage,
  ImapSession,
  ScanMark,
} from '../../src/mail/imap.js';
import { DELIVERY_ROLES } from '../../src/mail/imap.js';
import type { OutgoingMail, SendResult, SmtpSender } from '../../src/mail/smtp.js';
import type { EngineDeps } from '../../src/engine/engine-deps.js';
import { seededRandom } from '../../src/engine/random.js';
import { fixedClock } from '../../src/clock.js';
import { DEFAULT_TEMPLATES } from '../../src/templates/default-templates.js';
import { silentLogger } from './engine.js';

export async function insertWorkspace(db: Kysely<Database>, name = 'test'): Promise<string> {
  const id = newId('ws');
  await db
    .insertInto('workspaces')
    .values({ id, name, created_at: new Date(0).toISOString() })
    .execute();
  return id;
}

export interface MailboxFixture {
  email: string;
  name?: string | null;
  status?: MailboxStatus;
  warmup?: Record<string, unknown>;
  /** When its round trip succeeded; default: long ago. null: not proven, out of the pool. */
  provenAt?: string | null;
}

export async function insertMailbox(
  db: Kysely<Database>,
  workspaceId: string,
  fixture: MailboxFixture,
): Promise<MailboxRow> {
  const server = (port: number) => JSON.stringify({ host: '127.0.0.1', port, secure: false, username: fixture.email });
  return db
    .insertInto('mailboxes')
    .values({
      id: newId('mbx'),
      workspace_id: workspaceId,
      email: fixture.email,
      email_normalized: fixture.email.toLowerCase(),
      name: fixture.name ?? null,
      provider: 'custom',
      connection_type: 'imap',
      status: fixture.status ?? 'active',
      imap: server(143),
      smtp: server(587),
      password_encrypted: 'not-used',
      warmup: JSON.stringify({ language: 'en', timezone: 'UTC', replyRate: 30, ...fixture.warmup }),
      // proven, as a pool member is; a test of the pool's trust rules passes provenAt: null
      proven_at: fixture.provenAt === undefined ? new Date(0).toISOString() : fixture.provenAt,
      created_at: new Date(0).toISOString(),
      updated_at: new Date(0).toISOString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A planned day of a mailbox: its budget for the send bounds (the sender sends nothing on a day without one). */
export async function insertPlan(
  db: Kysely<Database>,
  mailbox: MailboxRow,
  day: string,
  target: number,
): Promise<void> {
  await db
    .insertInto('mailbox_plans')
    .values({
      mailbox_id: mailbox.id,
      day,
      warmup_day: 1,
      target,
      planned: target,
      created_at: new Date(0).toISOString(),
    })
    .onConflict((oc) => oc.columns(['mailbox_id', 'day']).doUpdateSet({ target }))
    .execute();
}

export interface MessageFixture {
  sender: MailboxRow;
  recipient: MailboxRow;
  dueAt: Date;
  kind?: 'initial' | 'reply';
  turn?: number;
  parent?: WarmupMessageRow;
  status?: string;
  sentAt?: Date;
  foundAt?: Date;
  engageAfter?: Date;
  subject?: string;
  body?: string;
}

let messageCounter = 0;

export async function insertMessage(db: Kysely<Database>, fixture: MessageFixture): Promise<WarmupMessageRow> {
  messageCounter += 1;
  const domain = fixture.sender.email.split('@')[1];
  const messageId = `<m${messageCounter}.${Math.random().toString(36).slice(2, 10)}@${domain}>`;
  return db
    .insertInto('warmup_messages')
    .values({
      id: newId('msg'),
      message_id: messageId,
      thread_id: fixture.parent?.thread_id ?? messageId,
      sender_mailbox_id: fixture.sender.id,
      recipient_mailbox_id: fixture.recipient.id,
      kind: fixture.kind ?? (fixture.parent ? 'reply' : 'initial'),
      turn: fixture.turn ?? (fixture.parent ? fixture.parent.turn + 1 : 1),
      parent_message_id: fixture.parent?.message_id ?? null,
      subject: fixture.subject ?? null,
      body_text: fixture.body ?? null,
      body_html: fixture.body ? `<p>${fixture.body}</p>` : null,
      plan_day: fixture.dueAt.toISOString().slice(0, 10),
      due_at: fixture.dueAt.toISOString(),
      status: fixture.status ?? 'planned',
      sent_at: fixture.sentAt?.toISOString() ?? null,
      found_at: fixture.foundAt?.toISOString() ?? null,
      engage_after: fixture.engageAfter?.toISOString() ?? null,
      created_at: fixture.dueAt.toISOString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type DeliveryDay = Partial<Record<'sent' | 'inbox' | 'spam' | 'bounced' | 'lost', number>>;

let deliveryCounter = 0;

/**
 * One day of a sender's mail to one receiver, twice: as the sender's rollup (what the statistics
 * read) and as the messages themselves with their outcome (what reputation and the health guard
 * weigh). `sent` messages go out at 10:00 UTC; the first `inbox`, `spam`, `bounced` and `lost` of
 * them met that fate, the rest are still on their way.
 */
export async function insertDeliveryDay(
  db: Kysely<Database>,
  { senderId, receiverId, day, ...values }: DeliveryDay & { senderId: string; receiverId: string; day: string },
): Promise<void> {
  const { workspace_id } = await db
    .selectFrom('mailboxes')
    .select('workspace_id')
    .where('id', '=', senderId)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('daily_stats')
    .values({ mailbox_id: senderId, workspace_id, day, ...values })
    .onConflict((oc) =>
      oc.columns(['mailbox_id', 'day']).doUpdateSet((eb) => ({
        sent: eb('daily_stats.sent', '+', values.sent ?? 0),
        inbox: eb('daily_stats.inbox', '+', values.inbox ?? 0),
        spam: eb('daily_stats.spam', '+', values.spam ?? 0),
        bounced: eb('daily_stats.bounced', '+', values.bounced ?? 0),
        lost: eb('daily_stats.lost', '+', values.lost ?? 0),
      })),
    )
    .execute();
  const outcomes = (['inbox', 'spam', 'bounced', 'lost'] as const).flatMap((outcome) =>
    Array<'inbox' | 'spam' | 'bounced' | 'lost'>(values[outcome] ?? 0).fill(outcome),
  );
  const sentAt = `${day}T10:00:00.000Z`;
  const rows = Array.from({ length: values.sent ?? 0 }, () => {
    const outcome = outcomes.shift() ?? 'pending';
    deliveryCounter += 1;
    const messageId = `<d${deliveryCounter}.${Math.random().toString(36).slice(2, 10)}@fixture.test>`;
    const placement = outcome === 'inbox' || outcome === 'spam' ? outcome : null;
    return {
      id: newId('msg'),
      message_id: messageId,
      thread_id: messageId,
      sender_mailbox_id: senderId,
      recipient_mailbox_id: receiverId,
      kind: 'initial',
      turn: 1,
      plan_day: day,
      due_at: sentAt,
      status: outcome === 'bounced' || outcome === 'lost' ? outcome : 'sent',
      sent_at: sentAt,
      found_at: placement ? sentAt : null,
      placement,
      created_at: sentAt,
    };
  });
  if (rows.length > 0) await db.insertInto('warmup_messages').values(rows).execute();
}

/**
 * pickTemplate over the shipped default templates, with the service's English fallback: a workspace
 * with no templates of its own (`ownOnly` finds none).
 */
export async function pickDefaultTemplate(
  _workspaceId: string,
  criteria: { type: string; language: string; ownOnly?: boolean },
  seed: number,
): Promise<{ id: string; subject: string; body: string } | undefined> {
  if (criteria.ownOnly) return undefined;
  let candidates = DEFAULT_TEMPLATES.filter((t) => t.type === criteria.type && t.language === criteria.language);
  if (candidates.length === 0)
    candidates = DEFAULT_TEMPLATES.filter((t) => t.type === criteria.type && t.language === 'en');
  const template = candidates[seed % candidates.length];
  return (
    template && { id: `tpl_${DEFAULT_TEMPLATES.indexOf(template)}`, subject: template.subject, body: template.body }
  );
}

/** An SMTP server in memory: records what it was given; `onSend` may throw to fail a send. */
export class FakeSmtp {
  readonly sent: Array<{ config: MailServerConfig; mail: OutgoingMail }> = [];
  opened = 0;
  closed = 0;
  onSend: (mail: OutgoingMail, config: MailServerConfig) => void = () => undefined;

  readonly factory = (config: MailServerConfig): SmtpSender => {
    this.opened += 1;
    return {
      send: async (mail: OutgoingMail): Promise<SendResult> => {
        await Promise.resolve();
        this.onSend(mail, config);
        this.sent.push({ config, mail });
        return { accepted: [mail.to.address], rejected: [], response: '250 2.0.0 Ok: queued' };
      },
      close: () => {
        this.closed += 1;
      },
    };
  };
}

export function smtpError(
  kind: MailConnectionError['kind'],
  message: string,
  extra: { serverResponse?: string; permanent?: boolean } = {},
): MailConnectionError {
  return new MailConnectionError({ side: 'smtp', kind, message, host: '127.0.0.1', port: 587, ...extra });
}

export function imapError(
  kind: MailConnectionError['kind'],
  message: string,
  serverResponse?: string,
): MailConnectionError {
  return new MailConnectionError({
    side: 'imap',
    kind,
    message,
    host: '127.0.0.1',
    port: 143,
    ...(serverResponse ? { serverResponse } : {}),
  });
}

interface StoredMessage {
  uid: number;
  messageId: string;
  seen: boolean;
  flagged: boolean;
  from: string;
  subject: string;
}

/** One IMAP account in memory, with INBOX and Junk (SPECIAL-USE \Junk), used through FakeImap sessions. */
export class FakeAccount {
  readonly folders = new Map<string, { role: FolderRole; specialUse?: string; messages: StoredMessage[] }>([
    ['INBOX', { role: 'inbox', messages: [] }],
    ['Junk', { role: 'spam', specialUse: '\\Junk', messages: [] }],
  ]);
  bounces: FoundBounce[] = [];
  private nextUid = 1;

  deliver(folder: string, messageId: string, extra: Partial<StoredMessage> = {}): number {
    const uid = this.nextUid++;
    this.folder(folder).messages.push({ uid, messageId, seen: false, flagged: false, from: '', subject: '', ...extra });
    return uid;
  }

  folder(path: string) {
    const folder = this.folders.get(path);
    if (!folder) throw imapError('protocol', `no folder ${path}`);
    return folder;
  }

  /** Where a message is now (folder path and its flags), or undefined. */
  locate(messageId: string): { folder: string; message: StoredMessage } | undefined {
    for (const [path, folder] of this.folders) {
      const message = folder.messages.find((m) => m.messageId === messageId);
      if (message) return { folder: path, message };
    }
    return undefined;
  }

  take(path: string, uid: number): StoredMessage {
    const folder = this.folder(path);
    const index = folder.messages.findIndex((m) => m.uid === uid);
    if (index < 0) throw imapError('protocol', `no UID ${uid} in ${path}`);
    return folder.messages.splice(index, 1)[0];
  }

  newUid(): number {
    return this.nextUid++;
  }
}

/** IMAP for a set of accounts keyed by login name; `failLogin` makes logins of a user fail. */
export class FakeImap {
  readonly accounts = new Map<string, FakeAccount>();
  readonly failLogin = new Map<string, MailConnectionError>();
  sessions = 0;
  openSessions = 0;
  /** Sessions opened per username. */
  readonly logins = new Map<string, number>();

  account(username: string): FakeAccount {
    let account = this.accounts.get(username);
    if (!account) {
      account = new FakeAccount();
      this.accounts.set(username, account);
    }
    return account;
  }

  readonly factory = async (config: MailServerConfig): Promise<ImapSession> => {
    await Promise.resolve();
    const failure = this.failLogin.get(config.username);
    if (failure) throw failure;
    this.sessions += 1;
    this.openSessions += 1;
    this.logins.set(config.username, (this.logins.get(config.username) ?? 0) + 1);
    const account = this.account(config.username);
    const infos = (): FolderInfo[] =>
      [...account.folders.entries()].map(([path, f]) => ({
        path,
        name: path,
        delimiter: '/',
        role: f.role,
        subscribed: true,
        ...(f.specialUse ? { specialUse: f.specialUse } : {}),
      }));
    const found = (path: string, role: FolderRole, m: StoredMessage, asked: string): FoundMessage => ({
      messageId: asked,
      folder: path,
      role,
      uid: m.uid,
      seen: m.seen,
      flagged: m.flagged,
      from: m.from,
      subject: m.subject,
    });
    let closed = false;
    return {
      folders: async () => infos(),
      findMessages: async (ids: string[], opts: FindMessagesOptions = {}) => {
        const included = new Set(opts.includeFolders ?? []);
        const filed = new Set(opts.filedAlready ?? []);
        const out: FoundMessage[] = [];
        for (const id of ids) {
          for (const [path, folder] of account.folders) {
            if (path === 'Warmup' && !included.has(path)) continue;
            if (filed.has(id) && !DELIVERY_ROLES.has(folder.role)) continue;
            const m = folder.messages.find((x) => x.messageId === id);
            if (m) {
              out.push(found(path, folder.role, m, id));
              break;
            }
          }
        }
        return out;
      },
      markSeen: async (path: string, uid: number) => {
        const m = account.folder(path).messages.find((x) => x.uid === uid);
        if (!m) throw imapError('protocol', `no UID ${uid}`);
        m.seen = true;
      },
      flag: async (path: string, uid: number) => {
        const m = account.folder(path).messages.find((x) => x.uid === uid);
        if (!m) throw imapError('protocol', `no UID ${uid}`);
        m.flagged = true;
      },
      move: async (path: string, uid: number, destination: string) => {
        const m = account.take(path, uid);
        m.uid = account.newUid();
        account.folder(destination).messages.push(m);
        return m.uid;
      },
      ensureFolder: async (name: string) => {
        if (!account.folders.has(name)) account.folders.set(name, { role: 'other', messages: [] });
        return name;
      },
      append: async () => undefined,
      fetchRaw: async () => Buffer.from(''),
      findBounces: async (ids: string[]) => account.bounces.filter((b) => ids.includes(b.messageId)),
      scanBounces: async (ids: string[], _since: Date, marks: Record<string, ScanMark>) => ({
        bounces: account.bounces.filter((b) => ids.includes(b.messageId)),
        marks,
      }),
      findAnswers: async () => [],
      findOlderThan: async () => [],
      remove: async (path: string, uids: number[]) => {
        for (const uid of uids) account.take(path, uid);
        return { expunged: true };
      },
      close: async () => {
        if (!closed) this.openSessions -= 1;
        closed = true;
      },
    };
  };
}

export interface FixtureDeps extends EngineDeps {
  clock: ReturnType<typeof fixedClock>;
}

/** Deps of the mail work over a test database with fakes; credentials are the address as login. */
export function mailWorkDeps(db: Kysely<Database>, dialect: Dialect, overrides: Partial<EngineDeps> = {}): FixtureDeps {
  return {
    db,
    dialect,
    clock: fixedClock('2026-03-12T10:00:00Z'),
    random: seededRandom(42),
    logger: silentLogger,
    workerId: 'worker-test',
    mailboxes: {
      getCredentials: async (mailboxId: string) => {
        const row = await db
          .selectFrom('mailboxes')
          .select('email')
          .where('id', '=', mailboxId)
          .executeTakeFirstOrThrow();
        const server = { host: '127.0.0.1', username: row.email, password: 'secret', secure: false };
        return { imap: { ...server, port: 143 }, smtp: { ...server, port: 587 } };
      },
    },
    templates: { pickTemplate: pickDefaultTemplate },
    installationSeed: 'test installation',
    settings: {
      leaseMs: 60_000,
      imapTimeoutMs: 2_000,
      smtpTimeoutMs: 2_000,
      syncDeadlineMs: 60_000,
      warmupFolderRetentionDays: 30,
    },
    ...overrides,
  } as FixtureDeps;
}

/** A warmup message's row as it is now. */
export async function messageRowOf(database: { db: Kysely<Database> }, id: string) {
  return database.db.selectFrom('warmup_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
