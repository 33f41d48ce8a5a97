/*
 * Reputation and the health guard judge each mailbox once a day, or at once when the evidence about
 * its mail changed (a peer found it, it bounced or was lost: markJudgementsDue), not every mailbox
 * every cycle. Due mailboxes are claimed in buckets (one statement each, FOR UPDATE SKIP LOCKED on
 * PostgreSQL), so workers share the day's work and a dead worker's bucket is due again after the
 * claim runs out; mailboxes not due cost a cycle nothing.
 */
import { createHash } from 'node:crypto';
import { utcDay, addDays } from '../calendar.js';
import type { EngineDeps } from './engine-deps.js';
import { claimJudgements, finishJudgements, type Judgement } from './mailbox-engine-state.repository.js';

/** Mailboxes judged per claimed bucket. */
export const JUDGEMENT_BUCKET = 200;
/** How long a claimed bucket is ours: judging one is a few statements. */
export const JUDGEMENT_CLAIM_MS = 5 * 60_000;
/** The daily judgements of a new UTC day are spread over its first hour, each mailbox at its own minute. */
const DAILY_SPREAD_MS = 60 * 60_000;

export type JudgementDeps = Pick<EngineDeps, 'db' | 'dialect'>;

export interface JudgementOptions {
  /** Judge every active mailbox, due or not (`ignoreSchedule` cycles, tests). */
  ignoreSchedule?: boolean;
}

/**
 * When a mailbox is judged again without new evidence: in the first hour of the next UTC day (its
 * windows are whole UTC days, so nothing moves before), at a minute of its own.
 */
export function nextDailyJudgement(mailboxId: string, at: Date): Date {
  const offset = createHash('sha256').update(mailboxId).digest().readUInt32BE(0) % DAILY_SPREAD_MS;
  return new Date(Date.parse(`${addDays(utcDay(at), 1)}T00:00:00.000Z`) + offset);
}

/** Claims the due mailboxes bucket by bucket and hands each bucket to `judge`; returns how many were judged. */
export async function judgeDueMailboxes(
  deps: JudgementDeps,
  column: Judgement,
  at: Date,
  options: JudgementOptions,
  judge: (ids: string[]) => Promise<void>,
): Promise<number> {
  let judged = 0;
  let after = options.ignoreSchedule ? '' : undefined;
  for (;;) {
    const until = new Date(at.getTime() + JUDGEMENT_CLAIM_MS);
    const ids = await claimJudgements(deps.db, column, {
      dialect: deps.dialect,
      now: at,
      until,
      limit: JUDGEMENT_BUCKET,
      everyActiveAfter: after,
    });
    if (ids.length === 0) break;
    if (after !== undefined) after = ids[ids.length - 1];
    // a bucket that failed is due again when its claim runs out
    await judge(ids);
    await finishJudgements(deps.db, column, ids, until, (id) => nextDailyJudgement(id, at));
    judged += ids.length;
    if (ids.length < JUDGEMENT_BUCKET) break;
  }
  return judged;
}
