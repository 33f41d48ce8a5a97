/*
 * What the receiving provider thought of a warmup email, read from the header fields it wrote:
 * SPF, DKIM, DMARC and ARC from its own Authentication-Results, Microsoft's SCL and BCL, and a
 * SpamAssassin-style spam score.
 *
 * Only the receiver's word counts. Anybody can put an Authentication-Results field into the mail
 * they send, so a field counts only when its authserv-id is the receiving provider's own (Gmail's
 * `mx.google.com`, a Yahoo host, the mailbox's own domain…) and, of those, the topmost one:
 * a receiving server writes its fields above everything that came with the message (RFC 8601 §5).
 * Microsoft writes no authserv-id; a field without one counts only on a Microsoft mailbox.
 *
 * Every parser here reads what a sender could write, so each runs in one pass over a bounded
 * input: at most MAX_FIELDS fields of a name, each cut at MAX_FIELD_CHARS, no regex that can
 * backtrack.
 */
import type { HeaderField } from '../mail/headers.js';

export type AuthResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror' | 'policy';

export interface ReceiverVerdict {
  /** The authserv-id of the Authentication-Results that was read ('' for Microsoft's, which has none). */
  authservId: string | null;
  spf: AuthResult | null;
  dkim: AuthResult | null;
  dmarc: AuthResult | null;
  arc: AuthResult | null;
  /** Microsoft's spam confidence level, -1..9 (5 and up: junk). */
  scl: number | null;
  /** Microsoft's bulk complaint level, 0..9. */
  bcl: number | null;
  /** A SpamAssassin-style score (X-Spam-Status / X-Spam-Score). */
  spamScore: number | null;
}

/** Who received the message: decides whose Authentication-Results are the receiver's own. */
export interface Receiver {
  /** The mailbox's provider preset (gmail, outlook, yahoo, zoho, icloud, fastmail, custom). */
  provider: string;
  email: string;
  /** The mailbox's IMAP host (a custom domain on Microsoft 365 reads outlook.office365.com). */
  imapHost: string;
}

/** Fields of one name read at most; a receiver writes one or two. */
export const MAX_FIELDS = 20;
/** Characters of one field read at most; a real Authentication-Results is a few hundred. */
export const MAX_FIELD_CHARS = 4096;

const RESULTS = new Set<AuthResult>([
  'pass',
  'fail',
  'softfail',
  'neutral',
  'none',
  'temperror',
  'permerror',
  'policy',
]);

/** authserv-id suffixes each provider writes. */
const PROVIDER_AUTHSERV: Record<string, string[]> = {
  gmail: ['mx.google.com', 'google.com'],
  outlook: ['outlook.com', 'hotmail.com', 'office365.com'],
  yahoo: ['yahoo.com', 'yahoodns.net', 'aol.com'],
  icloud: ['icloud.com', 'apple.com', 'me.com'],
  zoho: ['zohomail.com', 'zoho.com', 'zoho.eu'],
  fastmail: ['messagingengine.com', 'fastmail.com'],
};

const MICROSOFT_HOSTS = ['outlook.com', 'office365.com', 'hotmail.com'];

function endsWithDomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

function isMicrosoft(receiver: Receiver): boolean {
  const host = receiver.imapHost.toLowerCase();
  return receiver.provider === 'outlook' || MICROSOFT_HOSTS.some((d) => endsWithDomain(host, d));
}

/** The domain a host belongs to, for authserv-ids: `imap.example.com` → `example.com`; an address gives none. */
function parentDomain(host: string): string | null {
  const labels = host.toLowerCase().split('.');
  if (
    labels.length < 2 ||
    labels.every((l) => l !== '' && l.length <= 3 && [...l].every((c) => c >= '0' && c <= '9'))
  ) {
    return null;
  }
  return labels.length > 2 ? labels.slice(1).join('.') : labels.join('.');
}

/** Whether an authserv-id ('' when the field has none) is the receiving provider's own. */
export function isReceiverAuthserv(authservId: string, receiver: Receiver): boolean {
  const id = authservId.toLowerCase();
  if (id === '') return isMicrosoft(receiver);
  const domains = [...(PROVIDER_AUTHSERV[receiver.provider] ?? [])];
  if (isMicrosoft(receiver)) domains.push(...PROVIDER_AUTHSERV.outlook);
  const at = receiver.email.lastIndexOf('@');
  if (at >= 0) domains.push(receiver.email.slice(at + 1).toLowerCase());
  const parent = parentDomain(receiver.imapHost);
  if (parent) domains.push(parent);
  return domains.some((domain) => domain !== '' && endsWithDomain(id, domain));
}

/**
 * The domains under which each big provider runs its own IMAP servers. Nobody else can name a host
 * there, and TLS with a verified certificate is required on mail connections, so a mailbox read
 * from such a host is held by that provider, whatever preset its owner chose.
 */
const PROVIDER_HOST_DOMAINS: Record<string, string[]> = {
  gmail: ['gmail.com', 'googlemail.com'],
  outlook: ['office365.com', 'outlook.com', 'hotmail.com'],
  yahoo: ['yahoo.com', 'aol.com'],
  icloud: ['me.com', 'icloud.com'],
  zoho: ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp'],
  fastmail: ['fastmail.com'],
};

/** The big provider whose own servers hold the mailbox, read from its IMAP host; null for any other server. */
export function hostingProvider(receiver: Receiver): string | null {
  const host = receiver.imapHost.toLowerCase();
  if (host === '') return null;
  for (const [provider, domains] of Object.entries(PROVIDER_HOST_DOMAINS)) {
    if (domains.some((domain) => endsWithDomain(host, domain))) return provider;
  }
  return null;
}

/**
 * Whether a verdict may stand for the sender, given who holds the receiving mailbox.
 *
 * In the shared pool a receiver of another workspace runs its own server (or owns its mailbox) and
 * can write any Authentication-Results it likes, under its own domain as authserv-id. So:
 * - a receiver of the sender's own workspace is believed as before (its owner is the sender's);
 * - a receiver of another workspace only when a big provider's own servers hold it (its IMAP host
 *   is under that provider's domains, see PROVIDER_HOST_DOMAINS) and the verdict was read from
 *   that provider's own authserv-id (`mx.google.com`, none at Microsoft…), not from the mailbox's
 *   domain or IMAP host, which the tenant controls. Such a field was written by the provider.
 * Anything else (another tenant's own server, a preset claimed on a host of its own, a verdict with
 * no Authentication-Results of the provider) is not recorded at all, so it can neither move the
 * sender's displayed verdicts nor raise or clear a problem.
 */
export function isTrustedVerdict(verdict: ReceiverVerdict, receiver: Receiver, sameWorkspace: boolean): boolean {
  if (sameWorkspace) return true;
  const provider = hostingProvider(receiver);
  const authservId = verdict.authservId;
  if (provider === null || authservId === null) return false;
  if (authservId === '') return provider === 'outlook';
  return (PROVIDER_AUTHSERV[provider] ?? []).some((domain) => endsWithDomain(authservId, domain));
}

/** The values of the first MAX_FIELDS fields called `name`, each cut at MAX_FIELD_CHARS, topmost first. */
function boundedValues(fields: readonly HeaderField[], name: string): string[] {
  const values: string[] = [];
  for (const field of fields) {
    if (field.name !== name) continue;
    values.push(field.value.length > MAX_FIELD_CHARS ? field.value.slice(0, MAX_FIELD_CHARS) : field.value);
    if (values.length >= MAX_FIELDS) break;
  }
  return values;
}

/**
 * The `;`-separated parts of a structured value, comments `( … )` and quoted strings removed, in
 * one pass (comments nest; a `;` inside one separates nothing).
 */
export function splitStructured(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
      continue;
    }
    if (depth > 0) {
      if (c === '\\') i++;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      continue;
    }
    if (c === '(') {
      depth = 1;
      current += ' ';
    } else if (c === '"') {
      quoted = true;
      current += ' ';
    } else if (c === ';') {
      parts.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current.trim());
  return parts;
}

/** `method=result` at the start of a resinfo part: `dkim=pass header.d=x` → ['dkim', 'pass']. */
function methodResult(part: string): [string, string] | null {
  const eq = part.indexOf('=');
  if (eq <= 0) return null;
  const method = part.slice(0, eq).trim().toLowerCase();
  let end = eq + 1;
  while (end < part.length && part[end] !== ' ' && part[end] !== '\t') end++;
  return [method, part.slice(eq + 1, end).toLowerCase()];
}

export interface AuthenticationResults {
  /** '' when the field names none (Microsoft's). */
  authservId: string;
  results: Map<string, AuthResult>;
}

/** One Authentication-Results value. A method seen twice (two DKIM signatures) counts as `pass` if either passed. */
export function parseAuthenticationResults(value: string): AuthenticationResults {
  const parts = splitStructured(value.length > MAX_FIELD_CHARS ? value.slice(0, MAX_FIELD_CHARS) : value);
  const first = parts[0] ?? '';
  const firstToken = first.split(/[ \t\r\n]/, 1)[0] ?? '';
  // Microsoft starts with the first result: `spf=pass (sender IP is …) smtp.mailfrom=…`
  const hasAuthserv = firstToken !== '' && !firstToken.includes('=');
  const authservId = hasAuthserv ? firstToken.toLowerCase() : '';
  const resinfo = hasAuthserv ? parts.slice(1) : parts;
  const results = new Map<string, AuthResult>();
  for (const part of resinfo) {
    // several results may share a part when a writer leaves out the `;` (Microsoft's `dmarc=pass action=none`)
    const pair = methodResult(part);
    if (!pair) continue;
    const [method, result] = pair;
    if (!RESULTS.has(result as AuthResult)) continue;
    const known = results.get(method);
    if (known === undefined || (known !== 'pass' && result === 'pass')) results.set(method, result as AuthResult);
  }
  return { authservId, results };
}

/** `KEY:value` of a Microsoft report (`CIP:1.2.3.4;CTRY:;SCL:1;…`), as an integer in range. */
function reportNumber(value: string, key: string, min: number, max: number): number | null {
  for (const part of value.split(';')) {
    const colon = part.indexOf(':');
    if (colon < 0 || part.slice(0, colon).trim().toUpperCase() !== key) continue;
    const number = Number(part.slice(colon + 1).trim());
    if (Number.isInteger(number) && number >= min && number <= max) return number;
  }
  return null;
}

/** `score=4.2` (or `hits=`) of an X-Spam-Status value. */
function spamStatusScore(value: string): number | null {
  for (const token of value.split(/[ \t\r\n,]/)) {
    const eq = token.indexOf('=');
    if (eq < 0) continue;
    const key = token.slice(0, eq).toLowerCase();
    if (key !== 'score' && key !== 'hits') continue;
    return boundedScore(token.slice(eq + 1));
  }
  return null;
}

function boundedScore(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > 12) return null;
  const score = Number(trimmed);
  return Number.isFinite(score) && Math.abs(score) <= 1000 ? score : null;
}

/**
 * The receiver's verdict on a message from the header fields the receiving side wrote
 * (topmost first, as in the message). Whatever it did not say is null.
 */
export function receiverVerdict(fields: readonly HeaderField[], receiver: Receiver): ReceiverVerdict {
  const verdict: ReceiverVerdict = {
    authservId: null,
    spf: null,
    dkim: null,
    dmarc: null,
    arc: null,
    scl: null,
    bcl: null,
    spamScore: null,
  };
  for (const value of boundedValues(fields, 'authentication-results')) {
    const parsed = parseAuthenticationResults(value);
    if (!isReceiverAuthserv(parsed.authservId, receiver)) continue;
    verdict.authservId = parsed.authservId;
    verdict.spf = parsed.results.get('spf') ?? null;
    verdict.dkim = parsed.results.get('dkim') ?? null;
    verdict.dmarc = parsed.results.get('dmarc') ?? null;
    verdict.arc = parsed.results.get('arc') ?? null;
    break;
  }
  if (isMicrosoft(receiver)) {
    // Microsoft replaces these on every message it receives; elsewhere they came with the mail
    const report = boundedValues(fields, 'x-forefront-antispam-report')[0];
    if (report !== undefined) verdict.scl = reportNumber(report, 'SCL', -1, 9);
    const scl = boundedValues(fields, 'x-ms-exchange-organization-scl')[0];
    if (verdict.scl === null && scl !== undefined) {
      const n = Number(scl.trim());
      if (Number.isInteger(n) && n >= -1 && n <= 9) verdict.scl = n;
    }
    const antispam = boundedValues(fields, 'x-microsoft-antispam')[0];
    if (antispam !== undefined) verdict.bcl = reportNumber(antispam, 'BCL', 0, 9);
  }
  // The big providers write no X-Spam-Status: one there came from the sender's side.
  if (!['gmail', 'outlook', 'yahoo'].includes(receiver.provider)) {
    const status = boundedValues(fields, 'x-spam-status')[0];
    if (status !== undefined) verdict.spamScore = spamStatusScore(status);
    const score = boundedValues(fields, 'x-spam-score')[0];
    if (verdict.spamScore === null && score !== undefined) verdict.spamScore = boundedScore(score);
  }
  return verdict;
}

/** A verdict as the columns that keep it (receiver_verdicts, placement_test_copies). */
export function verdictColumns(verdict: ReceiverVerdict) {
  return {
    authserv_id: verdict.authservId,
    spf: verdict.spf,
    dkim: verdict.dkim,
    dmarc: verdict.dmarc,
    arc: verdict.arc,
    scl: verdict.scl,
    bcl: verdict.bcl,
    spam_score: verdict.spamScore,
  };
}
