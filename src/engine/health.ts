import { utcDay } from '../calendar.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { wilsonLower } from './confidence.js';
import { loadWeighedEvidence, NO_EVIDENCE } from './evidence.js';
import { judgeDueMailboxes, type JudgementDeps, type JudgementOptions } from './judgements.js';
import { listForHealth, setVolumeFactor } from './mailbox-engine-state.repository.js';
import { emailDomain } from './partners.js';
import { applyProviderVerdict } from './provider-signals.js';
import type { DeliveryCounts } from '../interactions/interactions.repository.js';
import { windowStart } from './reputation.js';

/** The health guard judges the last 7 days. */
export const HEALTH_WINDOW_DAYS = 7;
/** A bare rate over fewer samples than these proves nothing. */
export const HEALTH_MIN_FOUND = 20;
export const HEALTH_MIN_SENT = 20;
/**
 * Mail found (nearly) all in spam is slowed down sooner, on a confidence bound instead of a count:
 * when even the lower 95 % Wilson bound of the spam rate is over the 20 % line, the true rate is
 * over it too (5 of 5 in spam: at least 57 %; 8 of 8: 68 %; 4 of 5: 38 %). Never on fewer found
 * than this, so one unlucky day of two or three messages does not move a mailbox. Stopping needs
 * its owner to resume the mailbox, so it still waits for HEALTH_MIN_FOUND found; halving is undone
 * by the guard itself once the rate is back under the line.
 */
export const HEALTH_BOUND_MIN_FOUND = 5;
/** Above this spam rate the volume is halved; at or below it, restored. */
export const SPAM_RATE_SLOW_DOWN = 0.2;
/** Above these rates warmup stops until the owner fixes the cause. */
export const SPAM_RATE_STOP = 0.4;
export const BOUNCE_RATE_STOP = 0.1;
export const REDUCED_VOLUME_FACTOR = 0.5;

export type HealthVerdict =
  | { action: 'none' }
  | { action: 'slow-down' | 'restore'; volumeFactor: number }
  | { action: 'stop'; lastError: string };

function percent(part: number, whole: number): string {
  return `${Math.round((part / whole) * 100)}%`;
}

/**
 * Whether the spam rate is over `line` for a slowdown: as a bare rate over HEALTH_MIN_FOUND found
 * or more, or by its lower 95 % Wilson bound over HEALTH_BOUND_MIN_FOUND found or more.
 */
export function spamOver(counts: Pick<DeliveryCounts, 'found' | 'spam'>, line: number): boolean {
  if (counts.found >= HEALTH_MIN_FOUND && counts.spam / counts.found > line) return true;
  return counts.found >= HEALTH_BOUND_MIN_FOUND && wilsonLower(counts.spam, counts.found) > line;
}

/**
 * What the guard does with a mailbox, given its last 7 days and its current volume factor.
 * `lastError` tells the owner what to fix, in words a mailbox owner understands.
 */
export function assessHealth(email: string, counts: DeliveryCounts, volumeFactor: number): HealthVerdict {
  const domain = emailDomain(email);
  if (counts.sent >= HEALTH_MIN_SENT && counts.bounced / counts.sent > BOUNCE_RATE_STOP) {
    return {
      action: 'stop',
      lastError:
        `Warmup stopped: ${percent(counts.bounced, counts.sent)} of this mailbox's warmup emails bounced over the last 7 days ` +
        `(${counts.bounced} of ${counts.sent}). Check that the account may send (not suspended, no sending limit reached) ` +
        `and that SPF and DKIM for ${domain} are set up, then resume the mailbox.`,
    };
  }
  if (counts.found >= HEALTH_MIN_FOUND && counts.spam / counts.found > SPAM_RATE_STOP) {
    return {
      action: 'stop',
      lastError:
        `Warmup stopped: ${percent(counts.spam, counts.found)} of this mailbox's warmup emails landed in spam over the last 7 days ` +
        `(${counts.spam} of ${counts.found}). Check SPF, DKIM and DMARC for ${domain} and whether the domain is on a blocklist, ` +
        `then resume the mailbox.`,
    };
  }
  const spamHigh = spamOver(counts, SPAM_RATE_SLOW_DOWN);
  if (spamHigh && volumeFactor !== REDUCED_VOLUME_FACTOR)
    return { action: 'slow-down', volumeFactor: REDUCED_VOLUME_FACTOR };
  // Recovered: the rate is back under the line (or there is not enough mail to say it is high).
  const spamLow = counts.found === 0 || counts.spam / counts.found <= SPAM_RATE_SLOW_DOWN;
  if (spamLow && volumeFactor !== 1) return { action: 'restore', volumeFactor: 1 };
  return { action: 'none' };
}

export interface HealthSummary {
  slowedDown: string[];
  restored: string[];
  stopped: string[];
  /** Domains (`workspace domain`) the providers' feeds hold after this run (provider-signals.ts). */
  providerHeld: string[];
}

/**
 * Applies the guard as of `at` to the active mailboxes due a judgement: every one whose evidence
 * changed since it was last judged (a peer found its mail, it bounced or was lost: the guard acts in
 * the same cycle as before), and every one once a day (its 7-day window moves on: a recovered rate
 * restores the volume). Login and send failures are counted where they happen (sender and reader);
 * this judges what the peers saw of the mail sent over the last 7 days, as far as it is trusted
 * (evidence.ts): no workspace alone can slow down or stop another's.
 */
export async function applyHealthGuard(
  deps: JudgementDeps,
  at: Date,
  options: JudgementOptions = {},
): Promise<HealthSummary> {
  const { db } = deps;
  const today = utcDay(at);
  const summary: HealthSummary = { slowedDown: [], restored: [], stopped: [], providerHeld: [] };
  await judgeDueMailboxes(deps, 'health_due_at', at, options, async (ids) => {
    const evidence = await loadWeighedEvidence(db, windowStart(today, HEALTH_WINDOW_DAYS), at, ids);
    const mailboxes = await listForHealth(db, ids);
    // the providers' verdicts are per domain: judged once for all of a domain's mailboxes in the batch
    const domains = new Map(mailboxes.map((m) => [`${m.workspace_id} ${emailDomain(m.email)}`, m.workspace_id]));
    for (const [key, workspaceId] of domains) {
      if (await applyProviderVerdict(db, workspaceId, key.slice(workspaceId.length + 1), at))
        summary.providerHeld.push(key);
    }
    for (const mailbox of mailboxes) {
      const mailboxCounts = evidence.get(mailbox.id)?.trusted ?? NO_EVIDENCE;
      const verdict = assessHealth(mailbox.email, mailboxCounts, Number(mailbox.volume_factor));
      switch (verdict.action) {
        case 'none':
          break;
        case 'stop':
          if (
            (await applyMailboxEvent(db, mailbox.id, { type: 'stopped', lastError: verdict.lastError }, { at }))
              ?.stopped
          )
            summary.stopped.push(mailbox.id);
          break;
        case 'slow-down':
        case 'restore':
          await setVolumeFactor(db, mailbox.id, verdict.volumeFactor, at);
          (verdict.action === 'slow-down' ? summary.slowedDown : summary.restored).push(mailbox.id);
          break;
      }
    }
  });
  return summary;
}
