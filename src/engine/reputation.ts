import { addDays, utcDay } from '../calendar.js';
import { recordReputation, type DeliveryCounts } from '../interactions/interactions.repository.js';
import { boundedScore, loadWeighedEvidence, NO_WEIGHED_EVIDENCE } from './evidence.js';
import { judgeDueMailboxes, type JudgementDeps, type JudgementOptions } from './judgements.js';
import { listWithReputation } from './mailbox-engine-state.repository.js';

/** Reputation looks at the last 14 days of a mailbox's own sent mail. */
export const REPUTATION_WINDOW_DAYS = 14;
/** Below this many found messages the score is pulled towards the neutral 50. */
export const REPUTATION_MIN_FOUND = 5;
export const NEUTRAL_REPUTATION = 50;

const SPAM_PENALTY = 40;
const SPAM_RATE_AT_FULL_PENALTY = 0.4;
/**
 * Past the full penalty, spam keeps costing: up to this many points more as the rate goes on to
 * 100 %, so mail found all in spam scores 20 (at risk), not 60 beside a new mailbox's 50.
 */
const SPAM_PENALTY_PAST_FULL = 40;
const BOUNCE_PENALTY = 40;
const BOUNCE_RATE_AT_FULL_PENALTY = 0.1;
const LOST_PENALTY = 20;
const LOST_RATE_AT_FULL_PENALTY = 0.2;

function rate(part: number, whole: number): number {
  if (whole <= 0) return part > 0 ? 1 : 0;
  return Math.min(1, part / whole);
}

/**
 * 0..100: start from 100, lose up to 40 for spam placement (all 40 at a 40% spam rate, and up to
 * 40 more between 40% and 100%: all in spam is 20), up to 40
 * for bounces (at 10% of sent), up to 20 for mail never found (at 20% of sent). With fewer than
 * 5 found messages there is too little evidence, so the score is blended towards 50 in
 * proportion to what was found (no mail found at all: 50).
 */
export function reputationScore(counts: DeliveryCounts): number {
  const spamRate = rate(counts.spam, counts.found);
  const raw =
    100 -
    SPAM_PENALTY * Math.min(1, spamRate / SPAM_RATE_AT_FULL_PENALTY) -
    SPAM_PENALTY_PAST_FULL * Math.max(0, (spamRate - SPAM_RATE_AT_FULL_PENALTY) / (1 - SPAM_RATE_AT_FULL_PENALTY)) -
    BOUNCE_PENALTY * Math.min(1, rate(counts.bounced, counts.sent) / BOUNCE_RATE_AT_FULL_PENALTY) -
    LOST_PENALTY * Math.min(1, rate(counts.lost, counts.sent) / LOST_RATE_AT_FULL_PENALTY);
  const evidence = Math.min(1, counts.found / REPUTATION_MIN_FOUND);
  const score = evidence * raw + (1 - evidence) * NEUTRAL_REPUTATION;
  return Math.max(0, Math.min(100, Math.round(score)));
}

export interface ReputationSummary {
  /** Active mailboxes scored. */
  scored: number;
  /** Of those, the ones whose score or today's history row changed. */
  updated: number;
}

/** The first instant of the window that ends on `day` (UTC days, like every rollup). */
export function windowStart(day: string, days: number): Date {
  return new Date(`${addDays(day, -(days - 1))}T00:00:00.000Z`);
}

/**
 * Scores the active mailboxes due a score as of `at` (once a day, or at once when the evidence about
 * their mail changed: judgements.ts) on their mail sent over the last 14 days, weighed by the pool's
 * trust rules (evidence.ts), and keeps the result as today's history row (UTC day, like every
 * rollup) and as the current reputation. A score that did not move writes nothing. Paused and
 * failing mailboxes keep the score they had.
 */
export async function updateReputation(
  deps: JudgementDeps,
  at: Date,
  options: JudgementOptions = {},
): Promise<ReputationSummary> {
  const { db } = deps;
  const today = utcDay(at);
  let updated = 0;
  let scored = 0;
  await judgeDueMailboxes(deps, 'reputation_due_at', at, options, async (ids) => {
    const evidence = await loadWeighedEvidence(db, windowStart(today, REPUTATION_WINDOW_DAYS), at, ids);
    const mailboxes = await listWithReputation(db, ids, today);
    scored += mailboxes.length;
    for (const mailbox of mailboxes) {
      const score = boundedScore(reputationScore, evidence.get(mailbox.id) ?? NO_WEIGHED_EVIDENCE);
      if (mailbox.recorded !== null && Number(mailbox.recorded) === score && Number(mailbox.reputation) === score)
        continue;
      await db.transaction().execute((trx) => recordReputation(trx, mailbox.id, today, score));
      updated += 1;
    }
  });
  return { scored, updated };
}
