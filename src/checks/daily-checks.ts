// The daily DNS checks of every mailbox warming up: SPF, DKIM, DMARC and MX once a day (hourly
// while SPF or DMARC fails or the DNS rule keeps the mailbox paused), and the blocklists of the
// domain and its sending addresses once a day. Each result is kept; a failing check or a new
// listing is a `check.failed` event, queued through the webhooks' outbox. The DNS pause rule
// (mailboxes/dns-pause-rule.ts) is handed in and run after each mailbox's check: it changes the
// mailbox's state, which is not this module's to write.
import type { Kysely } from 'kysely';
import { utcDay } from '../calendar.js';
import type { Database } from '../db/schema.js';
import { enqueueEvent, subscribedWorkspaces } from '../webhooks/webhooks.repository.js';
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
/** Mailboxes checked at the same time: each waits on DNS. */
const CHECKS_AT_ONCE = 4;

export interface DailyChecksSettings {
  resolve: DnsResolve;
  /** Failing SPF or DMARC for this long pauses warmup; 0: never (read by the DNS pause rule). */
  pauseAfterMs: number;
  /** The blocklists asked once a day (WARMUP_BLOCKLIST_*); none: not asked. */
  blocklistZones?: readonly BlocklistZone[];
}

export interface CheckedMailbox {
  mailbox: MailboxToCheck;
  domain: string;
  checks: DnsCheck[];
  /** The checks as kept, with the time each has been failing since (null: not failing). */
  saved: Array<DnsCheck & { failingSince: string | null }>;
  /** Listings that began with this run (not there at the last answer of that list). */
  newListings: NewListing[];
}

export interface DailyChecksSummary {
  /** Mailboxes checked. */
  checked: number;
  /** Of those, mailboxes with a failing check or a new listing. */
  failing: number;
}

export interface DailyChecksOptions {
  /** Run after each mailbox's checks are kept (the DNS pause rule). */
  afterCheck?: (checked: CheckedMailbox) => Promise<void>;
  /** Stops between batches (the process is stopping). */
  signal?: AbortSignal;
}

/**
 * The daily checks of every mailbox due (warming up and not checked today, or failing SPF/DMARC or
 * paused by the rule and not checked for FAILING_RECHECK_MS), a few at a time until none is due:
 * each result kept, the rule run, the `check.failed` events queued.
 */
export async function runDueChecks(
  db: Kysely<Database>,
  settings: DailyChecksSettings,
  now: Date,
  options: DailyChecksOptions = {},
): Promise<DailyChecksSummary> {
  const today = new Date(`${utcDay(now)}T00:00:00.000Z`);
  const summary: DailyChecksSummary = { checked: 0, failing: 0 };
  const seen = new Set<string>();
  for (;;) {
    if (options.signal?.aborted) return summary;
    const due = await mailboxesDueForChecks(db, {
      checkedBefore: today,
      recheckBefore: new Date(now.getTime() - FAILING_RECHECK_MS),
      limit: CHECKS_AT_ONCE,
    });
    // a mailbox due again in the same run (a clock that went back) waits for the next run
    if (due.some((mailbox) => seen.has(mailbox.id))) return summary;
    for (const mailbox of due) seen.add(mailbox.id);
    const checked = await Promise.all(due.map((mailbox) => checkMailbox(db, settings, mailbox, today, now, options)));
    summary.checked += checked.length;
    summary.failing += checked.filter((c) => c.newListings.length > 0 || c.checks.some(isFailing)).length;
    if (due.length < CHECKS_AT_ONCE) return summary;
  }
}

const isFailing = (check: DnsCheck) => check.status === 'fail';

async function checkMailbox(
  db: Kysely<Database>,
  settings: DailyChecksSettings,
  mailbox: MailboxToCheck,
  today: Date,
  now: Date,
  options: DailyChecksOptions,
): Promise<CheckedMailbox> {
  const { domain, checks } = await runMailboxChecks(settings.resolve, mailbox, mailbox.dkim_selector ?? undefined);
  const saved = await saveChecks(db, mailbox.id, checks, now);
  // the blocklists once a day, not with the hourly recheck of a failing SPF or DMARC
  const zones = settings.blocklistZones ?? [];
  let newListings: NewListing[] = [];
  if (zones.length > 0 && (mailbox.last_checked_at === null || mailbox.last_checked_at < today.toISOString())) {
    const ips = await sendingIpsOf(db, mailbox.id);
    const results = await checkBlocklists(settings.resolve, zones, domain, ips);
    newListings = await saveBlocklistResults(db, mailbox.id, results, now);
  }
  const checked = { mailbox, domain, checks, saved, newListings };
  await options.afterCheck?.(checked);
  await queueCheckFailures(db, checked, now);
  return checked;
}

/**
 * Each failing check of a mailbox whose workspace subscribes is a `check.failed` event, at most
 * once a day per mailbox and check (the first one the day it goes from pass to fail). A new
 * blocklist listing is one too, once per listing: not again each day it stays listed, and again
 * only once it was cleared and listed anew.
 */
async function queueCheckFailures(
  db: Kysely<Database>,
  { mailbox, domain, checks, newListings }: CheckedMailbox,
  now: Date,
): Promise<void> {
  const failing = checks.filter(isFailing);
  if (failing.length === 0 && newListings.length === 0) return;
  if (!(await subscribedWorkspaces(db, 'check.failed')).includes(mailbox.workspace_id)) return;
  const today = utcDay(now);
  const mailboxRef = { id: mailbox.id, email: mailbox.email, name: mailbox.name };
  for (const listing of newListings) {
    await enqueueEvent(db, {
      workspaceId: mailbox.workspace_id,
      type: 'check.failed',
      at: now,
      dedupeKey: `check.failed:blocklist:${mailbox.id}:${listing.zone}:${listing.subject}:${listing.listedSince}`,
      data: {
        mailbox: mailboxRef,
        domain,
        check: 'blocklist',
        status: 'listed',
        zone: listing.zone,
        kind: listing.kind,
        listed: listing.subject,
        detail: listing.detail,
        listedSince: listing.listedSince,
        delistUrl: listing.delistUrl,
        fix: listing.delistUrl
          ? `Find out why ${listing.subject} is listed on ${listing.zone}, stop the cause, then ask for removal at ${listing.delistUrl}.`
          : `Find out why ${listing.subject} is listed on ${listing.zone}, stop the cause, then ask that list for removal.`,
      },
    });
  }
  for (const check of failing) {
    await enqueueEvent(db, {
      workspaceId: mailbox.workspace_id,
      type: 'check.failed',
      at: now,
      dedupeKey: `check.failed:${mailbox.id}:${check.check}:${today}`,
      data: { mailbox: mailboxRef, domain, ...check, day: today },
    });
  }
}
