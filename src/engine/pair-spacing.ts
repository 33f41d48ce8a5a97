/**
 * The pair spacing at the moment of sending. The planner places a pair's new threads of a day
 * PAIR_SPACING_MS apart, but the sender may hold a thread behind other due mail (one send per
 * mailbox and cycle, the 4-minute gap, replies first) and send it late: then it can come too close
 * to the pair's next thread, sent on time. So a new thread about to leave first looks at what the
 * same pair really sent: if that was less than the spacing ago, it waits until the spacing is over,
 * or, when that would leave its day or its send window, it is not sent (send less, never closer).
 */
import type { Kysely } from 'kysely';
import type { Database, WarmupMessageRow } from '../db/schema.js';
import { PAIR_SPACING_MS } from './partners.js';

export const REASON_PAIR_SPACING = 'not sent: the same pair had a conversation start too recently today';

/** When the pair's last new thread left, if that was after `since`. */
async function lastPairThreadSentAfter(
  db: Kysely<Database>,
  senderId: string,
  recipientId: string,
  since: Date,
): Promise<Date | null> {
  const row = await db
    .selectFrom('warmup_messages')
    .select((eb) => eb.fn.max('sent_at').as('last'))
    .where('sender_mailbox_id', '=', senderId)
    .where('recipient_mailbox_id', '=', recipientId)
    .where('kind', '!=', 'reply')
    .where('sent_at', '>', since.toISOString())
    .executeTakeFirst();
  return row?.last ? new Date(row.last) : null;
}

export type SpacingDecision = { action: 'send' } | { action: 'wait'; until: Date } | { action: 'drop' };

/**
 * Whether a due new thread may leave `now`, given the pair's real sends. `fits` says whether a later
 * moment still lies in the sender's window and on both the sender's and the recipient's day.
 */
export async function pairSpacingAt(
  db: Kysely<Database>,
  row: Pick<WarmupMessageRow, 'kind' | 'sender_mailbox_id' | 'recipient_mailbox_id'>,
  now: Date,
  fits: (at: Date) => boolean,
): Promise<SpacingDecision> {
  if (row.kind === 'reply') return { action: 'send' };
  const last = await lastPairThreadSentAfter(
    db,
    row.sender_mailbox_id,
    row.recipient_mailbox_id,
    new Date(now.getTime() - PAIR_SPACING_MS),
  );
  if (last === null) return { action: 'send' };
  const until = new Date(last.getTime() + PAIR_SPACING_MS);
  return fits(until) ? { action: 'wait', until } : { action: 'drop' };
}
