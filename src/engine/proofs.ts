/*
 * The engine's side of proving mailboxes: the round trip (mail/round-trip.ts) of every active
 * mailbox that is not proven yet, when its next try is due. Only proven mailboxes join the pool.
 * A failure keeps the mailbox out with the reason and tries again later, further apart each time;
 * after MAX_PROOF_ATTEMPTS failures in a row the engine stops the mailbox instead of sending test
 * messages to its address for ever, and the owner's resume starts the count again.
 */
import { createSmtpSender } from '../mail/smtp.js';
import { openImapSession } from '../mail/imap.js';
import { DEFAULT_ROUND_TRIP_WAIT_MS, proveRoundTrip, type RoundTripResult } from '../mail/round-trip.js';
import { connectionCheckWriter } from './connection-check.js';
import { MAX_PROOF_ATTEMPTS, proofChanges, proofGivenUpError, proofRetryDelayMs } from '../mailboxes/mailbox-proof.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { SecretDecryptionError } from '../secrets/secrets.js';
import type { EngineDeps } from './engine-deps.js';
import { claimProof, listDueForProof, updateProof } from './mailbox-engine-state.repository.js';

/** Round trips one engine cycle runs at most, and how many of them at the same time. */
export const PROOFS_PER_CYCLE = 20;
const PROOF_CONCURRENCY = 4;

export interface ProofSummary {
  proven: string[];
  failed: string[];
  /** Mailboxes stopped this cycle because their round trip failed MAX_PROOF_ATTEMPTS times in a row. */
  gaveUp: string[];
}

export type ProofDeps = Pick<EngineDeps, 'db' | 'mailboxes' | 'smtp' | 'imap' | 'installationSeed'> & {
  settings: Pick<EngineDeps['settings'], 'smtpTimeoutMs'> & {
    /** How long a round trip waits for its message to arrive (default 20 s). */
    proofWaitMs?: number;
  };
};

/**
 * The due round trips at `at` (at most `limit`, 4 at a time). Each is claimed first by moving its
 * next try on, so two workers never prove one mailbox at once.
 */
export async function proveDueMailboxes(
  deps: ProofDeps,
  at: Date,
  options: { limit?: number } = {},
): Promise<ProofSummary> {
  const { db } = deps;
  const outcome: ProofSummary = { proven: [], failed: [], gaveUp: [] };
  const clients = { smtp: deps.smtp ?? createSmtpSender, imap: deps.imap ?? openImapSession };

  const proveOne = async (candidate: { id: string; proof_attempts: number }): Promise<void> => {
    const retryAt = new Date(at.getTime() + proofRetryDelayMs(candidate.proof_attempts + 1));
    const claimed = await claimProof(db, candidate.id, at.toISOString(), retryAt.toISOString());
    if (!claimed) return;
    let result: RoundTripResult;
    try {
      const writeMail = connectionCheckWriter(deps, {
        id: claimed.id,
        workspaceId: claimed.workspace_id,
        email: claimed.email,
        name: claimed.name,
        warmup: claimed.warmup,
        provider: claimed.provider,
        oauth_provider: claimed.oauth_provider,
        smtp: claimed.smtp,
      });
      result = await proveRoundTrip(claimed.email, await deps.mailboxes.getCredentials(claimed.id), {
        waitMs: deps.settings.proofWaitMs ?? DEFAULT_ROUND_TRIP_WAIT_MS,
        timeoutMs: deps.settings.smtpTimeoutMs,
        clients,
        writeMail,
        at,
      });
    } catch (error) {
      // getCredentials has stopped the mailbox with a reason the owner can act on
      if (!(error instanceof SecretDecryptionError)) throw error;
      outcome.failed.push(claimed.id);
      return;
    }
    const changes = proofChanges(result, at, claimed.proof_attempts);
    const kept = await updateProof(db, claimed, changes);
    (result.proven ? outcome.proven : outcome.failed).push(claimed.id);
    const attempts = changes.proof_attempts ?? 0;
    if (kept && !result.proven && attempts >= MAX_PROOF_ATTEMPTS) {
      const stopped = await applyMailboxEvent(
        db,
        claimed.id,
        { type: 'stopped', lastError: proofGivenUpError(result.reason, attempts) },
        { at },
      );
      if (stopped?.stopped) outcome.gaveUp.push(claimed.id);
    }
  };

  const due = await listDueForProof(db, at.toISOString(), options.limit ?? PROOFS_PER_CYCLE);
  // a few at a time: each waits for its message, and after an upgrade every mailbox is due at once
  for (let i = 0; i < due.length; i += PROOF_CONCURRENCY) {
    await Promise.all(due.slice(i, i + PROOF_CONCURRENCY).map(proveOne));
  }
  return outcome;
}
