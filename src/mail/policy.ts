// Which mail servers a tenant may make this service connect to, and how. A tenant names
// any host it likes, so a name must not become a way into the operator's network (SSRF):
// the address actually connected to is checked, after resolution, right before connecting.
// Passwords travel only over TLS with a checked certificate unless the operator says
// otherwise for a named host.
import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';

export interface MailPolicy {
  /**
   * Host names, addresses and CIDR ranges a tenant may name although they are loopback,
   * private, link-local or otherwise internal (e.g. a mail server on the operator's LAN).
   */
  allowedHosts: readonly string[];
  /** Host names or addresses the mail layer may log in to without TLS. */
  plaintextHosts: readonly string[];
  /**
   * Internal hosts (names, addresses, CIDR ranges) whose connection failures are told by cause, as
   * a public host's are. Unset: an internal host's failures all get the one uniform answer, since
   * its port states are facts about the operator's network.
   */
  explainedHosts?: readonly string[];
  /** Extra trusted CA certificates (PEM), on top of the system roots. */
  ca?: string;
  /** The host name SMTP connections greet with (EHLO); unset: the machine's (helo-name.ts). */
  heloName?: string;
}

/** Public hosts only, TLS always, system CAs: what applies when the operator set nothing. */
export const DEFAULT_MAIL_POLICY: MailPolicy = Object.freeze({ allowedHosts: [], plaintextHosts: [] });

/** The operator's settings (see config.ts) as a policy; reads the CA file once. */
export function loadMailPolicy(settings: {
  allowedHosts: readonly string[];
  plaintextHosts: readonly string[];
  explainedHosts?: readonly string[] | undefined;
  caFile?: string | undefined;
  hostname?: string | undefined;
}): MailPolicy {
  const policy: MailPolicy = { allowedHosts: settings.allowedHosts, plaintextHosts: settings.plaintextHosts };
  if (settings.explainedHosts?.length) policy.explainedHosts = settings.explainedHosts;
  if (settings.caFile) policy.ca = readFileSync(settings.caFile, 'utf8');
  if (settings.hostname) policy.heloName = settings.hostname;
  return policy;
}

// Special-purpose ranges (RFC 6890 and the IANA registries) a tenant must not reach.
const INTERNAL_RANGES: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT (and Alibaba's metadata service)
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation
  ['203.0.113.0', 24, 'ipv4'], // documentation
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 128, 'ipv6'], // unspecified
  ['::1', 128, 'ipv6'], // loopback
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 32, 'ipv6'], // Teredo, which embeds an IPv4 server and client (obfuscated)
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4, which embeds any IPv4 address
  ['fc00::', 7, 'ipv6'], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

const internal = new BlockList();
for (const [network, prefix, family] of INTERNAL_RANGES) internal.addSubnet(network, prefix, family);

/** The eight 16-bit groups of an IPv6 address (which isIP accepted). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const [a, b, c, d] = dotted.split('.').map(Number);
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((g) => parseInt(g, 16));
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits, in the forms that reach it:
 * IPv4-mapped (::ffff:0:0/96) and IPv4-compatible (::/96), which the host's own stack
 * delivers to the IPv4 address, IPv4-translated (::ffff:0:0:0/96, SIIT) and the NAT64
 * well-known prefix (64:ff9b::/96), which the network translates to it.
 */
function embeddedIpv4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6);
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!(mapped || compatible || translated || nat64)) return undefined;
  return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
}

/**
 * An IPv6 address that embeds an IPv4 one ('::ffff:10.0.0.1', '64:ff9b::a00:1') as the IPv4
 * address it reaches; anything else as it is (lower case). Node's BlockList would match every
 * IPv4 address against a ::ffff:0:0/96 rule, so embedded addresses are unwrapped here instead.
 */
function canonicalAddress(address: string): string {
  const lower = address.toLowerCase();
  if (isIP(lower) !== 6) return lower;
  return embeddedIpv4(ipv6Groups(lower)) ?? lower;
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** True for an address on loopback, a private or link-local network, multicast, metadata… */
export function isInternalAddress(address: string): boolean {
  const canonical = canonicalAddress(address);
  return internal.check(canonical, family(canonical));
}

/** 'a/b' with an address and a prefix length that fits it. */
function parseCidr(entry: string): { network: string; prefix: number } | undefined {
  const slash = entry.indexOf('/');
  if (slash < 0) return undefined;
  const network = entry.slice(0, slash);
  const prefixText = entry.slice(slash + 1);
  const prefix = Number(prefixText);
  const version = isIP(network);
  if (version === 0 || !/^\d{1,3}$/.test(prefixText) || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { network, prefix };
}

/** What a host-list entry may be: an address, a CIDR range or a host name. */
export function isValidHostEntry(entry: string): boolean {
  if (isIP(entry) !== 0 || parseCidr(entry) !== undefined) return true;
  return /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$/i.test(entry);
}

/** Whether `host` (as named) or `address` (as resolved) is on a host list. */
export function matchesHostList(list: readonly string[], host: string, address: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  const canonical = canonicalAddress(address);
  for (const raw of list) {
    const entry = raw.toLowerCase();
    const cidr = parseCidr(entry);
    if (cidr) {
      const range = new BlockList();
      range.addSubnet(cidr.network, cidr.prefix, family(cidr.network));
      // an operator's IPv6 range (64:ff9b::/96) names the address as written, an IPv4 one what it embeds
      if (range.check(canonical, family(canonical))) return true;
      if (isIP(address) === 6 && range.check(address.toLowerCase(), 'ipv6')) return true;
    } else if (isIP(entry) !== 0) {
      if (canonicalAddress(entry) === canonical) return true;
    } else if (entry.replace(/\.$/, '') === name) {
      return true;
    }
  }
  return false;
}

export interface ResolvedEndpoint {
  /** The checked address to connect to. */
  address: string;
  /** The name to check the certificate against (and send as SNI); absent for an address. */
  servername?: string;
  /** Whether this server may be logged in to without TLS. */
  plaintextAllowed: boolean;
  /**
   * Whether a failure to reach it may be told by cause (refused, silent, not a mail server): true
   * for a public address, whose port states anyone on the internet can see, and for the
   * operator's explainedHosts; false for the rest of the operator's network.
   */
  explained: boolean;
}

/** A host the policy does not let a tenant reach; `reason` is for the server log only. */
export class RefusedHostError extends Error {
  override readonly name = 'RefusedHostError';
  readonly code = 'EREFUSEDHOST';
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Resolves `host` once and picks the first address the policy lets a tenant reach; the mail
 * libraries then connect to exactly that address (with the name kept for the certificate
 * check), so a name that resolves elsewhere at connect time cannot slip past the check.
 */
export async function resolveMailHost(
  host: string,
  policy: MailPolicy = DEFAULT_MAIL_POLICY,
): Promise<ResolvedEndpoint> {
  const name = stripBrackets(host.trim());
  const addresses = isIP(name) !== 0 ? [name] : (await dns.lookup(name, { all: true })).map((a) => a.address);
  const allowed = addresses.find(
    (address) => !isInternalAddress(address) || matchesHostList(policy.allowedHosts, name, address),
  );
  if (allowed === undefined) {
    throw new RefusedHostError(`${name} resolves only to internal addresses (${addresses.join(', ')})`);
  }
  const endpoint: ResolvedEndpoint = {
    address: allowed,
    plaintextAllowed: matchesHostList(policy.plaintextHosts, name, allowed),
    explained: !isInternalAddress(allowed) || matchesHostList(policy.explainedHosts ?? [], name, allowed),
  };
  if (isIP(name) === 0) endpoint.servername = name.replace(/\.$/, '');
  return endpoint;
}

// Building a context from ~150 root certificates costs milliseconds: once per policy, not per connection.
const secureContexts = new WeakMap<MailPolicy, SecureContext>();

/** TLS options that always check the certificate: system roots plus the operator's CA. */
export function tlsOptions(policy: MailPolicy = DEFAULT_MAIL_POLICY): {
  rejectUnauthorized: true;
  minVersion: 'TLSv1.2';
  secureContext?: SecureContext;
} {
  if (!policy.ca) return { rejectUnauthorized: true, minVersion: 'TLSv1.2' };
  let secureContext = secureContexts.get(policy);
  if (!secureContext) {
    secureContext = createSecureContext({ ca: [...rootCertificates, policy.ca], minVersion: 'TLSv1.2' });
    secureContexts.set(policy, secureContext);
  }
  return { rejectUnauthorized: true, minVersion: 'TLSv1.2', secureContext };
}
