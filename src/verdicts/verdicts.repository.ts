// SQL of the receiver verdicts: one row per warmup email found, written in the transaction that
// records it as received, read per sender (workspace-scoped by the service's mailbox check).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ReceiverVerdict } from './receiver-verdict.js';

export interface NewReceiverVerdict {
  warmupMessageId: string;
  senderMailboxId: string;
  recipientMailboxId: string;
  receiverProvider: string;
  identifiedBy: string;
  placement: string;
  foundAt: Date;
  verdict: ReceiverVerdict;
}

/** Stores a message's verdict once; a second finding of the same message changes nothing. */
export async function insertReceiverVerdict(db: Kysely<Database>, row: NewReceiverVerdict): Promise<void> {
  const { verdict } = row;
  await db
    .insertInto('receiver_verdicts')
    .values({
      warmup_message_id: row.warmupMessageId,
      sender_mailbox_id: row.senderMailboxId,
      recipient_mailbox_id: row.recipientMailboxId,
      receiver_provider: row.receiverProvider,
      identified_by: row.identifiedBy,
      placement: row.placement,
      authserv_id: verdict.authservId,
      spf: verdict.spf,
      dkim: verdict.dkim,
      dmarc: verdict.dmarc,
      arc: verdict.arc,
      scl: verdict.scl,
      bcl: verdict.bcl,
      spam_score: verdict.spamScore,
      found_at: row.foundAt.toISOString(),
    })
    .onConflict((oc) => oc.column('warmup_message_id').doNothing())
    .execute();
}

/** Counts of one verdict column's values per receiving provider. */
export interface VerdictCountRow {
  provider: string;
  value: string | null;
  count: number;
}

export type VerdictColumn = 'spf' | 'dkim' | 'dmarc' | 'placement' | 'identified_by';

/** A sender's verdicts in [since, until): per receiving provider, how often each value of `column` was seen. */
export async function countVerdicts(
  db: Kysely<Database>,
  senderMailboxId: string,
  column: VerdictColumn,
  since: string,
  until: string,
): Promise<VerdictCountRow[]> {
  const rows = await db
    .selectFrom('receiver_verdicts')
    .select(['receiver_provider as provider', `${column} as value`])
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('sender_mailbox_id', '=', senderMailboxId)
    .where('found_at', '>=', since)
    .where('found_at', '<', until)
    .groupBy(['receiver_provider', column])
    .execute();
  return rows.map((r) => ({ provider: r.provider, value: r.value, count: Number(r.count) }));
}

export interface ScoreRow {
  provider: string;
  /** Messages with a spam score / an SCL. */
  scored: number;
  spamScoreSum: number | null;
  sclCount: number;
  sclSum: number | null;
  bclCount: number;
  bclSum: number | null;
}

/** A sender's numeric verdicts in [since, until), summed per receiving provider. */
export async function sumScores(
  db: Kysely<Database>,
  senderMailboxId: string,
  since: string,
  until: string,
): Promise<ScoreRow[]> {
  const rows = await db
    .selectFrom('receiver_verdicts')
    .select('receiver_provider as provider')
    .select((eb) => [
      eb.fn.count<number | string>('spam_score').as('scored'),
      eb.fn.sum<number | string | null>('spam_score').as('spamScoreSum'),
      eb.fn.count<number | string>('scl').as('sclCount'),
      eb.fn.sum<number | string | null>('scl').as('sclSum'),
      eb.fn.count<number | string>('bcl').as('bclCount'),
      eb.fn.sum<number | string | null>('bcl').as('bclSum'),
    ])
    .where('sender_mailbox_id', '=', senderMailboxId)
    .where('found_at', '>=', since)
    .where('found_at', '<', until)
    .groupBy('receiver_provider')
    .execute();
  const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
  return rows.map((r) => ({
    provider: r.provider,
    scored: Number(r.scored),
    spamScoreSum: num(r.spamScoreSum),
    sclCount: Number(r.sclCount),
    sclSum: num(r.sclSum),
    bclCount: Number(r.bclCount),
    bclSum: num(r.bclSum),
  }));
}

/** The mailbox, when it is one of the workspace's. */
export async function findMailboxOfWorkspace(
  db: Kysely<Database>,
  workspaceId: string,
  mailboxId: string,
): Promise<{ id: string; email: string } | undefined> {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .executeTakeFirst();
}
