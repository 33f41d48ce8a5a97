// Whatever imapflow throws, mapped onto the one mail error contract (errors.ts), with messages a
// tenant can act on and nothing about the network given away while connecting.
import type { ImapFlowError } from 'imapflow';
import {
  MailConnectionError,
  describeNetworkCode,
  formatSeconds,
  isNetworkCode,
  tlsFailureOf,
  unreachableError,
  unreachedCauseOf,
  type MailErrorKind,
  type MailServerConfig,
} from './errors.js';

export function endpoint(config: MailServerConfig): string {
  return `${config.host}:${config.port}`;
}

export function timeoutError(config: MailServerConfig, timeoutMs: number, what: string): MailConnectionError {
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

/**
 * What is known of a connection that never got to a greeting: whether its host's failures may be
 * told by cause (ResolvedEndpoint.explained) and whether anything came back on the socket.
 */
export interface ConnectReach {
  explained: boolean;
  spoke(): boolean;
}

/**
 * The reach of the connection `client.connect()` has just opened. A plain connection that received
 * bytes but no greeting met something else than an IMAP server (an SSH or HTTP banner); over
 * implicit TLS the handshake's own bytes say nothing, so only plain connections count.
 */
export function reachOf(client: object, config: MailServerConfig, explained: boolean): ConnectReach {
  // imapflow opens its socket synchronously inside connect() (no proxy is ever configured)
  const socket = (client as { socket?: { bytesRead?: number } | null }).socket ?? undefined;
  return { explained, spoke: () => !config.secure && (socket?.bytesRead ?? 0) > 0 };
}

/** The answer for a connection that got no greeting before the deadline (see unreachableError). */
export function noGreetingError(
  config: MailServerConfig,
  timeoutMs: number,
  reach?: ConnectReach,
): MailConnectionError {
  const unreached = reach?.explained ? (reach.spoke() ? 'not_mail_server' : 'no_answer') : undefined;
  return unreachableError(
    'imap',
    config,
    `no greeting and login within ${formatSeconds(timeoutMs)}`,
    'ETIMEOUT',
    undefined,
    unreached ? { unreached, timeoutMs } : undefined,
  );
}

/** Maps whatever imapflow threw onto the one error contract. */
export function toMailError(
  err: unknown,
  config: MailServerConfig,
  timeoutMs: number,
  what: string,
  reach?: ConnectReach,
): MailConnectionError {
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
    const tlsFailure = tlsFailureOf(err);
    let unreached = reach?.explained ? unreachedCauseOf(code, tlsFailure) : undefined;
    if (unreached === 'no_answer' && reach?.spoke()) unreached = 'not_mail_server';
    return unreachableError(
      'imap',
      config,
      `${code ?? 'error'}: ${line ?? e.message ?? String(err)}`,
      code,
      tlsFailure,
      unreached ? { unreached, timeoutMs } : undefined,
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
