// Blocklists: the mailbox's domain against domain lists (URIBL, e.g. Spamhaus DBL) and the
// addresses its mail was seen sent from (engine/sender-evidence.ts) against address lists (DNSBL,
// e.g. Spamhaus ZEN, Barracuda, SpamCop), asked through the same resolver as the DNS checks.
// A listing is an A answer in 127.0.0.0/8; no such name is "not listed"; anything else
// (timeout, SERVFAIL, or a list's own error codes such as Spamhaus's 127.255.255.x for a refused
// resolver) is `unreachable`: nothing is known. Zones named with a Spamhaus DQS key are shown
// without the key.
import { isIP } from 'node:net';
import { isNoRecord, type DnsResolve } from './dns-resolver.js';

export interface BlocklistZone {
  /** What the user sees (never a DQS key). */
  name: string;
  /** The suffix asked: `<reversed ip>.<query>` or `<domain>.<query>`. */
  query: string;
  kind: 'ip' | 'domain';
  /** Where a listed address or domain asks to be removed; null when the list has no known page. */
  delistUrl: string | null;
}

export interface BlocklistSettings {
  ipZones: string[];
  domainZones: string[];
  /** WARMUP_SPAMHAUS_DQS_KEY: Spamhaus's zones through the operator's Data Query Service account. */
  spamhausDqsKey?: string;
}

export const DEFAULT_IP_ZONES = ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net'];
export const DEFAULT_DOMAIN_ZONES = ['dbl.spamhaus.org'];

const SPAMHAUS_PUBLIC = new Set(['zen.spamhaus.org', 'dbl.spamhaus.org']);

const DELIST_URLS: Array<[suffix: string, url: string]> = [
  ['spamhaus.org', 'https://check.spamhaus.org/'],
  ['spamhaus.net', 'https://check.spamhaus.org/'],
  ['barracudacentral.org', 'https://www.barracudacentral.org/rbl/removal-request'],
  ['spamcop.net', 'https://www.spamcop.net/bl.shtml'],
  ['surbl.org', 'https://surbl.org/surbl-analysis'],
  ['uribl.com', 'https://admin.uribl.com/'],
];

function delistUrlOf(zone: string): string | null {
  return DELIST_URLS.find(([suffix]) => zone === suffix || zone.endsWith(`.${suffix}`))?.[1] ?? null;
}

/** The zones to ask, Spamhaus's public ones moved to DQS (`<key>.zen.dq.spamhaus.net`) when a key is given. */
export function blocklistZones(settings: BlocklistSettings): BlocklistZone[] {
  const zone = (name: string, kind: BlocklistZone['kind']): BlocklistZone => {
    const lower = name.toLowerCase().replace(/\.$/, '');
    if (settings.spamhausDqsKey && SPAMHAUS_PUBLIC.has(lower)) {
      const dq = lower.replace('.spamhaus.org', '.dq.spamhaus.net');
      return { name: dq, query: `${settings.spamhausDqsKey}.${dq}`, kind, delistUrl: delistUrlOf(dq) };
    }
    return { name: lower, query: lower, kind, delistUrl: delistUrlOf(lower) };
  };
  return [...settings.ipZones.map((z) => zone(z, 'ip')), ...settings.domainZones.map((z) => zone(z, 'domain'))];
}

/** `1.2.3.4` → `4.3.2.1`; an IPv6 address as its 32 nibbles reversed (RFC 5782). */
export function reversedAddress(ip: string): string {
  if (isIP(ip) === 4) return ip.split('.').reverse().join('.');
  const [head = '', tail] = ip.toLowerCase().split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const nibbles = [...headGroups, ...zeros, ...tailGroups].map((g) => g.padStart(4, '0')).join('');
  return nibbles.split('').reverse().join('.');
}

export interface BlocklistResult {
  zone: string;
  kind: BlocklistZone['kind'];
  /** The address or domain asked about. */
  subject: string;
  status: 'listed' | 'clear' | 'unreachable';
  /** The list's answer (return codes, and its TXT reason when it gives one). */
  detail: string;
  delistUrl: string | null;
}

/** The TXT reason a list gives for a listing, bounded; empty when it gives none or does not answer. */
async function reasonOf(resolve: DnsResolve, name: string): Promise<string> {
  try {
    const records = (await resolve(name, 'TXT')) as string[][];
    return records
      .map((parts) => parts.join(''))
      .join(' ')
      .slice(0, 300);
  } catch {
    return '';
  }
}

export async function checkBlocklist(
  resolve: DnsResolve,
  zone: BlocklistZone,
  subject: string,
): Promise<BlocklistResult> {
  const base = { zone: zone.name, kind: zone.kind, subject, delistUrl: zone.delistUrl };
  const name = `${zone.kind === 'ip' ? reversedAddress(subject) : subject}.${zone.query}`;
  let codes: string[];
  try {
    codes = ((await resolve(name, 'A')) as string[]).slice(0, 8);
  } catch (error) {
    if (isNoRecord(error)) return { ...base, status: 'clear', detail: `not listed on ${zone.name}` };
    const code = (error as { code?: string }).code ?? 'no answer';
    return { ...base, status: 'unreachable', detail: `${zone.name} did not answer (${code})` };
  }
  const listing = codes.filter((code) => code.startsWith('127.') && !code.startsWith('127.255.255.'));
  if (listing.length === 0) {
    return {
      ...base,
      status: 'unreachable',
      detail: `${zone.name} answered ${codes.join(', ') || 'nothing'}, which is not a listing (a refused or rate-limited resolver)`,
    };
  }
  const reason = await reasonOf(resolve, name);
  return {
    ...base,
    status: 'listed',
    detail: `listed on ${zone.name} (${listing.join(', ')})${reason ? `: ${reason}` : ''}`,
  };
}

/** The domain against the domain lists and each sending address against the address lists, side by side. */
export async function checkBlocklists(
  resolve: DnsResolve,
  zones: readonly BlocklistZone[],
  domain: string,
  sendingIps: readonly string[],
): Promise<BlocklistResult[]> {
  const asks = zones.flatMap((zone) =>
    zone.kind === 'domain' ? [[zone, domain] as const] : sendingIps.map((ip) => [zone, ip] as const),
  );
  return Promise.all(asks.map(([zone, subject]) => checkBlocklist(resolve, zone, subject)));
}
