import { sql, type Kysely } from 'kysely';
import { utcDay } from '../calendar.js';
import { newId } from '../db/ids.js';
import type { Database, DailyStatsTable } from '../db/schema.js';
import type { InteractionType, Placement } from './interactions.schemas.js';

export type DailyCounter = Exclude<keyof DailyStatsTable, 'mailbox_id' | 'workspace_id' | 'day' | 'reputation'>;

export interface InteractionInput {
  /** The mailbox whose log this entry belongs to (the one that acted). */
  mailboxId: string;
  type: InteractionType;
  /** The mailbox that sent the message; it owns the deliverability counters. */
  senderMailboxId: string;
  counterpartMailboxId: string | null;
  counterpartEmail: string;
  subject: string | null;
  messageId: string;
  threadId: string | null;
  placement?: Placement | null;
  occurredAt: Date;
}

/**
 * Which rollup counters an interaction moves. `sent`, `received`, `bounced` and `failed` count for
 * the acting mailbox; placement and what the peers did with a message count for its sender.
 * Placement is also kept on the receiving side (`received_<placement>`), so placement by the
 * receiver's provider reads rollups too.
 */
function rollupEffects(input: InteractionInput): Array<{ mailboxId: string; column: DailyCounter }> {
  switch (input.type) {
    case 'sent':
    case 'bounced':
    case 'failed':
      return [{ mailboxId: input.mailboxId, column: input.type }];
    case 'received': {
      const placement = input.placement ?? 'other';
      return [
        { mailboxId: input.mailboxId, column: 'received' },
        { mailboxId: input.mailboxId, column: `received_${placement}` },
        { mailboxId: input.senderMailboxId, column: placement },
      ];
    }
    case 'opened':
    case 'flagged':
    case 'rescued':
    case 'replied':
      return [{ mailboxId: input.senderMailboxId, column: input.type }];
  }
}

/** Adds 1 to daily counters of a mailbox (one statement for all of them); a mailbox deleted meanwhile is skipped, not an error. */
export async function incrementDaily(
  trx: Kysely<Database>,
  mailboxId: string,
  day: string,
  counters: DailyCounter | readonly DailyCounter[],
): Promise<void> {
  const columns = typeof counters === 'string' ? [counters] : [...counters];
  await trx
    .insertInto('daily_stats')
    .columns(['mailbox_id', 'workspace_id', 'day', ...columns])
    .expression((eb) =>
      eb
        .selectFrom('mailboxes')
        .select((s) => ['id', 'workspace_id', s.val(day).as('day'), ...columns.map((column) => sql.lit(1).as(column))])
        .where('id', '=', mailboxId),
    )
    .onConflict((oc) =>
      oc
        .columns(['mailbox_id', 'day'])
        .doUpdateSet(
          Object.fromEntries(columns.map((column) => [column, sql<number>`daily_stats.${sql.ref(column)} + 1`])),
        ),
    )
    .execute();
}

/**
 * Records one interaction exactly once — unique on (mailbox, message, type) — and moves the daily
 * rollups in the same transaction, so a rerun, a crash or a duplicate delivery never counts twice.
 * Returns false when it was already recorded (or the mailbox no longer exists).
 */
export async function recordInteraction(trx: Kysely<Database>, input: InteractionInput): Promise<boolean> {
  const occurredAt = input.occurredAt.toISOString();
  const day = utcDay(input.occurredAt);
  const inserted = await trx
    .insertInto('interactions')
    .columns([
      'id',
      'workspace_id',
      'mailbox_id',
      'type',
      'counterpart_mailbox_id',
      'counterpart_email',
      'counterpart_workspace_id',
      'subject',
      'message_id',
      'thread_id',
      'placement',
      'occurred_at',
      'day',
    ])
    .expression((eb) =>
      eb
        .selectFrom('mailboxes as m')
        .select((s) => [
          s.val(newId('int')).as('id'),
          'm.workspace_id',
          'm.id',
          s.val(input.type).as('type'),
          s.val(input.counterpartMailboxId).as('counterpart_mailbox_id'),
          s.val(input.counterpartEmail).as('counterpart_email'),
          s
            .selectFrom('mailboxes as c')
            .select('c.workspace_id')
            .where('c.id', '=', input.counterpartMailboxId ?? '')
            .as('counterpart_workspace_id'),
          s.val(input.subject).as('subject'),
          s.val(input.messageId).as('message_id'),
          s.val(input.threadId).as('thread_id'),
          s.val(input.placement ?? null).as('placement'),
          s.val(occurredAt).as('occurred_at'),
          s.val(day).as('day'),
        ])
        .where('m.id', '=', input.mailboxId),
    )
    .onConflict((oc) => oc.columns(['mailbox_id', 'message_id', 'type']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return false;
  // Rows are locked in mailbox-id order: a receipt moves the recipient's and the sender's rows, and
  // two receipts in opposite directions would otherwise deadlock on PostgreSQL.
  // One statement per mailbox row: a receipt's own counters (received, received_<placement>) move together.
  const byMailbox = new Map<string, DailyCounter[]>();
  for (const effect of rollupEffects(input)) {
    byMailbox.set(effect.mailboxId, [...(byMailbox.get(effect.mailboxId) ?? []), effect.column]);
  }
  for (const mailboxId of [...byMailbox.keys()].sort()) {
    await incrementDaily(trx, mailboxId, day, byMailbox.get(mailboxId)!);
  }
  return true;
}

/** The types already recorded by a mailbox for one message. */
export async function listRecordedTypes(
  db: Kysely<Database>,
  mailboxId: string,
  messageId: string,
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('interactions')
    .select('type')
    .where('mailbox_id', '=', mailboxId)
    .where('message_id', '=', messageId)
    .execute();
  return new Set(rows.map((row) => row.type));
}

/** The day's reputation score, kept as history in the rollup and as the mailbox's current score. */
export async function recordReputation(
  trx: Kysely<Database>,
  mailboxId: string,
  day: string,
  score: number,
): Promise<void> {
  await trx
    .insertInto('daily_stats')
    .columns(['mailbox_id', 'workspace_id', 'day', 'reputation'])
    .expression((eb) =>
      eb
        .selectFrom('mailboxes')
        .select((s) => ['id', 'workspace_id', s.val(day).as('day'), sql.lit(score).as('reputation')])
        .where('id', '=', mailboxId),
    )
    .onConflict((oc) => oc.columns(['mailbox_id', 'day']).doUpdateSet({ reputation: score }))
    .execute();
  await trx.updateTable('mailboxes').set({ reputation: score }).where('id', '=', mailboxId).execute();
}

/** A sender's mail over a window, as its peers found it (see engine/evidence.ts for whose word counts). */
export interface DeliveryCounts {
  sent: number;
  /** Found by the recipients anywhere: inbox + spam + promotions + other. */
  found: number;
  spam: number;
  bounced: number;
  /** Sent but never found within 48 hours. */
  lost: number;
}
