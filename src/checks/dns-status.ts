// A mailbox's DNS and blocklists in a few words: the one wording of the mailbox list's DNS column,
// the overview's DNS line and the PDF report, so that none of them says it differently.
import type { BlocklistListing, DnsCheck, DnsStatus } from './checks.schemas.js';

/** SPF and DMARC first: Gmail and Yahoo refuse bulk mail without them, and the DNS rule pauses on them. */
const ORDER: ReadonlyArray<DnsCheck['check']> = ['spf', 'dmarc', 'dkim', 'mx'];
const NAMES: Record<DnsCheck['check'], string> = { spf: 'SPF', dmarc: 'DMARC', dkim: 'DKIM', mx: 'MX' };

type CheckResult = Pick<DnsCheck, 'check' | 'status' | 'fix'>;
type ListingResult = Pick<BlocklistListing, 'zone' | 'subject' | 'status' | 'delistUrl'>;

/** "SPF", "SPF and DMARC", "SPF, DMARC and MX". */
function named(checks: CheckResult[]): string {
  const names = checks.map((check) => NAMES[check.check]);
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function byOrder(a: CheckResult, b: CheckResult): number {
  return ORDER.indexOf(a.check) - ORDER.indexOf(b.check);
}

function listingFix(listing: ListingResult): string {
  const where = listing.delistUrl ? ` at ${listing.delistUrl}` : '';
  return `Find and stop what got ${listing.subject} listed on ${listing.zone}, then ask for its removal${where}.`;
}

/**
 * The verdict of a mailbox's latest DNS checks and blocklist answers (the daily run's): a failing
 * check or a listing is an error, with the fix of the one that matters most; a check the DNS server
 * did not answer is a warning (nothing is known of it); a DKIM check without a selector is not a
 * failure (the selector is learned from mail). No check stored yet: not checked.
 */
export function dnsStatus(checks: readonly CheckResult[], blocklists: readonly ListingResult[]): DnsStatus {
  const sorted = [...checks].sort(byOrder);
  const failing = sorted.filter((check) => check.status === 'fail');
  const listed = blocklists.filter((listing) => listing.status === 'listed');
  const lists = new Set(listed.map((listing) => listing.zone)).size;
  if (failing.length > 0 || listed.length > 0) {
    const parts = [
      failing.length > 0 && `${named(failing)} failing`,
      lists > 0 && `listed on ${lists} ${lists === 1 ? 'blocklist' : 'blocklists'}`,
    ].filter((part): part is string => typeof part === 'string');
    const label = parts.join('; ');
    return {
      tone: 'error',
      label: label.charAt(0).toUpperCase() + label.slice(1),
      fix: failing[0]?.fix ?? listingFix(listed[0]!),
    };
  }
  if (checks.length === 0) return { tone: 'unknown', label: 'Not checked yet', fix: null };
  const unanswered = sorted.filter((check) => check.status === 'unreachable');
  if (unanswered.length > 0) {
    return { tone: 'warn', label: `${named(unanswered)} not answered`, fix: unanswered[0]!.fix };
  }
  return { tone: 'ok', label: 'DNS ok', fix: null };
}
