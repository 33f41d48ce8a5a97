// A small Gmail-like IMAP server for tests (never used by the product): one store of messages per
// account, folders that are views of labels the way Gmail shows them over IMAP (INBOX is \Inbox,
// [Gmail]/Spam is \Spam, [Gmail]/All Mail is everything but spam and trash, a user folder is a
// label), and the X-GM-EXT-1 extension: X-GM-LABELS (FETCH, STORE, SEARCH), X-GM-MSGID and a subset
// of X-GM-RAW (category:, rfc822msgid:, label:, in:, is:important, -, OR, { }, ( )). Gmail's tabs
// are not folders here either: a message in INBOX carries a category that only X-GM-RAW tells.
//
// It speaks what imapflow sends and little more: LOGIN, ID, NAMESPACE, ENABLE, LIST/LSUB with
// special-use attributes, SELECT/EXAMINE, STATUS, NOOP, IDLE, CREATE, SUBSCRIBE, APPEND, and the
// UID forms of SEARCH, FETCH, STORE, COPY, MOVE and EXPUNGE (UIDPLUS). Implicit TLS only.
// Every parser reads its input once, left to right (linear time).
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { MailServerConfig } from '../../src/mail/errors.js';
import { stackMailPolicy, type MailStack } from '../mailstack/use-mail-stack.js';
import type { MailUser } from '../mailstack/users.js';
import { type Token, tokenize, text, quote, parseSet, inRanges } from './gmail-imap-wire.js';
import { headerBlock, headerLines, headerValue, envelope, imapDate, parseSearchDate } from './gmail-imap-messages.js';
import {
  type GmailTab,
  type GmailStoredMessage,
  type FolderDef,
  type FolderState,
  type Account,
} from './gmail-imap-store.js';
import {
  foldersOf,
  findFolder,
  folderState,
  folderView,
  messageById,
  fileInto,
  takeOutOf,
  labelOf,
} from './gmail-imap-store.js';
import { type Matcher, parseGmailQuery } from './gmail-imap-query.js';
export { GMAIL_CATEGORIES, type GmailTab, type GmailStoredMessage } from './gmail-imap-store.js';

export interface GmailDelivery {
  /** The tab it is shown in when it is in INBOX (default primary). */
  category?: GmailTab;
  /** Filed into [Gmail]/Spam instead of INBOX. */
  spam?: boolean;
}

export interface GmailServerOptions {
  users: Array<{ email: string; password: string }>;
  tls: { key: string | Buffer; cert: string | Buffer };
  /** How an incoming message is filed (Gmail's own filters); default: INBOX, primary. */
  classify?: (raw: Buffer, recipient: string) => GmailDelivery;
  /**
   * The tabs a client can take mail out of by removing its label (`STORE -X-GM-LABELS
   * (CATEGORY_PROMOTIONS)`), which moves it to Primary. Whether real Gmail honours that over IMAP
   * is not documented: tests run both ways. Default: none.
   */
  writableCategories?: GmailTab[];
}

export interface GmailImapServer {
  port: number;
  /** Delivers a message to an account as Gmail's filters would file it. */
  deliver(email: string, raw: Buffer, delivery?: GmailDelivery): GmailStoredMessage;
  messages(email: string): GmailStoredMessage[];
  /** Every command line received (without literals), for tests that check what the client sent. */
  commands: string[];
  close(): Promise<void>;
}

export async function startGmailImapServer(options: GmailServerOptions): Promise<GmailImapServer> {
  const accounts = new Map<string, Account>();
  for (const user of options.users) {
    accounts.set(user.email.toLowerCase(), {
      email: user.email,
      password: user.password,
      messages: [],
      userLabels: [],
      state: new Map(),
    });
  }
  let nextGmId = 1_500_000_000_000_000_000n;
  const commands: string[] = [];
  const sockets = new Set<TLSSocket>();

  const store = (account: Account, raw: Buffer, labels: string[], flags: string[], date: Date, category: GmailTab) => {
    nextGmId += 1n;
    const message: GmailStoredMessage = {
      gmId: nextGmId.toString(),
      raw,
      flags: new Set(flags),
      labels: new Set(labels),
      category,
      internalDate: date,
      messageId: headerValue(raw, 'message-id').trim(),
    };
    account.messages.push(message);
    return message;
  };

  const server: Server = createServer({ key: options.tls.key, cert: options.tls.cert }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    new Connection(socket, { accounts, options, commands, store }).start();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    commands,
    deliver(email, raw, delivery) {
      const account = accounts.get(email.toLowerCase());
      if (!account) throw new Error(`no Gmail-like account ${email}`);
      const filed = delivery ?? options.classify?.(raw, email) ?? {};
      return store(account, raw, [filed.spam ? '\\Spam' : '\\Inbox'], [], new Date(), filed.category ?? 'primary');
    },
    messages(email) {
      return accounts.get(email.toLowerCase())?.messages ?? [];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- a session --------------------------------------------------------------------------------

interface Shared {
  accounts: Map<string, Account>;
  options: GmailServerOptions;
  commands: string[];
  store: (
    account: Account,
    raw: Buffer,
    labels: string[],
    flags: string[],
    date: Date,
    category: GmailTab,
  ) => GmailStoredMessage;
}

const CAPABILITIES = 'IMAP4rev1 ID IDLE NAMESPACE CHILDREN UNSELECT UIDPLUS MOVE SPECIAL-USE X-GM-EXT-1';

class Connection {
  private buffer = Buffer.alloc(0);
  private lines: string[] = [];
  private literals: string[] = [];
  private literalWanted = -1;
  private account: Account | null = null;
  private selected: { folder: FolderDef; readOnly: boolean; view: string[] } | null = null;
  private idleTag: string | null = null;

  constructor(
    private readonly socket: TLSSocket,
    private readonly shared: Shared,
  ) {}

  start(): void {
    this.socket.write('* OK Gimap-like test server ready\r\n');
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
  }

  private send(line: string): void {
    if (!this.socket.destroyed) this.socket.write(`${line}\r\n`, 'latin1');
  }

  /** Splits the input into commands, reading announced literals whole. */
  private drain(): void {
    for (;;) {
      if (this.literalWanted >= 0) {
        if (this.buffer.length < this.literalWanted) return;
        this.literals[this.lines.length - 1] = this.buffer.subarray(0, this.literalWanted).toString('latin1');
        this.buffer = this.buffer.subarray(this.literalWanted);
        this.literalWanted = -1;
      }
      const end = this.buffer.indexOf('\r\n');
      if (end < 0) return;
      const line = this.buffer.subarray(0, end).toString('latin1');
      this.buffer = this.buffer.subarray(end + 2);
      this.lines.push(line);
      const literal = /\{(\d+)(\+?)\}$/.exec(line);
      if (literal) {
        this.literalWanted = Number(literal[1]);
        if (!literal[2]) this.send('+ go ahead');
        continue;
      }
      const lines = this.lines;
      const literals = this.literals;
      this.lines = [];
      this.literals = [];
      try {
        this.handle(lines, literals);
      } catch (err) {
        const tag = (lines[0] ?? '').split(' ')[0] || '*';
        this.send(`${tag} BAD ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private handle(lines: string[], literals: string[]): void {
    if (this.idleTag !== null) {
      if ((lines[0] ?? '').trim().toUpperCase() === 'DONE') {
        this.send(`${this.idleTag} OK IDLE terminated`);
        this.idleTag = null;
      }
      return;
    }
    this.shared.commands.push(lines.join(' '));
    const tokens = tokenize(lines, literals);
    const tag = text(tokens[0]);
    let command = text(tokens[1]).toUpperCase();
    let args = tokens.slice(2);
    let uid = false;
    if (command === 'UID') {
      uid = true;
      command = text(args[0]).toUpperCase();
      args = args.slice(1);
    }
    const ok = (message = `${command} completed`) => this.send(`${tag} OK ${message}`);
    const no = (message: string) => this.send(`${tag} NO ${message}`);
    switch (command) {
      case 'CAPABILITY':
        this.send(`* CAPABILITY ${CAPABILITIES}`);
        return ok();
      case 'NOOP':
        this.report();
        return ok();
      case 'LOGOUT':
        this.send('* BYE see you');
        ok();
        this.socket.end();
        return;
      case 'ID':
        this.send('* ID ("name" "GImap-like" "vendor" "test")');
        return ok();
      case 'ENABLE':
        this.send('* ENABLED');
        return ok();
      case 'LOGIN': {
        const account = this.shared.accounts.get(text(args[0]).toLowerCase());
        if (!account || account.password !== text(args[1])) {
          return this.send(`${tag} NO [AUTHENTICATIONFAILED] Invalid credentials`);
        }
        this.account = account;
        return ok(`[CAPABILITY ${CAPABILITIES}] ${account.email} authenticated`);
      }
    }
    const account = this.account;
    if (!account) return this.send(`${tag} BAD log in first`);
    switch (command) {
      case 'NAMESPACE':
        this.send('* NAMESPACE (("" "/")) NIL NIL');
        return ok();
      case 'LIST':
      case 'LSUB':
        for (const folder of foldersOf(account)) {
          const flags = [folder.noselect ? '\\Noselect \\HasChildren' : '\\HasNoChildren'];
          if (folder.specialUse) flags.push(folder.specialUse);
          this.send(`* ${command} (${flags.join(' ')}) "/" ${quote(folder.path)}`);
        }
        return ok();
      case 'CREATE':
      case 'SUBSCRIBE': {
        const name = text(args[0]);
        if (command === 'CREATE') {
          if (findFolder(account, name)) return no('[ALREADYEXISTS] exists');
          account.userLabels.push(name);
        }
        return ok();
      }
      case 'STATUS': {
        const folder = findFolder(account, text(args[0]));
        if (!folder) return no('[NONEXISTENT] no such folder');
        const view = folderView(account, folder);
        const state = folderState(account, folder);
        const unseen = account.messages.filter((m) => folder.has(m) && !m.flags.has('\\Seen')).length;
        this.send(
          `* STATUS ${quote(folder.path)} (MESSAGES ${view.length} UIDNEXT ${state.uidNext} UIDVALIDITY ${state.uidValidity} UNSEEN ${unseen})`,
        );
        return ok();
      }
      case 'SELECT':
      case 'EXAMINE': {
        const folder = findFolder(account, text(args[0]));
        if (!folder || folder.noselect) return no('[NONEXISTENT] no such folder');
        const state = folderState(account, folder);
        const view = folderView(account, folder);
        this.selected = { folder, readOnly: command === 'EXAMINE', view };
        this.send('* FLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen)');
        this.send('* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen \\*)] Flags permitted');
        this.send(`* OK [UIDVALIDITY ${state.uidValidity}] UIDs valid`);
        this.send(`* ${view.length} EXISTS`);
        this.send('* 0 RECENT');
        this.send(`* OK [UIDNEXT ${state.uidNext}] Predicted next UID`);
        return ok(`[${command === 'EXAMINE' ? 'READ-ONLY' : 'READ-WRITE'}] ${folder.path} selected`);
      }
      case 'CLOSE':
      case 'UNSELECT':
        this.selected = null;
        return ok();
      case 'IDLE':
        this.idleTag = tag;
        this.send('+ idling');
        return;
      case 'APPEND': {
        const folder = findFolder(account, text(args[0]));
        if (!folder || !folder.label) return no('[TRYCREATE] cannot append there');
        let i = 1;
        const first = args[i];
        const flags = first?.t === 'list' ? (i++, first.v.map(text)) : [];
        const date = args[i] && args[i]!.t === 'string' && args[i + 1] ? new Date(text(args[i++])) : new Date();
        const raw = Buffer.from(text(args[i]), 'latin1');
        const message = this.shared.store(account, raw, [folder.label], flags, date, 'primary');
        const state = folderState(account, folder);
        folderView(account, folder);
        return ok(`[APPENDUID ${state.uidValidity} ${state.uids.get(message.gmId)}] APPEND completed`);
      }
    }
    const selected = this.selected;
    if (!selected) return this.send(`${tag} BAD select a folder first`);
    const state = folderState(account, selected.folder);
    const inFolder = () => folderView(account, selected.folder).map((id) => messageById(account, id)!);
    const uidOf = (m: GmailStoredMessage) => state.uids.get(m.gmId)!;
    const pick = (set: string): GmailStoredMessage[] => {
      const current = inFolder();
      const max = uid ? Math.max(0, ...current.map(uidOf)) : current.length;
      const ranges = parseSet(set, max);
      return current.filter((m, index) => inRanges(ranges, uid ? uidOf(m) : index + 1));
    };
    switch (command) {
      case 'SEARCH': {
        const matcher = this.searchMatcher(args, account, state, selected.folder);
        const current = inFolder();
        const hits = current.flatMap((m, index) => (matcher(m) ? [uid ? uidOf(m) : index + 1] : []));
        this.send(`* SEARCH${hits.map((n) => ` ${n}`).join('')}`);
        return ok();
      }
      case 'FETCH': {
        const items = args[1]?.t === 'list' ? args[1].v.map(text) : [text(args[1])];
        const current = inFolder();
        for (const m of pick(text(args[0]))) {
          const seq = current.indexOf(m) + 1;
          this.send(`* ${seq} FETCH (${this.fetchItems(m, items, uid, state)})`);
        }
        return ok();
      }
      case 'STORE': {
        if (selected.readOnly) return no('read-only');
        const operation = text(args[1]).toUpperCase();
        const values = args[2]?.t === 'list' ? args[2].v.map(text) : [text(args[2])];
        const labels = operation.includes('X-GM-LABELS');
        const current = inFolder();
        for (const m of pick(text(args[0]))) {
          const target = labels ? m.labels : m.flags;
          const add = operation.startsWith('+');
          const remove = operation.startsWith('-');
          const names = values.map((value) => (labels ? labelOf(account, value) : value));
          if (!add && !remove) {
            if (labels) {
              for (const l of [...m.labels]) if (!l.startsWith('\\')) m.labels.delete(l);
            } else {
              m.flags.clear();
            }
          }
          for (const name of names) {
            if (!labels && name.toLowerCase() === '\\deleted') {
              if (remove) state.deleted.delete(m.gmId);
              else state.deleted.add(m.gmId);
              continue;
            }
            if (labels && name.toUpperCase().startsWith('CATEGORY_')) {
              // Gmail's tabs are not labels a client sees; removing one's label works only where allowed
              const tab = name.slice('CATEGORY_'.length).toLowerCase();
              const writable = this.shared.options.writableCategories ?? [];
              if (remove && m.category === tab && writable.includes(m.category)) m.category = 'primary';
              continue;
            }
            if (remove) target.delete(name);
            else target.add(name);
          }
          if (!operation.endsWith('.SILENT')) {
            const shown = labels ? `X-GM-LABELS ${this.labelList(m)}` : `FLAGS ${this.flagList(m, state)}`;
            this.send(`* ${current.indexOf(m) + 1} FETCH (${shown}${uid ? ` UID ${uidOf(m)}` : ''})`);
          }
        }
        return ok();
      }
      case 'COPY':
      case 'MOVE': {
        const destination = findFolder(account, text(args[1]));
        if (!destination || destination.noselect) return no('[TRYCREATE] no such folder');
        const moved = pick(text(args[0]));
        for (const m of moved) {
          fileInto(m, destination);
          if (command === 'MOVE') takeOutOf(m, selected.folder, account);
        }
        const target = folderState(account, destination);
        folderView(account, destination);
        const copyUid = `[COPYUID ${target.uidValidity} ${moved.map(uidOf).join(',')} ${moved
          .map((m) => target.uids.get(m.gmId))
          .join(',')}]`;
        if (command === 'COPY') return ok(`${copyUid} COPY completed`);
        this.send(`* OK ${copyUid} Moved`);
        this.report();
        return ok();
      }
      case 'EXPUNGE': {
        const chosen = uid ? new Set(pick(text(args[0]))) : null;
        for (const m of inFolder()) {
          if (!state.deleted.has(m.gmId) || (chosen && !chosen.has(m))) continue;
          state.deleted.delete(m.gmId);
          takeOutOf(m, selected.folder, account);
        }
        this.report();
        return ok();
      }
    }
    return this.send(`${tag} BAD unknown command ${command}`);
  }

  /** Untagged EXPUNGE/EXISTS for what changed in the selected folder since the client last heard. */
  private report(): void {
    if (!this.selected || !this.account) return;
    const now = folderView(this.account, this.selected.folder);
    const before = this.selected.view;
    for (let i = before.length - 1; i >= 0; i--) {
      if (!now.includes(before[i]!)) {
        this.send(`* ${i + 1} EXPUNGE`);
        before.splice(i, 1);
      }
    }
    if (now.length !== before.length) this.send(`* ${now.length} EXISTS`);
    this.selected.view = now;
  }

  private labelList(m: GmailStoredMessage): string {
    return `(${[...m.labels].map((l) => (l.startsWith('\\') ? l : quote(l))).join(' ')})`;
  }

  private flagList(m: GmailStoredMessage, state: FolderState): string {
    return `(${[...m.flags, ...(state.deleted.has(m.gmId) ? ['\\Deleted'] : [])].join(' ')})`;
  }

  private fetchItems(m: GmailStoredMessage, items: string[], uid: boolean, state: FolderState): string {
    const out: string[] = [];
    const wanted = uid && !items.some((i) => i.toUpperCase() === 'UID') ? ['UID', ...items] : items;
    for (const item of wanted) {
      const upper = item.toUpperCase();
      if (upper === 'UID') out.push(`UID ${state.uids.get(m.gmId)}`);
      else if (upper === 'FLAGS') out.push(`FLAGS ${this.flagList(m, state)}`);
      else if (upper === 'ENVELOPE') out.push(`ENVELOPE ${envelope(m.raw)}`);
      else if (upper === 'INTERNALDATE') out.push(`INTERNALDATE ${imapDate(m.internalDate)}`);
      else if (upper === 'RFC822.SIZE') out.push(`RFC822.SIZE ${m.raw.length}`);
      else if (upper === 'X-GM-LABELS') out.push(`X-GM-LABELS ${this.labelList(m)}`);
      else if (upper === 'X-GM-MSGID' || upper === 'X-GM-THRID') out.push(`${upper} ${m.gmId}`);
      else if (upper.startsWith('BODY')) out.push(this.bodySection(m, item));
    }
    return out.join(' ');
  }

  /** BODY[...] / BODY.PEEK[...]: the whole message, its header, or some header fields; <origin.length> partial. */
  private bodySection(m: GmailStoredMessage, item: string): string {
    const open = item.indexOf('[');
    const close = item.lastIndexOf(']');
    const section = item.slice(open + 1, close);
    const partial = /<(\d+)\.(\d+)>$/.exec(item);
    let content: string;
    const upper = section.toUpperCase();
    if (upper === '') content = m.raw.toString('latin1');
    else if (upper === 'HEADER') content = `${headerBlock(m.raw)}\r\n`;
    else if (upper.startsWith('HEADER.FIELDS')) {
      const names = new Set(
        section
          .slice(section.indexOf('(') + 1, section.lastIndexOf(')'))
          .split(' ')
          .filter(Boolean)
          .map((n) => n.toLowerCase()),
      );
      const not = upper.startsWith('HEADER.FIELDS.NOT');
      const lines = headerLines(m.raw)
        .filter((f) => names.has(f.name) !== not)
        .map((f) => `${f.lines}\r\n`)
        .join('');
      content = `${lines}\r\n`;
    } else if (upper === 'TEXT') {
      const raw = m.raw.toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      content = end < 0 ? '' : raw.slice(end + 4);
    } else content = '';
    let name = `BODY[${section}]`;
    if (partial) {
      const start = Number(partial[1]);
      content = content.slice(start, start + Number(partial[2]));
      name += `<${start}>`;
    }
    if (!item.toUpperCase().startsWith('BODY.PEEK')) m.flags.add('\\Seen');
    return `${name} {${Buffer.byteLength(content, 'latin1')}}\r\n${content}`;
  }

  /** The search keys imapflow sends, as one matcher (keys ANDed, OR/NOT/parentheses nested). */
  private searchMatcher(args: Token[], account: Account, state: FolderState, folder: FolderDef): Matcher {
    let pos = 0;
    const tokens = args;
    if (text(tokens[0]).toUpperCase() === 'CHARSET') pos = 2;
    const key = (): Matcher => {
      const token = tokens[pos++];
      if (!token) return () => true;
      if (token.t === 'list') {
        const inner = this.searchMatcher(token.v, account, state, folder);
        return inner;
      }
      const name = token.v.toUpperCase();
      const arg = () => text(tokens[pos++]);
      switch (name) {
        case 'ALL':
          return () => true;
        case 'NOT': {
          const inner = key();
          return (m) => !inner(m);
        }
        case 'OR': {
          const a = key();
          const b = key();
          return (m) => a(m) || b(m);
        }
        case 'DELETED':
          return (m) => state.deleted.has(m.gmId);
        case 'UNDELETED':
          return (m) => !state.deleted.has(m.gmId);
        case 'SEEN':
          return (m) => m.flags.has('\\Seen');
        case 'UNSEEN':
          return (m) => !m.flags.has('\\Seen');
        case 'FLAGGED':
          return (m) => m.flags.has('\\Flagged');
        case 'UNFLAGGED':
          return (m) => !m.flags.has('\\Flagged');
        case 'SINCE': {
          const day = parseSearchDate(arg());
          return (m) => m.internalDate.getTime() >= day.getTime();
        }
        case 'BEFORE': {
          const day = parseSearchDate(arg());
          return (m) => m.internalDate.getTime() < day.getTime();
        }
        case 'UID': {
          const set = arg();
          return (m) => {
            const max = Math.max(0, ...state.uids.values());
            return inRanges(parseSet(set, max), state.uids.get(m.gmId) ?? 0);
          };
        }
        case 'HEADER': {
          const field = arg().toLowerCase();
          const value = arg().toLowerCase();
          return (m) => {
            const present = headerLines(m.raw).filter((f) => f.name === field);
            return present.some((f) =>
              f.lines
                .toLowerCase()
                .slice(field.length + 1)
                .includes(value),
            );
          };
        }
        case 'FROM':
        case 'TO':
        case 'SUBJECT': {
          const value = arg().toLowerCase();
          return (m) => headerValue(m.raw, name.toLowerCase()).toLowerCase().includes(value);
        }
        case 'X-GM-RAW':
          return parseGmailQuery(arg(), account);
        case 'X-GM-LABELS': {
          const label = labelOf(account, arg());
          return (m) => m.labels.has(label);
        }
        case 'X-GM-MSGID': {
          const id = arg();
          return (m) => m.gmId === id;
        }
        default:
          if (/^[\d:*,]+$/.test(token.v)) {
            const set = token.v;
            return (m) => {
              const index = folderView(account, folder).indexOf(m.gmId) + 1;
              return inRanges(parseSet(set, folderView(account, folder).length), index);
            };
          }
          throw new Error(`search key ${name} not supported`);
      }
    };
    const keys: Matcher[] = [];
    while (pos < tokens.length) keys.push(key());
    return (m) => keys.every((k) => k(m));
  }
}

/** The server under the run's mail stack certificate, so the stack's mail policy trusts it. */
export async function startGmailServerForStack(
  stack: MailStack,
  options: Omit<GmailServerOptions, 'tls'>,
): Promise<GmailImapServer> {
  const dir = dirname(stack.caCert);
  return startGmailImapServer({
    ...options,
    tls: { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(stack.caCert) },
  });
}

/** IMAP settings of a user of the Gmail-like server (implicit TLS, the stack's policy). */
export function gmailImapConfig(stack: MailStack, server: GmailImapServer, user: MailUser): MailServerConfig {
  return {
    host: stack.host,
    port: server.port,
    secure: true,
    username: user.email,
    password: user.password,
    policy: stackMailPolicy(stack),
  };
}
