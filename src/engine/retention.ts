/*
 * Growth kept in check: raw `interactions` and finished `warmup_messages` older than the retention
 * (WARMUP_RETENTION_DAYS) are removed once the statistics no longer need them. Every statistic of
 * a day reads the rollups (`daily_stats`, written with each interaction, and the workspace rollup
 * folded from it), so removing the raw rows changes no number; the activity log of a mailbox
 * (its interactions) shows the retention's days.
 *
 * Runs in the engine's rollup step, under its lease, after the fold: in statements of at most
 * RETENTION_BATCH_ROWS rows, for at most RETENTION_BUDGET_MS a cycle, so a backlog of millions of
 * rows is worked off over many cycles and no engine transaction waits long on it. When in doubt
 * a row stays:
 * - a warmup message goes only with its whole thread, once every message of the thread is
 *   finished (none still planned, none sent and not found yet — the reader looks for those and
 *   a bounce may still name them) and none was planned, sent, found or filed since the cutoff
 *   (a later reply quotes the whole thread, and the reader's windows are days, the cutoff months);
 *   and only when both its mailboxes' workspaces are folded past the cutoff;
 * - an interaction goes only when its day is before the cutoff and folded into its workspace's
 *   rollup, and no warmup message with its Message-ID is left (its exactly-once key stays as long
 *   as the message could still be acted on).
 */
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';

/** Rows removed per statement: a few milliseconds of work, far below any lock wait. */
export const RETENTION_BATCH_ROWS = 2_000;
/** The longest a cycle spends removing rows; the rest waits for the next cycle. */
export const RETENTION_BUDGET_MS = 2_000;
/** Statuses a message never leaves again (`sent` is finished only once found). */
const CLOSED_STATUSES = ['lost', 'failed', 'bounced', 'expired'] as const;

export interface RetentionOptions {
  /** Days of raw rows kept; 0 keeps everything. */
  retentionDays: number;
  batchRows?: number;
  budgetMs?: number;
}

export interface RetentionSummary {
  /** The first day kept ('' when retention is off). */
  cutoffDay: string;
  messages: number;
  interactions: number;
  /** Nothing more to remove as of now; false when the budget ran out first. */
  done: boolean;
}

/** Removes up to `limit` finished warmup messages from before `cutoff`, whole threads at a time; returns how many. */
async function removeFinishedMessages(
  db: Kysely<Database>,
  dialect: Dialect,
  cutoffDay: string,
  limit: number,
): Promise<number> {
  const cutoff = `${cutoffDay}T00:00:00.000Z`;
  const result = await db
    .deleteFrom('warmup_messages')
    .where('id', 'in', (eb) => {
      let candidates = eb
        .selectFrom('warmup_messages as w')
        .select('w.id')
        .where((w) => w.or([w('w.status', 'in', CLOSED_STATUSES), w('w.status', '=', 'sent')]))
        .where('w.due_at', '<', cutoff)
        .where(({ not, exists, selectFrom, or, and }) =>
          not(
            exists(
              selectFrom('warmup_messages as t')
                .select('t.id')
                .whereRef('t.thread_id', '=', 'w.thread_id')
                .where((t) =>
                  or([
                    t('t.status', '=', 'planned'),
                    and([t('t.status', '=', 'sent'), t('t.found_at', 'is', null)]),
                    t('t.due_at', '>=', cutoff),
                    t('t.sent_at', '>=', cutoff),
                    t('t.found_at', '>=', cutoff),
                    t('t.engaged_at', '>=', cutoff),
                  ]),
                ),
            ),
          ),
        )
        .where((w) =>
          w.and(
            (['w.sender_mailbox_id', 'w.recipient_mailbox_id'] as const).map((mailbox) =>
              w.exists(
                w
                  .selectFrom('mailboxes as m')
                  .innerJoin('stats_folds as f', 'f.workspace_id', 'm.workspace_id')
                  .select('m.id')
                  .whereRef('m.id', '=', mailbox)
                  .where('f.through_day', '>=', cutoffDay),
              ),
            ),
          ),
        )
        .limit(limit);
      // another worker's row stays as it is: never wait on it
      if (dialect === 'postgres') candidates = candidates.forUpdate(['w']).skipLocked();
      return candidates;
    })
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes up to `limit` interactions of days before `cutoffDay` that are folded and whose message is gone. */
async function removeOldInteractions(
  db: Kysely<Database>,
  dialect: Dialect,
  cutoffDay: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('interactions')
    .where('id', 'in', (eb) => {
      let candidates = eb
        .selectFrom('interactions as i')
        .select('i.id')
        .where('i.day', '<', cutoffDay)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('stats_folds as f')
              .select('f.workspace_id')
              .whereRef('f.workspace_id', '=', 'i.workspace_id')
              .whereRef('f.through_day', '>=', 'i.day'),
          ),
        )
        .where(({ exists, not, selectFrom }) =>
          not(exists(selectFrom('warmup_messages as w').select('w.id').whereRef('w.message_id', '=', 'i.message_id'))),
        )
        .limit(limit);
      if (dialect === 'postgres') candidates = candidates.forUpdate(['i']).skipLocked();
      return candidates;
    })
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * One cycle's share of the retention: messages first (their interactions can only go after them),
 * then interactions, batch after batch until nothing is left or the budget is spent.
 */
export async function removeExpiredHistory(
  db: Kysely<Database>,
  dialect: Dialect,
  now: Date,
  options: RetentionOptions,
): Promise<RetentionSummary> {
  const summary: RetentionSummary = { cutoffDay: '', messages: 0, interactions: 0, done: true };
  if (options.retentionDays <= 0) return summary;
  const batchRows = options.batchRows ?? RETENTION_BATCH_ROWS;
  const deadline = performance.now() + (options.budgetMs ?? RETENTION_BUDGET_MS);
  summary.cutoffDay = addDays(utcDay(now), -options.retentionDays);
  let messagesLeft = true;
  let interactionsLeft = true;
  // at least one statement a cycle, however short the budget, so a backlog always shrinks
  while (messagesLeft || interactionsLeft) {
    if (messagesLeft) {
      const removed = await removeFinishedMessages(db, dialect, summary.cutoffDay, batchRows);
      summary.messages += removed;
      messagesLeft = removed === batchRows;
    } else {
      const removed = await removeOldInteractions(db, dialect, summary.cutoffDay, batchRows);
      summary.interactions += removed;
      interactionsLeft = removed === batchRows;
    }
    if ((messagesLeft || interactionsLeft) && performance.now() >= deadline) {
      summary.done = false;
      break;
    }
  }
  return summary;
}
