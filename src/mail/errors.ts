// What the mail layer (smtp.ts, imap.ts) shares: the connection settings it takes and
// the one error it throws. Every failure of a server, the network or a login becomes a
// MailConnectionError whose message names the server and quotes its answer, so it can
// go straight into a mailbox's lastError or a 422 detail. The password never appears in
// it: the text is built from parts that do not hold it and is scrubbed again at the end.
// A host on the operator's network (refused by the policy, or allowed but internal) that is no
// mail server at all gets one generic message: a tenant must not learn banners or which ports
// are open there. A public host's failure is told by cause (see UnreachedCause).
import { isIP } from 'node:net';
import type { MailPolicy } from './policy.js';

/**
 * How a mailbox that signs in with OAuth 2.0 gets its access token (XOAUTH2 on IMAP and SMTP).
 * `renew` is true after the server refused the last token: the source must get a new one.
 */
export interface OAuthLogin {
  accessToken(renew: boolean): Promise<string>;
}

/**
 * An access token could not be had: `revoked` (the user must sign in again) or the provider is
 * unavailable (try later). The mail layer turns it into a MailConnectionError of its side.
 */
export class TokenUnavailableError extends Error {
  override readonly name = 'TokenUnavailableError';
  constructor(
    message: string,
    readonly revoked: boolean,
  ) {
    super(message);
  }
}

export interface MailServerConfig {
  host: string;
  port: number;
  /** true: implicit TLS (465/993); false: STARTTLS, required unless the policy allows plaintext for the host. */
  secure: boolean;
  username: string;
  /** The app password; empty for a mailbox that signs in with `oauth`. */
  password: string;
  /** Sign in with an OAuth 2.0 access token (XOAUTH2) instead of the password. */
  oauth?: OAuthLogin;
  /** The operator's rules for tenant-named hosts; without one, public hosts and TLS only. */
  policy?: MailPolicy;
}

export type MailSide = 'smtp' | 'imap';
/** `aborted`: the caller gave up (the engine is stopping) — says nothing about the server. */
export type MailErrorKind = 'auth' | 'connection' | 'timeout' | 'rejected' | 'protocol' | 'aborted';

export interface MailConnectionErrorInit {
  side: MailSide;
  kind: MailErrorKind;
  message: string;
  host: string;
  port: number;
  serverResponse?: string;
  /** For 'rejected': true when the server refused for good (5xx), false for a temporary 4xx. */
  permanent?: boolean;
  /** Code of the underlying error (ECONNREFUSED, EAUTH, GREETING_TIMEOUT…), for logs. */
  code?: string;
  /** Password to scrub from the message and the server response. */
  secret?: string;
  /** Login name, to scrub the base64 AUTH PLAIN form of the password too. */
  username?: string;
  /** What really happened, for the server log only (never shown to the tenant). */
  reason?: string;
  /** What the TLS handshake ran into, when it failed (see tlsFailureOf). */
  tlsFailure?: TlsFailure;
  /** Whether the connection was implicit TLS (for the hint on a port that expects the other mode). */
  secure?: boolean;
  /** Why no mail server was reached, when telling it reveals nothing about the operator's network. */
  unreached?: UnreachedCause;
}

/**
 * Why a connection never reached a mail server: `no_such_host` (the name has no public address),
 * `connection_refused` (nothing listens on the port), `no_answer` (connected, and nothing said
 * within the deadline), `not_mail_server` (something answered, but not as an IMAP or SMTP server),
 * `tls_failed` (the TLS handshake failed before any greeting). Only ever set for a public host or
 * one the operator lists in explainedHosts (policy.ts), `no_such_host` aside (see lookupFailure).
 */
export type UnreachedCause = 'no_such_host' | 'connection_refused' | 'no_answer' | 'not_mail_server' | 'tls_failed';

/**
 * `not_tls`: implicit TLS was tried and the server answered in plain text (a STARTTLS or plain
 * port); `untrusted_certificate`: the certificate was not signed by a trusted CA, has expired or
 * does not name the host.
 */
export type TlsFailure = 'not_tls' | 'untrusted_certificate';

export class MailConnectionError extends Error {
  override readonly name = 'MailConnectionError';
  readonly side: MailSide;
  readonly kind: MailErrorKind;
  readonly host: string;
  readonly port: number;
  readonly serverResponse?: string;
  readonly permanent?: boolean;
  readonly code?: string;
  readonly reason?: string;
  readonly tlsFailure?: TlsFailure;
  readonly secure?: boolean;
  readonly unreached?: UnreachedCause;

  constructor(init: MailConnectionErrorInit) {
    super(scrubSecret(init.message, init.secret, init.username));
    this.side = init.side;
    this.kind = init.kind;
    this.host = init.host;
    this.port = init.port;
    if (init.serverResponse !== undefined)
      this.serverResponse = scrubSecret(init.serverResponse, init.secret, init.username);
    if (init.permanent !== undefined) this.permanent = init.permanent;
    if (init.code !== undefined) this.code = init.code;
    if (init.reason !== undefined) this.reason = scrubSecret(init.reason, init.secret, init.username);
    if (init.tlsFailure !== undefined) this.tlsFailure = init.tlsFailure;
    if (init.secure !== undefined) this.secure = init.secure;
    if (init.unreached !== undefined) this.unreached = init.unreached;
  }
}

/**
 * The one answer for a host the policy refuses and for anything short of a mail server's
 * greeting on the operator's network (refused, silent, closed, a foreign banner, a failed
 * implicit-TLS handshake): the same text whatever the port state, so the check cannot be used to
 * scan that network. With `cause` (a public host, see ResolvedEndpoint.explained) the answer
 * says what happened; `timeoutMs` is the deadline a `no_answer` waited.
 */
export function unreachableError(
  side: MailSide,
  config: Pick<MailServerConfig, 'host' | 'port' | 'password' | 'username'> & { secure?: boolean },
  reason: string,
  code?: string,
  tlsFailure?: TlsFailure,
  cause?: { unreached: UnreachedCause; timeoutMs?: number },
): MailConnectionError {
  const uniform = `Could not connect to an ${side.toUpperCase()} server at ${config.host}:${config.port}`;
  return new MailConnectionError({
    side,
    kind: 'connection',
    message: cause ? `${uniform}: ${unreachedPhrase(side, cause.unreached, cause.timeoutMs, tlsFailure)}` : uniform,
    host: config.host,
    port: config.port,
    reason,
    secret: config.password,
    username: config.username,
    ...(code ? { code } : {}),
    ...(tlsFailure ? { tlsFailure } : {}),
    ...(config.secure !== undefined ? { secure: config.secure } : {}),
    ...(cause ? { unreached: cause.unreached } : {}),
  });
}

function unreachedPhrase(
  side: MailSide,
  cause: UnreachedCause,
  timeoutMs: number | undefined,
  tlsFailure: TlsFailure | undefined,
): string {
  switch (cause) {
    case 'tls_failed':
      if (tlsFailure === 'untrusted_certificate') return 'its TLS certificate is not trusted';
      if (tlsFailure === 'not_tls') return 'the TLS handshake failed (the port does not start with TLS)';
      return 'the TLS handshake failed';
    case 'no_such_host':
      return 'no such host name (it has no public address)';
    case 'connection_refused':
      return 'connection refused (nothing listens on that port)';
    case 'no_answer':
      return timeoutMs === undefined ? 'no answer in time' : `no answer within ${formatSeconds(timeoutMs)}`;
    case 'not_mail_server':
      return `not a mail server (something answered, but not as an ${side.toUpperCase()} server)`;
  }
}

/**
 * The answer for a host name that could not be turned into an address this service may connect
 * to. A name that does not exist and a name that resolves only to the operator's network answer
 * alike ("no such host name"), so the check cannot tell which internal names exist; an address
 * the policy refuses keeps the uniform answer.
 */
export function lookupFailure(
  side: MailSide,
  config: Pick<MailServerConfig, 'host' | 'port' | 'password' | 'username'> & { secure?: boolean },
  err: unknown,
): MailConnectionError {
  const code = (err as { code?: unknown } | null)?.code;
  const codeText = typeof code === 'string' ? code : undefined;
  const literal = isIP(config.host.trim().replace(/^\[(.*)\]$/, '$1')) !== 0;
  const unreached = literal ? undefined : unreachedCauseOf(codeText);
  return unreachableError(
    side,
    config,
    err instanceof Error ? err.message : String(err),
    codeText,
    undefined,
    unreached === 'no_such_host' ? { unreached } : undefined,
  );
}

/**
 * Why a connection that failed before any greeting failed, from the socket's error code, or
 * undefined when the code tells nothing a tenant can act on (kept to the uniform answer).
 */
export function unreachedCauseOf(code: string | undefined, tlsFailure?: TlsFailure): UnreachedCause | undefined {
  if (tlsFailure !== undefined || /^ERR_(TLS|SSL)/.test(code ?? '')) return 'tls_failed';
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'ENODATA':
    case 'EREFUSEDHOST':
      return 'no_such_host';
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ETIMEDOUT':
    case 'ETIMEOUT':
    case 'CONNECT_TIMEOUT':
    case 'GREETING_TIMEOUT':
      return 'no_answer';
    case 'EPROTOCOL':
      return 'not_mail_server';
    default:
      return undefined;
  }
}

/**
 * What a failed TLS handshake ran into, from the library's error code or OpenSSL's text (which is
 * never shown: it only picks the hint). Undefined when the failure was not about TLS.
 */
export function tlsFailureOf(err: unknown): TlsFailure | undefined {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const text = typeof e.message === 'string' ? e.message.slice(0, 500) : '';
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    /wrong version number|packet length too long|unknown protocol/i.test(text)
  )
    return 'not_tls';
  if (
    /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code) ||
    /self[- ]signed certificate|unable to (get|verify) .*(certificate|issuer)|certificate has expired|Hostname\/IP does not match certificate/i.test(
      text,
    )
  )
    return 'untrusted_certificate';
  return undefined;
}

/** The access token to log in with, or the failure to get one as this side's MailConnectionError. */
export async function oauthAccessToken(
  side: MailSide,
  config: MailServerConfig & { oauth: OAuthLogin },
  renew: boolean,
): Promise<string> {
  try {
    return await config.oauth.accessToken(renew);
  } catch (err) {
    if (!(err instanceof TokenUnavailableError)) throw err;
    // revoked: a refused login the user must fix; unavailable: like a server that is down
    throw new MailConnectionError({
      side,
      kind: err.revoked ? 'auth' : 'connection',
      message: `${side.toUpperCase()} sign-in for ${config.username}: ${err.message}`,
      host: config.host,
      port: config.port,
      code: err.revoked ? 'OAUTH_REVOKED' : 'OAUTH_UNAVAILABLE',
    });
  }
}

/** A login refused with a token just renewed: the server does not let this account in with OAuth (IMAP or SMTP AUTH off). */
export function refusedWithFreshToken(err: MailConnectionError): MailConnectionError {
  if (err.kind !== 'auth' || err.code === 'OAUTH_REVOKED') return err;
  return new MailConnectionError({
    side: err.side,
    kind: 'auth',
    message: err.message,
    host: err.host,
    port: err.port,
    ...(err.serverResponse !== undefined ? { serverResponse: err.serverResponse } : {}),
    code: 'OAUTH_REFUSED',
  });
}

/**
 * Runs a login with the current access token and, when the server refuses it, once more with a
 * renewed one (a token revoked or expired early). Password logins run once.
 */
export async function withTokenRetry<T>(
  config: MailServerConfig,
  attempt: (accessToken: string | undefined) => Promise<T>,
  side: MailSide,
): Promise<T> {
  if (!config.oauth) return attempt(undefined);
  const login = config as MailServerConfig & { oauth: OAuthLogin };
  try {
    return await attempt(await oauthAccessToken(side, login, false));
  } catch (err) {
    if (!(err instanceof MailConnectionError) || err.kind !== 'auth' || err.code === 'OAUTH_REVOKED') throw err;
  }
  try {
    return await attempt(await oauthAccessToken(side, login, true));
  } catch (err) {
    throw err instanceof MailConnectionError ? refusedWithFreshToken(err) : err;
  }
}

export function isMailConnectionError(err: unknown): err is MailConnectionError {
  return err instanceof MailConnectionError;
}

/**
 * Removes a password from text, including the base64 forms it takes in SMTP AUTH
 * LOGIN/PLAIN and IMAP AUTHENTICATE exchanges, in case a server echoes them back.
 */
export function scrubSecret(text: string, secret: string | undefined, username?: string): string {
  if (!secret) return text;
  const forms = new Set([secret, Buffer.from(secret).toString('base64')]);
  if (username !== undefined) forms.add(Buffer.from(`\0${username}\0${secret}`).toString('base64'));
  let out = text;
  // longest first, so a base64 form is not broken up by replacing a shorter one inside it
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    out = out.split(form).join('***');
  }
  return out;
}

/** "10 s", "0.5 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** A short human phrase for a socket-level error code. */
export function describeNetworkCode(code: string | undefined): string | undefined {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the server';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'host name not found';
    case 'EPIPE':
      return 'connection closed by the server';
    default:
      return undefined;
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EPIPE',
  'EADDRNOTAVAIL',
  'ENETDOWN',
  'EHOSTDOWN',
]);

export function isNetworkCode(code: string | undefined): boolean {
  return (
    code !== undefined &&
    (NETWORK_CODES.has(code) ||
      code.startsWith('ERR_TLS') ||
      code.startsWith('ERR_SSL') ||
      /CERT|SELF_SIGNED/.test(code))
  );
}

/** The error of an operation given up because its caller is stopping. */
export function abortedError(side: MailSide, config: Pick<MailServerConfig, 'host' | 'port'>): MailConnectionError {
  return new MailConnectionError({
    side,
    kind: 'aborted',
    message: `${side.toUpperCase()} session with ${config.host}:${config.port} abandoned: shutting down`,
    host: config.host,
    port: config.port,
    code: 'ABORT_ERR',
  });
}

/**
 * Runs `op` with a deadline, and gives it up at once when `abort.signal` fires. `onTimeout` and
 * `abort.onAbort` must make the operation give up (close sockets) and return the error to throw.
 */
export async function withDeadline<T>(
  op: Promise<T>,
  ms: number,
  onTimeout: () => Error,
  abort?: { signal: AbortSignal | undefined; onAbort: () => Error },
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    const signal = abort?.signal;
    if (!signal) return;
    onAbort = () => reject(abort.onAbort());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([op, deadline]);
  } finally {
    clearTimeout(timer);
    if (onAbort) abort?.signal?.removeEventListener('abort', onAbort);
    // the losing operation may still reject later; nobody waits for it any more
    op.catch(() => undefined);
    deadline.catch(() => undefined);
  }
}

/**
 * Whether a failure heals by itself. `transient`: the server or the network is down, busy or slow
 * (timeouts, refused or reset connections, 4xx replies such as 421/450/451/454, IMAP
 * `[UNAVAILABLE]`/`[INUSE]`): retry later, never the user's fault. `permanent`: only the user can fix
 * it (a refused login — 535, `[AUTHENTICATIONFAILED]` —, a 5xx policy rejection, a host name that
 * does not exist, a TLS certificate the server's name does not match).
 */
export type FailureClass = 'transient' | 'permanent';

// a host name that does not exist, or one the operator's host policy refuses (mail/policy.ts)
const PERMANENT_NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_NONAME', 'EREFUSEDHOST']);

/** The three-digit SMTP reply code at the start of a server answer, if any. */
export function smtpReplyCode(text: string | undefined): number | undefined {
  const match = /^\s*([245]\d\d)[\s-]/.exec(text ?? '');
  return match ? Number(match[1]) : undefined;
}

function isTlsFailure(err: MailConnectionError): boolean {
  const code = err.code ?? '';
  return (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    /CERT|SELF_SIGNED/.test(code) ||
    code === 'ETLS' ||
    err.tlsFailure !== undefined ||
    /\bTLS (handshake failed|certificate)\b|does not offer STARTTLS/.test(err.message)
  );
}

export function classifyMailFailure(err: MailConnectionError): FailureClass {
  const answer = err.serverResponse ?? '';
  const reply = smtpReplyCode(answer) ?? smtpReplyCode(err.message.replace(/^[^:]*:\s*/, ''));
  switch (err.kind) {
    case 'timeout':
    case 'aborted':
      return 'transient';
    case 'connection':
      if (isTlsFailure(err) || PERMANENT_NETWORK_CODES.has(err.code ?? '')) return 'permanent';
      return 'transient';
    case 'auth':
      if (reply !== undefined) return reply >= 500 ? 'permanent' : 'transient';
      if (/\[(UNAVAILABLE|INUSE|LIMIT|SERVERBUG)\]/i.test(answer) || /temporar/i.test(answer)) return 'transient';
      return 'permanent';
    case 'rejected':
      return err.permanent ? 'permanent' : 'transient';
    case 'protocol':
      if (reply !== undefined) return reply >= 500 ? 'permanent' : 'transient';
      return 'transient';
  }
}

/**
 * What went wrong with a login check, in the terms a mailbox owner can act on. Each problem has
 * one fix; the dashboard headlines the `title` and shows the `fix` under it.
 */
export const CONNECTION_PROBLEMS = [
  'wrong_password',
  'reconnect_required',
  'app_password_required',
  'tls_mode_mismatch',
  'untrusted_certificate',
  'host_unreachable',
  'no_such_host',
  'connection_refused',
  'no_answer',
  'not_mail_server',
  'timeout',
  'server_refused',
] as const;
export type ConnectionProblem = (typeof CONNECTION_PROBLEMS)[number];

export interface ConnectionDiagnosis {
  side: MailSide;
  problem: ConnectionProblem;
  /** A headline: "Wrong password", "SSL/TLS does not match the port"… */
  title: string;
  /** One sentence: what to change. */
  fix: string;
}

/** Ports that speak TLS from the first byte, and those that start in plain text (STARTTLS). */
const IMPLICIT_TLS_PORTS = new Set([465, 993]);
const STARTTLS_PORTS = new Set([25, 143, 587, 2525]);

// A provider's answer when it wants an app password (Gmail 534 5.7.9, Yahoo, iCloud, Microsoft's
// "basic authentication is disabled"), as opposed to a plainly wrong password.
const APP_PASSWORD_ANSWER =
  /application-specific password|app(lication)? password|app-specific|5\.7\.9|WebLoginRequired|basic auth(entication)? is disabled|BasicAuthBlocked/i;

function otherModePort(side: MailSide, secure: boolean): number {
  if (side === 'smtp') return secure ? 587 : 465;
  return secure ? 143 : 993;
}

/**
 * The problem behind a failed login check. `appPasswordProvider`: the mailbox's provider refuses
 * account passwords (providers.ts), so a refused login most likely wants an app password.
 */
export function diagnoseMailFailure(
  err: MailConnectionError,
  opts: { appPasswordProvider?: boolean; oauth?: boolean } = {},
): ConnectionDiagnosis {
  const side = err.side;
  const label = side.toUpperCase();
  const port = err.port;
  const diagnosis = (problem: ConnectionProblem, title: string, fix: string): ConnectionDiagnosis => ({
    side,
    problem,
    title,
    fix,
  });

  // a mailbox that signs in with OAuth has no password to check: a refused sign-in means the
  // grant was revoked or has expired, and only connecting it again fixes that
  if (err.kind === 'auth' && opts.oauth) {
    return diagnosis(
      'reconnect_required',
      'Access no longer granted',
      `The provider no longer accepts this mailbox's sign-in over ${label}: reconnect the mailbox to grant access again.`,
    );
  }
  if (err.kind === 'auth' && classifyMailFailure(err) === 'permanent') {
    if (APP_PASSWORD_ANSWER.test(`${err.serverResponse ?? ''} ${err.message}`)) {
      return diagnosis(
        'app_password_required',
        'App password needed',
        `The ${label} server wants an app password, not the account password: create one in the account's security settings and paste it here.`,
      );
    }
    return diagnosis(
      'wrong_password',
      'Wrong password or user name',
      opts.appPasswordProvider
        ? `Check the user name, and use an app password (this provider refuses the account password over ${label}).`
        : `Check the user name and password; if the account uses two-step verification, use an app password.`,
    );
  }
  if (err.tlsFailure === 'untrusted_certificate') {
    return diagnosis(
      'untrusted_certificate',
      'Server certificate not trusted',
      `The ${label} server's certificate is self-signed, expired or made out to another name: use the host name it names, or ask the operator to trust its CA (WARMUP_MAIL_CA_FILE).`,
    );
  }
  if (err.kind === 'connection') {
    const secure = err.secure;
    if (err.tlsFailure === 'not_tls' || (secure === true && STARTTLS_PORTS.has(port))) {
      return diagnosis(
        'tls_mode_mismatch',
        'SSL/TLS does not match the port',
        `Port ${port} starts without encryption: turn SSL/TLS off to use STARTTLS, or use the SSL/TLS port (usually ${otherModePort(side, false)}).`,
      );
    }
    if (secure === false && IMPLICIT_TLS_PORTS.has(port)) {
      return diagnosis(
        'tls_mode_mismatch',
        'SSL/TLS does not match the port',
        `Port ${port} expects SSL/TLS from the start: turn SSL/TLS on, or use the STARTTLS port (usually ${otherModePort(side, true)}).`,
      );
    }
    if (/TLS/.test(err.message) && secure !== true) {
      return diagnosis(
        'tls_mode_mismatch',
        'The server would not start TLS',
        `The ${label} server did not upgrade to TLS on port ${port}: turn SSL/TLS on and use its SSL/TLS port (usually ${otherModePort(side, false)}).`,
      );
    }
    switch (err.unreached) {
      case 'no_such_host':
        return diagnosis(
          'no_such_host',
          `${label} host name not found`,
          `Check the spelling of the ${label} host name (your provider's help pages list it): it must be the mail server's public name.`,
        );
      case 'connection_refused':
        return diagnosis(
          'connection_refused',
          `${label} server refused the connection`,
          `Nothing accepts connections on port ${port} of that host: check the ${label} port (usually ${side === 'smtp' ? '465 or 587' : '993 or 143'}) and the host name.`,
        );
      case 'no_answer':
        return diagnosis(
          'no_answer',
          `${label} server did not answer`,
          `Nothing answered in time: check the ${label} host name and port, whether SSL/TLS should be on, and that no firewall holds the connection.`,
        );
      case 'not_mail_server':
        return diagnosis(
          'not_mail_server',
          `Not an ${label} server`,
          `Something else answers on port ${port} of that host: check the ${label} host name and port (usually ${side === 'smtp' ? '465 or 587' : '993 or 143'}).`,
        );
      case 'tls_failed':
        return diagnosis(
          'tls_mode_mismatch',
          'The TLS handshake failed',
          `The ${label} server on port ${port} did not complete a TLS handshake: check whether SSL/TLS should be on for this port.`,
        );
      case undefined:
        break;
    }
    return diagnosis(
      'host_unreachable',
      `${label} server not reachable`,
      `Check the ${label} host name and port (your provider's help pages list them), and that the server accepts connections from this service.`,
    );
  }
  if (err.kind === 'timeout' || err.kind === 'aborted') {
    return diagnosis(
      'timeout',
      `${label} server did not answer in time`,
      `The ${label} server is slow or busy right now: try again in a few minutes; if it lasts, check the host and port.`,
    );
  }
  if (classifyMailFailure(err) === 'transient') {
    return diagnosis(
      'server_refused',
      `${label} server temporarily unavailable`,
      `The ${label} server said to try later: try again in a few minutes; nothing in the settings needs to change.`,
    );
  }
  return diagnosis(
    'server_refused',
    `${label} server refused the account`,
    `Check that the account may use ${label} (access turned on in its settings, not suspended, no sending limit reached).`,
  );
}
