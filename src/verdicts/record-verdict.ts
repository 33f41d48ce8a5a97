// Writing a receiver's verdict as the engine finds a warmup email: only from a receiver trusted to
// judge the sender's mail (isTrustedVerdict). A plain function beside the repository, not the
// service: the engine imports no service.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { HeaderField } from '../mail/headers.js';
import { isTrustedVerdict, receiverVerdict, type Receiver } from './receiver-verdict.js';
import { findMailboxWorkspace, insertReceiverVerdict } from './verdicts.repository.js';

/** The mailbox that found a warmup email: who judges it, and whose tenant it is. */
export interface ReceivingMailbox extends Receiver {
  id: string;
  workspaceId: string;
}

export interface FoundWarmupEmail {
  warmupMessageId: string;
  senderMailboxId: string;
  receiver: ReceivingMailbox;
  identifiedBy: string;
  placement: string;
  foundAt: Date;
  /** The header fields the receiving side wrote, topmost first. */
  headers: readonly HeaderField[];
}

/**
 * Records the receiver's verdict on a warmup email it found, in the transaction that records the
 * finding, when the receiver is trusted to judge the sender's mail: the sender's own workspace, or
 * a big provider's own servers speaking under their own authserv-id. Returns whether it did.
 */
export async function recordReceiverVerdict(db: Kysely<Database>, found: FoundWarmupEmail): Promise<boolean> {
  const verdict = receiverVerdict(found.headers, found.receiver);
  const senderWorkspaceId = await findMailboxWorkspace(db, found.senderMailboxId);
  if (senderWorkspaceId === undefined) return false;
  if (!isTrustedVerdict(verdict, found.receiver, senderWorkspaceId === found.receiver.workspaceId)) return false;
  await insertReceiverVerdict(db, {
    warmupMessageId: found.warmupMessageId,
    senderMailboxId: found.senderMailboxId,
    recipientMailboxId: found.receiver.id,
    receiverProvider: found.receiver.provider,
    identifiedBy: found.identifiedBy,
    placement: found.placement,
    foundAt: found.foundAt,
    verdict,
  });
  return true;
}
