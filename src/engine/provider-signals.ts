// The providers' own verdicts in the health guard (docs/explanation/engine-rules.md, "The providers'
// feeds"). A domain is held — its mailboxes stay on their ramp day, volume not increased — while
//   - Gmail Postmaster Tools reports a user-reported spam rate at or above 0.3 % for it on its latest
//     day with a rate, or
//   - Microsoft SNDS rates red, on its latest day, an address the domain's mail left from (the
//     sources of its DMARC aggregate reports of the last 30 days);
// and released when neither holds. Only fresh data counts (the last SIGNAL_DAYS days): a feed that
// cannot be fetched adds no rows, and absence of data is not evidence, so it never holds anything
// (its error is shown on the domain page instead).
import type { Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Database } from '../db/schema.js';
import { enqueueEvent } from '../webhooks/webhooks.repository.js';
import {
  findHold,
  latestGmailSpamRate,
  latestSndsDaysOfDomain,
  removeHold,
  saveHold,
} from './provider-signals.repository.js';

/** Google's bulk-sender line: at or above this user-reported spam rate the domain is held. */
export const GMAIL_SPAM_RATE_HOLD = 0.003;
/** Provider days older than this many days before today are no longer a signal. */
export const SIGNAL_DAYS = 7;

export type ProviderVerdict =
  { held: false } | { held: true; signal: 'gmail_spam_rate' | 'snds_red'; day: string; reason: string };

/** `0.4 %`: a fraction as a percentage with up to two decimals. */
export function percentOf(rate: number): string {
  return `${Number((rate * 100).toFixed(2))} %`;
}

/** What the providers' feeds say of `domain` as of `at`. */
export async function judgeDomain(
  db: Kysely<Database>,
  workspaceId: string,
  domain: string,
  at: Date,
): Promise<ProviderVerdict> {
  const today = utcDay(at);
  const since = addDays(today, -SIGNAL_DAYS);
  const gmail = await latestGmailSpamRate(db, workspaceId, domain, since);
  if (gmail && gmail.spam_rate >= GMAIL_SPAM_RATE_HOLD) {
    return {
      held: true,
      signal: 'gmail_spam_rate',
      day: gmail.day,
      reason:
        `Gmail Postmaster reports a spam rate of ${percentOf(gmail.spam_rate)} for ${domain} on ${gmail.day}: ` +
        `warmup holds this domain's volume until it falls below ${percentOf(GMAIL_SPAM_RATE_HOLD)}.`,
    };
  }
  const red = (await latestSndsDaysOfDomain(db, workspaceId, domain, today, since)).find(
    (row) => row.filter_result === 'red',
  );
  if (red) {
    return {
      held: true,
      signal: 'snds_red',
      day: red.day,
      reason:
        `Microsoft SNDS rates ${red.ip}, an address ${domain}'s mail left from, red on ${red.day}: ` +
        `warmup holds this domain's volume until SNDS no longer rates it red.`,
    };
  }
  return { held: false };
}

/**
 * Brings the domain's hold in line with its verdict; a domain that turns held or released makes a
 * `domain.provider_signal` event (in the same transaction as the hold). Returns whether it is held.
 */
export async function applyProviderVerdict(
  db: Kysely<Database>,
  workspaceId: string,
  domain: string,
  at: Date,
): Promise<boolean> {
  const verdict = await judgeDomain(db, workspaceId, domain, at);
  const inTransaction = <T>(work: (trx: Kysely<Database>) => Promise<T>) =>
    db.isTransaction ? work(db) : db.transaction().execute(work);
  return inTransaction(async (trx) => {
    const hold = await findHold(trx, workspaceId, domain);
    if (verdict.held) {
      const changed = !hold || hold.reason !== verdict.reason;
      if (!changed) return true;
      await saveHold(trx, { workspaceId, domain, ...verdict, at: at.toISOString() });
      if (!hold) {
        await enqueueEvent(trx, {
          workspaceId,
          type: 'domain.provider_signal',
          at,
          data: { domain, state: 'held', signal: verdict.signal, day: verdict.day, reason: verdict.reason },
        });
      }
      return true;
    }
    if (hold) {
      await removeHold(trx, workspaceId, domain);
      await enqueueEvent(trx, {
        workspaceId,
        type: 'domain.provider_signal',
        at,
        data: {
          domain,
          state: 'cleared',
          signal: hold.signal,
          day: hold.day,
          reason: `The providers' feeds no longer report a problem for ${domain}: warmup ramps its volume again.`,
        },
      });
    }
    return false;
  });
}
