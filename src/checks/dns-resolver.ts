// The resolver the DNS checks ask: the operator's (WARMUP_DNS_SERVERS) or the system's, with a
// short timeout and one try, so a dead server makes a check `unreachable` in seconds.
import { promises as dns } from 'node:dns';

/** `(name, rrtype)` → the records, as node's dns.resolve answers (the shape mailauth expects). */
export type DnsResolve = (name: string, rrtype: string) => Promise<unknown[]>;

export function createDnsResolver(options: { servers?: readonly string[]; timeoutMs?: number } = {}): DnsResolve {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 3_000, tries: 1 });
  if (options.servers && options.servers.length > 0) resolver.setServers([...options.servers]);
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<unknown[]>;
}

/** No such name or no such record: the answer is "nothing published", not a failure to ask. */
export function isNoRecord(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}
