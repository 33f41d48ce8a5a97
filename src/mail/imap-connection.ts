// One IMAP connection of a session (imapflow): resolving and checking the host, logging in with
// a password or an OAuth token, reconnecting after a drop, and a deadline on every round trip so a
// server that hangs or drops fails the call with a MailConnectionError instead of hanging the engine.
import { ImapFlow } from 'imapflow';
import type { ImapFlowOptions, ListResponse, MailboxLockObject } from 'imapflow';
import {
  MailConnectionError,
  abortedError,
  lookupFailure,
  withDeadline,
  type MailServerConfig,
  withTokenRetry,
} from './errors.js';
import { resolveMailHost, tlsOptions, type ResolvedEndpoint } from './policy.js';
import { endpoint, noGreetingError, reachOf, timeoutError, toMailError } from './imap-errors.js';
import { type FolderInfo, classifyFolder, hasFlag } from './imap-folders.js';
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The most of one message that is ever downloaded (warmup mail is a few KiB). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
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

/** The checked address of the configured host, or the generic "could not connect" error. */
export async function resolveEndpoint(config: MailServerConfig, timeoutMs: number): Promise<ResolvedEndpoint> {
  try {
    return await withDeadline(resolveMailHost(config.host, config.policy), timeoutMs, () => new Error('DNS timeout'));
  } catch (err) {
    throw lookupFailure('imap', config, err);
  }
}

export function clientOptions(
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
export function clientInfoOf(clientId: Record<string, string> | null): ImapFlowOptions['clientInfo'] {
  return { name: '', version: '', vendor: '', 'support-url': '', ...(clientId ?? {}) };
}

/** Whether the server announced this capability (MOVE, UIDPLUS…) after login. */
export function capable(client: ImapFlow, name: string): boolean {
  return client.capabilities.has(name);
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
      const connecting = client.connect();
      const reach = reachOf(client, config, endpoint.explained);
      try {
        await withDeadline(connecting, timeoutMs, () => {
          // After a greeting it is a mail server that is slow to log in, and saying so gives
          // nothing away about the network; before one, the answer is the generic one on the
          // operator's network and says what happened on a public host.
          const greeted = client.greeting !== undefined;
          const failure = greeted
            ? timeoutError(config, timeoutMs, 'login')
            : noGreetingError(config, timeoutMs, reach);
          client.close();
          return failure;
        });
      } catch (err) {
        throw toMailError(err, config, timeoutMs, 'connect', reach);
      } finally {
        if (!client.isClosed) client.close();
      }
    },
    'imap',
  );
}

/**
 * One logged-in connection of a session, opened again by the next call after a drop; every
 * command runs under the session deadline and gives up when its signal fires.
 */
export class ImapConnection {
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
    if (this.closed) {
      // closed while the login was under way: close() found no client to log out, so this one
      // would stay logged in until the process ends
      client.close();
      throw new Error('IMAP session is closed');
    }
    this.client = client;
    this.address = endpoint.address;
    return client;
  }

  /** The address the connection went to (the host name resolved and checked); undefined before one. */
  serverAddress(): string | undefined {
    return this.address;
  }

  private async login(endpoint: ResolvedEndpoint, accessToken: string | undefined): Promise<ImapFlow> {
    const client = new ImapFlow({
      ...clientOptions(this.config, endpoint, this.timeoutMs, accessToken),
      clientInfo: clientInfoOf(this.clientId),
    });
    client.on('error', () => undefined);
    const connecting = client.connect();
    const reach = reachOf(client, this.config, endpoint.explained);
    try {
      await withDeadline(
        connecting,
        this.timeoutMs,
        () => {
          const failure = noGreetingError(this.config, this.timeoutMs, reach);
          client.close();
          return failure;
        },
        this.abortWith(client),
      );
    } catch (err) {
      if (!client.isClosed) client.close();
      throw toMailError(err, this.config, this.timeoutMs, 'connect', reach);
    }
    return client;
  }

  /** One server round trip (or a few) under the session deadline. */
  async step<T>(what: string, client: ImapFlow, op: () => Promise<T>): Promise<T> {
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
  async inFolder<T>(path: string, op: (client: ImapFlow) => Promise<T>, fresh = false): Promise<T> {
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

  async cachedFolders(): Promise<FolderInfo[]> {
    return this.folderCache ?? this.folders();
  }

  /** The folder list is read again at the next use (a folder was created). */
  forgetFolders(): void {
    this.folderCache = null;
  }

  /** imapflow answers some refused commands with `false` instead of an error. */
  refused(what: string): MailConnectionError {
    return new MailConnectionError({
      side: 'imap',
      kind: 'protocol',
      message: `IMAP server ${endpoint(this.config)} refused ${what}`,
      host: this.config.host,
      port: this.config.port,
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
