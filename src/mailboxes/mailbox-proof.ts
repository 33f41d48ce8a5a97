/*
 * The proof columns of a mailbox (`proven_at`, `proof_note`, `next_proof_at`, `proof_attempts`):
 * what a round trip (mail/round-trip.ts) leaves behind, whether the owner ran it by connecting or
 * resuming the mailbox or the engine ran it on schedule (engine/proofs.ts), and what the API says
 * of it.
 */
import type { MailboxRow, MailboxRowUpdate } from '../db/schema.js';
import type { RoundTripResult } from '../mail/round-trip.js';
import type { PoolMembership } from './mailboxes.schemas.js';

/** Why a mailbox is out of the pool until proven, before any round trip ran. */
export const NOT_CHECKED = 'it was connected with verify: false; the engine runs the round trip on its next cycle';
export const NOT_RUN = 'the round trip has not run yet; the engine runs it on its next cycle';

/**
 * Failed round trips in a row after which the engine stops trying: each sends a message to the
 * address, and an address the tenant does not control must not get one a day for ever. Ten tries
 * 15 min, 30 min, 1 h… apart span about three days, longer than a mail server is usually down.
 */
export const MAX_PROOF_ATTEMPTS = 10;

/** The engine tries an unproven mailbox's round trip again after 15 min, 30 min, 1 h… at most a day apart. */
export function proofRetryDelayMs(failedAttempts: number): number {
  return Math.min(24 * 60 * 60_000, 15 * 60_000 * 2 ** Math.max(0, failedAttempts - 1));
}

/** The proof columns after a round trip at `at`, the `failedBefore`-th failure in a row before it. */
export function proofChanges(result: RoundTripResult, at: Date, failedBefore: number): MailboxRowUpdate {
  if (result.proven) return { proven_at: at.toISOString(), proof_note: null, next_proof_at: null, proof_attempts: 0 };
  const attempts = failedBefore + 1;
  return {
    proven_at: null,
    proof_note: result.reason,
    next_proof_at: new Date(at.getTime() + proofRetryDelayMs(attempts)).toISOString(),
    proof_attempts: attempts,
  };
}

/** What the owner reads once the engine has given up: the last reason, and what brings it back. */
export function proofGivenUpError(reason: string, attempts: number): string {
  return `warmup stopped proving this address after ${attempts} failed round trips and sends it no more test messages; the last one: ${reason}. Fix the cause (is the address yours, and do its SMTP and IMAP servers belong to it?), then resume the mailbox to try again.`;
}

export function poolMembership(row: MailboxRow): PoolMembership {
  if (row.proven_at === null) {
    return { member: false, provenAt: null, reason: `not proven yet: ${row.proof_note ?? NOT_RUN}` };
  }
  if (row.status !== 'active') {
    const reason = row.status === 'paused' ? 'paused' : 'stopped by an error (see lastError)';
    return { member: false, provenAt: row.proven_at, reason };
  }
  return { member: true, provenAt: row.proven_at, reason: null };
}
