// SQL of the receiver verdicts: one row per warmup email found, written in the transaction that
// records it as received, read per sender (workspace-scoped by the service's mailbox check).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { verdictColumns, type ReceiverVerdict } from './receiver-verdict.js';

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
      ...verdictColumns(verdict),
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

/** Whose mail: one sender's, or every sender's of a workspace (optionally one of them). */
export type VerdictScope = { workspaceId: string; senderMailboxId?: string };

/** The verdicts of the scope's senders found in [since, until). */
function scoped(db: Kysely<Database>, scope: VerdictScope, since: string, until: string) {
  let query = db
    .selectFrom('receiver_verdicts')
    .innerJoin('mailboxes as sender', 'sender.id', 'receiver_verdicts.sender_mailbox_id')
    .where('sender.workspace_id', '=', scope.workspaceId)
    .where('receiver_verdicts.found_at', '>=', since)
    .where('receiver_verdicts.found_at', '<', until);
  if (scope.senderMailboxId !== undefined) {
    query = query.where('receiver_verdicts.sender_mailbox_id', '=', scope.senderMailboxId);
  }
  return query;
}

/** The scope's verdicts in [since, until): per receiving provider, how often each value of `column` was seen. */
export async function countVerdicts(
  db: Kysely<Database>,
  scope: VerdictScope,
  column: VerdictColumn,
  since: string,
  until: string,
): Promise<VerdictCountRow[]> {
  const rows = await scoped(db, scope, since, until)
    .select(['receiver_verdicts.receiver_provider as provider', `receiver_verdicts.${column} as value`])
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .groupBy(['receiver_verdicts.receiver_provider', `receiver_verdicts.${column}`])
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

/** The scope's numeric verdicts in [since, until), summed per receiving provider. */
export async function sumScores(
  db: Kysely<Database>,
  scope: VerdictScope,
  since: string,
  until: string,
): Promise<ScoreRow[]> {
  const rows = await scoped(db, scope, since, until)
    .select('receiver_verdicts.receiver_provider as provider')
    .select((eb) => [
      eb.fn.count<number | string>('receiver_verdicts.spam_score').as('scored'),
      eb.fn.sum<number | string | null>('receiver_verdicts.spam_score').as('spamScoreSum'),
      eb.fn.count<number | string>('receiver_verdicts.scl').as('sclCount'),
      eb.fn.sum<number | string | null>('receiver_verdicts.scl').as('sclSum'),
      eb.fn.count<number | string>('receiver_verdicts.bcl').as('bclCount'),
      eb.fn.sum<number | string | null>('receiver_verdicts.bcl').as('bclSum'),
    ])
    .groupBy('receiver_verdicts.receiver_provider')
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

/** The workspace a mailbox belongs to. */
export async function findMailboxWorkspace(db: Kysely<Database>, mailboxId: string): Promise<string | undefined> {
  const row = await db.selectFrom('mailboxes').select('workspace_id').where('id', '=', mailboxId).executeTakeFirst();
  return row?.workspace_id;
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
