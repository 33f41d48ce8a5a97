// The daily DNS checks of every mailbox warming up, and the rule built on them: a mailbox whose
// SPF or DMARC has failed without a break for `pauseAfterMs` (WARMUP_DNS_PAUSE_HOURS, 72 h by
// default) is paused with the reason and its fix, and resumes by itself once both pass again.
// Receivers junk or refuse mail that fails SPF or DMARC, so warming up through it only teaches
// them the domain sends unauthenticated mail. A DNS server that does not answer proves nothing:
// it neither starts, ends nor lengthens a failure, and never pauses a mailbox. The blocklists of
// the domain and its sending addresses are asked in the same daily run.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { checkBlocklists, type BlocklistZone } from './blocklists.js';
import {
  mailboxesDueForChecks,
  saveBlocklistResults,
  saveChecks,
  sendingIpsOf,
  type MailboxToCheck,
  type NewListing,
} from './checks.repository.js';
import type { DnsCheck } from './checks.schemas.js';
import { runMailboxChecks } from './dns-checks.js';
import type { DnsResolve } from './dns-resolver.js';

/** A mailbox whose SPF or DMARC fails, or that the rule paused, is checked again this often (else daily). */
export const FAILING_RECHECK_MS = 3_600_000;
/** Mailboxes checked per pass: each waits on DNS, and the pass's other work waits on them. */
const CHECKS_PER_PASS = 4;

export interface DailyChecksSettings {
  resolve: DnsResolve;
  /** Failing SPF or DMARC for this long pauses warmup; 0: never. */
  pauseAfterMs: number;
  /** The blocklists asked once a day (WARMUP_BLOCKLIST_*); none: not asked. */
  blocklistZones?: readonly BlocklistZone[];
}

export interface CheckedMailbox {
  mailbox: MailboxToCheck;
  domain: string;
  checks: DnsCheck[];
  /** Listings that began with this run (not there at the last answer of that list). */
  newListings: NewListing[];
}

/** The checks the rule watches: receivers judge a message by them. */
const RULE_CHECKS = new Set<DnsCheck['check']>(['spf', 'dmarc']);

function hoursBetween(from: Date, to: Date): number {
  return Math.floor((to.getTime() - from.getTime()) / 3_600_000);
}

/** What the owner reads on a mailbox the rule paused (its lastError). */
export function dnsPauseReason(failing: Array<DnsCheck & { failingSince: string }>, now: Date): string {
  const parts = failing.map(
    (check) =>
      `${check.check.toUpperCase()} has failed for ${hoursBetween(new Date(check.failingSince), now)} hours (${check.detail}). Fix: ${check.fix ?? ''}`,
  );
  return `Warmup paused: ${parts.join(' ')} Warmup resumes by itself once SPF and DMARC pass.`;
}

async function applyRule(
  db: Kysely<Database>,
  mailbox: MailboxToCheck,
  saved: Array<DnsCheck & { failingSince: string | null }>,
  settings: DailyChecksSettings,
  now: Date,
): Promise<void> {
  const watched = saved.filter((check) => RULE_CHECKS.has(check.check));
  if (mailbox.paused_for === 'dns') {
    if (watched.every((check) => check.status === 'pass')) {
      await applyMailboxEvent(db, mailbox.id, { type: 'dns-fixed', at: now }, { at: now });
    }
    return;
  }
  if (settings.pauseAfterMs <= 0 || mailbox.status !== 'active') return;
  const cutoff = now.getTime() - settings.pauseAfterMs;
  const failing = watched.filter(
    (check): check is DnsCheck & { failingSince: string } =>
      check.status === 'fail' && check.failingSince !== null && new Date(check.failingSince).getTime() <= cutoff,
  );
  if (failing.length > 0) {
    await applyMailboxEvent(
      db,
      mailbox.id,
      { type: 'dns-failed', lastError: dnsPauseReason(failing, now) },
      { at: now },
    );
  }
}

/**
 * One pass of the daily checks over the mailboxes due (warming up and not checked today, or
 * failing SPF/DMARC or paused by the rule and not checked for FAILING_RECHECK_MS): each result
 * kept, the rule applied. Returns what was checked, for the `check.failed` events.
 */
export async function runDueChecks(
  db: Kysely<Database>,
  settings: DailyChecksSettings,
  now: Date,
): Promise<CheckedMailbox[]> {
  const today = new Date(`${now.toISOString().slice(0, 10)}T00:00:00.000Z`);
  const due = await mailboxesDueForChecks(db, {
    checkedBefore: today,
    recheckBefore: new Date(now.getTime() - FAILING_RECHECK_MS),
    limit: CHECKS_PER_PASS,
  });
  return Promise.all(
    due.map(async (mailbox) => {
      const { domain, checks } = await runMailboxChecks(settings.resolve, mailbox, mailbox.dkim_selector ?? undefined);
      const saved = await saveChecks(db, mailbox.id, checks, now);
      await applyRule(db, mailbox, saved, settings, now);
      // the blocklists once a day, not with the hourly recheck of a failing SPF or DMARC
      const zones = settings.blocklistZones ?? [];
      let newListings: NewListing[] = [];
      if (zones.length > 0 && (mailbox.last_checked_at === null || mailbox.last_checked_at < today.toISOString())) {
        const ips = await sendingIpsOf(db, mailbox.id);
        const results = await checkBlocklists(settings.resolve, zones, domain, ips);
        newListings = await saveBlocklistResults(db, mailbox.id, results, now);
      }
      return { mailbox, domain, checks, newListings };
    }),
  );
}
