// Sending over SMTP (nodemailer; this file and imap.ts are the only ones that touch the
// mail libraries). Messages look like a person's mail: text plus HTML, our own Message-ID, the
// boundary style and headers of the sender's mail client, no library's X-Mailer, no Precedence,
// nothing that says "warmup".
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { NodemailerError, SendMailOptions, SMTPPoolOptions, SMTPTransportOptions } from 'nodemailer';
import {
  MailConnectionError,
  abortedError,
  describeNetworkCode,
  formatSeconds,
  isNetworkCode,
  tlsFailureOf,
  unreachableError,
  unreachedCauseOf,
  lookupFailure,
  withDeadline,
  oauthAccessToken,
  refusedWithFreshToken,
  withTokenRetry,
  type MailServerConfig,
} from './errors.js';
import { resolveMailHost, tlsOptions, type ResolvedEndpoint } from './policy.js';
import { formatDateHeader } from './date-header.js';
import { writeClientMessage, type MimeStyle } from './client-mime.js';
import { heloNameOf } from './helo-name.js';

export { MailConnectionError, type MailServerConfig } from './errors.js';

export interface MailAddress {
  name?: string;
  address: string;
}

export interface OutgoingMail {
  from: MailAddress;
  to: MailAddress;
  subject: string;
  text: string;
  html: string;
  /** '<local@sender-domain>' */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  date?: Date;
  /** The sender's IANA zone: `Date` is written in its local time and offset (default UTC). */
  timeZone?: string;
  /** The multipart boundary, in the style of the sender's mail client (default: the library's). */
  boundary?: string;
  /** Headers the sender's mail client writes about itself (`User-Agent`, `X-Mailer`, `Mime-Version`). */
  headers?: Record<string, string>;
  /** Text parts quoted-printable whatever they hold, as some clients do. */
  quotedPrintable?: boolean;
  /**
   * The sender's mail client: when set, the whole message is written the way that client writes
   * it (client-mime.ts), with the boundary and headers above; without it, the library's skeleton.
   */
  client?: { style: MimeStyle; language: string; threadIndex?: string };
}

export interface SendResult {
  accepted: string[];
  rejected: string[];
  response: string;
}

export interface SmtpSender {
  /** Sends one message; throws MailConnectionError (kind 'rejected' with `permanent` for a refused recipient). */
  send(message: OutgoingMail): Promise<SendResult>;
  /** Closes the pooled connection; the sender cannot be used afterwards. */
  close(): void;
}

export interface SmtpOptions {
  /** verifySmtp: the whole check (default 10 s). createSmtpSender: one send, connecting included (default 30 s). */
  timeoutMs?: number;
  /** createSmtpSender: aborting it drops the connection at once; a send in flight fails with kind 'aborted'. */
  signal?: AbortSignal;
}

const VERIFY_TIMEOUT_MS = 10_000;
const SEND_TIMEOUT_MS = 30_000;

function connectionOptions(
  config: MailServerConfig,
  endpoint: ResolvedEndpoint,
  timeoutMs: number,
  accessToken: string | undefined,
): SMTPTransportOptions {
  return {
    // the address that passed the policy check; the name stays for the certificate check
    host: endpoint.address,
    ...(endpoint.servername ? { servername: endpoint.servername } : {}),
    port: config.port,
    secure: config.secure,
    // without implicit TLS, STARTTLS is a must (a stripped STARTTLS fails instead of sending
    // the password in the clear), unless the operator allowed plaintext for this host
    requireTLS: !config.secure && !endpoint.plaintextAllowed,
    // an OAuth mailbox logs in with AUTH XOAUTH2 and its access token (never refreshed by nodemailer)
    auth:
      accessToken !== undefined
        ? { type: 'OAuth2', user: config.username, accessToken }
        : { user: config.username, pass: config.password },
    // Log in even where AUTH is not advertised: a check that skipped the login would
    // "verify" any password.
    forceAuth: true,
    tls: tlsOptions(config.policy),
    // the name a mail client greets with: the operator's host name, never an address literal
    name: heloNameOf(config.policy),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  };
}

/** The checked address of the configured host, or the generic "could not connect" error. */
async function resolveEndpoint(config: MailServerConfig, timeoutMs: number): Promise<ResolvedEndpoint> {
  try {
    return await withDeadline(resolveMailHost(config.host, config.policy), timeoutMs, () => new Error('DNS timeout'));
  } catch (err) {
    throw lookupFailure('smtp', config, err);
  }
}

/** Connects, upgrades to TLS, logs in and quits. Throws MailConnectionError. */
export async function verifySmtp(config: MailServerConfig, opts: SmtpOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? VERIFY_TIMEOUT_MS;
  const started = Date.now();
  const endpoint = await resolveEndpoint(config, timeoutMs);
  await withTokenRetry(
    config,
    async (accessToken) => {
      const remainingMs = Math.max(1, timeoutMs - (Date.now() - started));
      const greeting = greetingWatch();
      const transport = nodemailer.createTransport({
        ...connectionOptions(config, endpoint, remainingMs, accessToken),
        transactionLog: true,
        logger: greeting.logger,
      });
      transport.on('error', () => undefined);
      try {
        // a little later than nodemailer's own timeouts, so a silent port is answered by those
        // (generic, during connection) rather than by this deadline
        await withDeadline(transport.verify(), remainingMs + 500, () =>
          greeting.greeted() ? timeoutError(config, timeoutMs) : noGreetingError(config, timeoutMs, endpoint.explained),
        );
      } catch (err) {
        throw toMailError(err, config, timeoutMs, greeting.greeted(), endpoint.explained);
      } finally {
        transport.close();
      }
    },
    'smtp',
  );
}

/** The bunyan-style logger nodemailer takes. */
type TransactionLogger = Exclude<SMTPTransportOptions['logger'], boolean | undefined>;

/**
 * Notices the server's greeting, the one sign that a mail server is there. nodemailer reports
 * every timeout of a session as one of the connection (command 'CONN'), whether the server never
 * greeted (a closed or black-holed port: the generic "could not connect") or greeted and then
 * left EHLO, STARTTLS or AUTH unanswered (a slow server: a timeout). Its transaction log is the
 * one place that tells which replies arrived; only the reply code of the first server line is
 * read, nothing of the log is kept or written anywhere (it also carries the client's commands).
 * A pool opens a new connection after one failed or idled out: the answer is about the newest
 * connection (each logs under its own `sid`), so an earlier connection's greeting does not count.
 */
function greetingWatch(): { greeted(): boolean; logger: TransactionLogger } {
  let greeted = false;
  let firstReply = true;
  let connection: unknown;
  const noteConnection = (entry: unknown): void => {
    const sid = (entry as { sid?: unknown } | undefined)?.sid;
    if (sid === undefined || sid === connection) return;
    connection = sid;
    greeted = false;
    firstReply = true;
  };
  const logger: TransactionLogger = {
    trace: noteConnection,
    info: noteConnection,
    warn: noteConnection,
    error: noteConnection,
    fatal: noteConnection,
    debug(entry: unknown, line: unknown): void {
      noteConnection(entry);
      if (!firstReply || (entry as { tnx?: unknown } | undefined)?.tnx !== 'server') return;
      firstReply = false;
      greeted = typeof line === 'string' && /^220[ -]/.test(line);
    },
  };
  return { greeted: () => greeted, logger };
}

function toSendMailOptions(message: OutgoingMail): SendMailOptions {
  const options: SendMailOptions = {
    from: message.from.name ? { name: message.from.name, address: message.from.address } : message.from.address,
    to: message.to.name ? { name: message.to.name, address: message.to.address } : message.to.address,
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: message.messageId,
    date: formatDateHeader(message.date ?? new Date(), message.timeZone ?? 'UTC'),
    xMailer: false,
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'windows',
  };
  if (message.quotedPrintable) options.textEncoding = 'quoted-printable';
  if (message.inReplyTo) options.inReplyTo = message.inReplyTo;
  if (message.references?.length) options.references = message.references;
  return options;
}

/**
 * The exact bytes (CRLF line ends) sent for this message: composed by nodemailer, then given the
 * client's boundary and own headers on its top part (set, not added: a header the library writes,
 * such as `MIME-Version`, is replaced rather than doubled). Also for content checks such as spam
 * scoring.
 */
export async function buildRawMessage(message: OutgoingMail): Promise<Buffer> {
  if (message.client && message.boundary) {
    return writeClientMessage({
      style: message.client.style,
      from: message.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      messageId: message.messageId,
      ...(message.inReplyTo ? { inReplyTo: message.inReplyTo } : {}),
      ...(message.references?.length ? { references: message.references } : {}),
      date: message.date ?? new Date(),
      timeZone: message.timeZone ?? 'UTC',
      boundary: message.boundary,
      language: message.client.language,
      ...(message.client.threadIndex ? { threadIndex: message.client.threadIndex } : {}),
      selfHeaders: message.headers ?? {},
    });
  }
  const root = new MailComposer(toSendMailOptions(message)).compile();
  for (const [key, value] of Object.entries(message.headers ?? {})) root.setHeader(key, value);
  const contentType = root.getHeader('Content-Type');
  const multipart = typeof contentType === 'string' ? /^multipart\/[a-z]+/i.exec(contentType)?.[0] : undefined;
  if (message.boundary && multipart) root.setHeader('Content-Type', `${multipart}; boundary="${message.boundary}"`);
  return root.build();
}

/**
 * A sender that keeps one SMTP connection open between sends (a pool of one) and
 * reconnects when the server dropped it. Use one per mailbox and cycle, then close().
 */
export function createSmtpSender(config: MailServerConfig, opts: SmtpOptions = {}): SmtpSender {
  const timeoutMs = opts.timeoutMs ?? SEND_TIMEOUT_MS;
  const greeting = greetingWatch();
  // Resolved and checked once, at the first send: every connection of the pool goes to
  // that address.
  let transport: Promise<ReturnType<typeof nodemailer.createTransport>> | undefined;
  // whether the pool's address is one whose failures may be told by cause (policy.ts)
  let explained = false;
  const openTransport = async (accessToken: string | undefined) => {
    const endpoint = await resolveEndpoint(config, timeoutMs);
    explained = endpoint.explained;
    const poolOptions: SMTPPoolOptions & { pool: true } = {
      ...connectionOptions(config, endpoint, timeoutMs, accessToken),
      // tells a server that greeted and then stalled (a timeout) from one that never greeted
      transactionLog: true,
      logger: greeting.logger,
      pool: true,
      maxConnections: 1,
      maxMessages: 100,
      // a connection the server closed mid-send is retried once on a new one (same
      // Message-ID, so a duplicate is recognised by the receiving side)
      maxRequeues: 1,
      idleTimeout: 60_000,
    };
    const pool = nodemailer.createTransport(poolOptions);
    pool.on('error', () => undefined);
    if (closed) pool.close();
    return pool;
  };
  let closed = false;
  const closePool = (): void => {
    void transport?.then(
      (pool) => pool.close(),
      () => undefined,
    );
  };
  // a stopping caller does not wait for a hung server: the pool's socket goes at once
  opts.signal?.addEventListener('abort', closePool, { once: true });

  async function sendOnce(message: OutgoingMail, renew: boolean): Promise<SendResult> {
    transport ??= (async () =>
      openTransport(
        config.oauth ? await oauthAccessToken('smtp', { ...config, oauth: config.oauth }, renew) : undefined,
      ))();
    transport.catch(() => {
      transport = undefined; // the next send resolves again
    });
    const pool = await transport;
    const deadline = AbortSignal.timeout(timeoutMs);
    // one signal for the send: its deadline or the caller's stop, whichever comes first
    const send = new AbortController();
    const giveUp = (): void => send.abort();
    deadline.addEventListener('abort', giveUp, { once: true });
    opts.signal?.addEventListener('abort', giveUp, { once: true });
    try {
      // the message as built above; the envelope is what nodemailer would derive from From and To
      const info = await pool.sendMail({
        raw: await buildRawMessage(message),
        envelope: { from: message.from.address, to: [message.to.address] },
        signal: send.signal,
      });
      const accepted = info.accepted.map(String);
      const rejected = info.rejected.map(String);
      if (accepted.length === 0) {
        throw new MailConnectionError({
          side: 'smtp',
          kind: 'rejected',
          message: `SMTP server ${endpoint(config)} accepted no recipient: ${info.response}`,
          host: config.host,
          port: config.port,
          serverResponse: info.response,
          permanent: true,
          secret: config.password,
          username: config.username,
        });
      }
      return { accepted, rejected, response: info.response };
    } catch (err) {
      if (err instanceof MailConnectionError) throw err;
      if (opts.signal?.aborted) throw abortedError('smtp', config);
      // as verifySmtp: silence after the greeting is a slow server, silence before it says nothing about the port
      if (deadline.aborted) {
        throw greeting.greeted() ? timeoutError(config, timeoutMs) : noGreetingError(config, timeoutMs, explained);
      }
      throw toMailError(err, config, timeoutMs, greeting.greeted(), explained);
    } finally {
      deadline.removeEventListener('abort', giveUp);
      opts.signal?.removeEventListener('abort', giveUp);
    }
  }

  return {
    async send(message: OutgoingMail): Promise<SendResult> {
      if (closed) throw new Error('SMTP sender is closed');
      if (opts.signal?.aborted) throw abortedError('smtp', config);
      try {
        return await sendOnce(message, false);
      } catch (err) {
        // a refused access token (revoked or expired early): once more on a new pool with a new token
        if (
          !config.oauth ||
          !(err instanceof MailConnectionError) ||
          err.kind !== 'auth' ||
          err.code === 'OAUTH_REVOKED'
        )
          throw err;
        closePool();
        transport = undefined;
        try {
          return await sendOnce(message, true);
        } catch (retryErr) {
          throw retryErr instanceof MailConnectionError ? refusedWithFreshToken(retryErr) : retryErr;
        }
      }
    },
    close(): void {
      closed = true;
      opts.signal?.removeEventListener('abort', closePool);
      closePool();
    },
  };
}

function endpoint(config: MailServerConfig): string {
  return `${config.host}:${config.port}`;
}

/** No greeting before the deadline: "no answer within N s" on a public host, the uniform answer elsewhere. */
function noGreetingError(config: MailServerConfig, timeoutMs: number, explained: boolean): MailConnectionError {
  return unreachableError(
    'smtp',
    config,
    `no greeting within ${formatSeconds(timeoutMs)}`,
    'ETIMEDOUT',
    undefined,
    explained ? { unreached: 'no_answer', timeoutMs } : undefined,
  );
}

function timeoutError(config: MailServerConfig, timeoutMs: number, code?: string): MailConnectionError {
  return new MailConnectionError({
    side: 'smtp',
    kind: 'timeout',
    message: `SMTP server ${endpoint(config)} did not answer within ${formatSeconds(timeoutMs)}`,
    host: config.host,
    port: config.port,
    code: code ?? 'ETIMEDOUT',
    secret: config.password,
    username: config.username,
  });
}

/**
 * Maps whatever nodemailer threw onto the one error contract. `greeted`: the server's greeting
 * arrived (see greetingWatch), so a timeout is a slow mail server rather than a port that says nothing.
 * `explained`: the host is public (or listed by the operator), so a failure before the greeting
 * may say what happened.
 */
function toMailError(
  err: unknown,
  config: MailServerConfig,
  timeoutMs: number,
  greeted = false,
  explained = false,
): MailConnectionError {
  if (err instanceof MailConnectionError) return err;
  const e = (err ?? {}) as NodemailerError;
  const code = e.code;
  const response = typeof e.response === 'string' ? e.response.trim() : undefined;
  const base = {
    side: 'smtp' as const,
    host: config.host,
    port: config.port,
    secret: config.password,
    username: config.username,
    ...(code ? { code } : {}),
    ...(response ? { serverResponse: response } : {}),
  };
  const where = endpoint(config);

  // Everything before a mail server's greeting (refused, silent, a foreign banner, a failed
  // implicit-TLS handshake) gets one answer that says nothing about the port.
  if (e.command === 'CONN' || code === 'EDNS') {
    if (greeted && code === 'ETIMEDOUT') return timeoutError(config, timeoutMs, code);
    const tlsFailure = tlsFailureOf(err);
    // nodemailer wraps a refused connection as ESOCKET; the socket's own code is in its text
    const socketCode = code === 'ESOCKET' ? /\b(ECONNREFUSED|ETIMEDOUT)\b/.exec(e.message ?? '')?.[1] : code;
    const unreached = explained ? unreachedCauseOf(socketCode, tlsFailure) : undefined;
    return unreachableError(
      'smtp',
      config,
      `${code ?? 'error'}: ${response ?? e.message ?? String(err)}`,
      code,
      tlsFailure,
      unreached ? { unreached, timeoutMs } : undefined,
    );
  }
  if (code === 'EAUTH' || code === 'ENOAUTH') {
    return new MailConnectionError({
      ...base,
      kind: 'auth',
      message: `SMTP login refused by ${where}: ${response ?? e.message ?? 'authentication failed'}`,
    });
  }
  if (code === 'ETIMEDOUT' || code === 'EABORT' || e.name === 'AbortError') {
    return timeoutError(config, timeoutMs, code);
  }
  if (e.responseCode !== undefined && e.responseCode >= 400 && (code === 'EENVELOPE' || code === 'EMESSAGE')) {
    const permanent = e.permanent ?? e.responseCode >= 500;
    const rejectedResponse = e.rejectedErrors?.[0]?.response ?? response;
    const recipient = e.rejected?.[0] ?? e.recipient;
    return new MailConnectionError({
      ...base,
      ...(rejectedResponse ? { serverResponse: rejectedResponse } : {}),
      kind: 'rejected',
      permanent,
      message:
        code === 'EENVELOPE'
          ? `SMTP server ${where} refused ${recipient ? `recipient ${recipient}` : 'the envelope'}: ${rejectedResponse ?? e.message}`
          : `SMTP server ${where} refused the message: ${rejectedResponse ?? e.message}`,
    });
  }
  const original = e.originalCode ?? (isNetworkCode(code) ? code : undefined);
  if (
    code === 'ECONNECTION' ||
    code === 'ESOCKET' ||
    code === 'EDNS' ||
    code === 'ETLS' ||
    code === 'EPROXY' ||
    isNetworkCode(code)
  ) {
    // OpenSSL's own text goes to the log only; the tenant reads what it means
    const tlsFailure = tlsFailureOf(err);
    const tls =
      tlsFailure === 'untrusted_certificate'
        ? 'its TLS certificate is not trusted'
        : /STARTTLS/i.test(e.message ?? '')
          ? 'the server does not offer STARTTLS'
          : code === 'ETLS' || tlsFailure
            ? 'the TLS handshake failed'
            : undefined;
    const what = describeNetworkCode(original) ?? tls ?? 'the connection failed';
    return new MailConnectionError({
      ...base,
      ...(original ? { code: original } : {}),
      ...(tlsFailure ? { tlsFailure } : {}),
      secure: config.secure,
      reason: `${code ?? 'error'}: ${e.message ?? String(err)}`,
      kind: 'connection',
      message: `Cannot connect to SMTP server ${where}: ${what}`,
    });
  }
  return new MailConnectionError({
    ...base,
    kind: 'protocol',
    message: `SMTP server ${where} failed: ${response ?? e.message ?? String(err)}`,
  });
}
