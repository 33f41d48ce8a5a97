// The DNS pause rule, built on the daily checks (checks/daily-checks.ts, which run it after each
// mailbox's check): a mailbox whose SPF or DMARC has failed without a break for `pauseAfterMs`
// (WARMUP_DNS_PAUSE_HOURS, 72 h by default) is paused with the reason and its fix, and resumes by
// itself once both pass again. Receivers junk or refuse mail that fails SPF or DMARC, so warming up
// through it only teaches them the domain sends unauthenticated mail. A DNS server that does not
// answer proves nothing: its `unreachable` neither starts nor ends a failure, so it never pauses a
// mailbox. It lives with the mailbox's state, which it changes through mailbox-state.ts.
import type { Kysely } from 'kysely';
import type { DnsCheck } from '../checks/checks.schemas.js';
import type { Database } from '../db/schema.js';
import { applyMailboxEvent } from './mailbox-state.js';

/** One mailbox's saved checks, as the rule reads them. */
export interface CheckedForRule {
  mailbox: { id: string; status: string; paused_for: 'dns' | null };
  /** Each check with the time it has been failing since (null: not failing). */
  saved: Array<DnsCheck & { failingSince: string | null }>;
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

/**
 * The rule over one mailbox's fresh checks: `dns-failed` for an active mailbox failing long enough
 * (never with `pauseAfterMs` 0), `dns-fixed` for one it paused once SPF and DMARC both pass.
 */
export async function applyDnsPauseRule(
  db: Kysely<Database>,
  { mailbox, saved }: CheckedForRule,
  settings: { pauseAfterMs: number },
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
