// The reverse names of the addresses DMARC reports name as sources: an operator recognises
// `mail-ed1-f44.google.com` or `outbound.mailchimp.com` where `209.85.208.44` says nothing. They are
// asked after the reports are kept, never while parsing, a bounded number per pass, through the
// resolver the DNS checks use (WARMUP_DNS_SERVERS, short timeout, one try).
import type { Kysely } from 'kysely';
import { reversedAddress } from '../checks/blocklists.js';
import type { DnsResolve } from '../checks/dns-resolver.js';
import type { Database } from '../db/schema.js';
import { forEachLimited } from '../jobs/concurrency.js';
import { isInternalAddress } from '../mail/policy.js';

/** Addresses named per pass: a backlog of years of reports is named over passes. */
export const NAMES_PER_PASS = 50;
const LOOKUPS_AT_ONCE = 4;
/**
 * Kept in `dmarc_records.source_name` when the address was asked and has no usable name (none
 * published, a malformed one, or no answer): it is not asked again until a new report names it.
 */
export const NO_NAME = '';

const HOST_NAME = /^[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*$/;

/** A PTR answer as kept: lower case, without the root's dot, a host name of at most 253 characters; else null. */
export function usableName(answer: unknown): string | null {
  if (typeof answer !== 'string' || answer.length > 254) return null;
  const name = answer.toLowerCase().replace(/\.$/, '');
  return name.length <= 253 && HOST_NAME.test(name) ? name : null;
}

/** `192.0.2.1` → `1.2.0.192.in-addr.arpa`; an IPv6 address by its nibbles under `ip6.arpa`. */
export function reverseQueryName(ip: string): string {
  return `${reversedAddress(ip)}.${ip.includes(':') ? 'ip6.arpa' : 'in-addr.arpa'}`;
}

export interface SourceNamesSummary {
  /** Addresses asked (internal ones are not), and of them those that had a usable name. */
  asked: number;
  named: number;
}

/**
 * Names the addresses of kept records that have not been asked yet, NAMES_PER_PASS at most. An
 * internal address (private, loopback, link-local, documentation…) is never asked.
 */
export async function nameDmarcSources(
  db: Kysely<Database>,
  resolve: DnsResolve,
  { signal }: { signal?: AbortSignal } = {},
): Promise<SourceNamesSummary> {
  const rows = await db
    .selectFrom('dmarc_records')
    .where('source_name', 'is', null)
    .select('source_ip')
    .distinct()
    .orderBy('source_ip')
    .limit(NAMES_PER_PASS)
    .execute();
  const summary: SourceNamesSummary = { asked: 0, named: 0 };
  await forEachLimited(rows, LOOKUPS_AT_ONCE, async ({ source_ip: ip }) => {
    if (signal?.aborted) return;
    let name: string | null = null;
    // A report is a tenant's (anyone can mail one to its folder): the reverse name of a private
    // address, answered by the installation's own resolver, would show the tenant the host's network.
    if (!isInternalAddress(ip)) {
      try {
        const answers = await resolve(reverseQueryName(ip), 'PTR');
        name = usableName(answers[0]);
      } catch {
        // no name published, or no answer in time: asked again when a new report names the address
      }
      summary.asked++;
    }
    if (name) summary.named++;
    await db
      .updateTable('dmarc_records')
      .set({ source_name: name ?? NO_NAME })
      .where('source_ip', '=', ip)
      .where('source_name', 'is', null)
      .execute();
  });
  return summary;
}
