// Where the events come from. A mailbox's state change is written into the outbox where it
// happens (mailboxes/mailbox-state.ts), and so is a failing daily check (checks/daily-checks.ts).
// The daily ones here are noticed by the `events` job, in any worker: each carries a dedupe key,
// so it is made once however many workers notice it.
import { sql, type Kysely } from 'kysely';
import { addDays, utcDay } from '../calendar.js';
import type { DailyStatsTable, Database, MailboxRow } from '../db/schema.js';
import { enqueueEvent, subscribedWorkspaces } from './webhooks.repository.js';
import type { WebhookEventType } from './webhooks.schemas.js';

/** A reputation this many points below the day before's is `reputation.dropped`. */
export const REPUTATION_DROP_POINTS = 10;

export function mailboxRef(row: Pick<MailboxRow, 'id' | 'email' | 'name'>) {
  return { id: row.id, email: row.email, name: row.name };
}

/** `mailbox.error` when a mailbox went into `error`, `mailbox.recovered` when it left it for `active`. */
export async function emitMailboxStatusEvent(
  db: Kysely<Database>,
  row: MailboxRow,
  previousStatus: string,
  at: Date,
): Promise<void> {
  let type: WebhookEventType | undefined;
  if (row.status === 'error' && previousStatus !== 'error') type = 'mailbox.error';
  else if (previousStatus === 'error' && row.status === 'active') type = 'mailbox.recovered';
  if (!type) return;
  await enqueueEvent(db, {
    workspaceId: row.workspace_id,
    type,
    at,
    data: {
      mailbox: mailboxRef(row),
      status: row.status,
      previousStatus,
      ...(type === 'mailbox.error' ? { lastError: row.last_error } : {}),
    },
  });
}

async function eventExists(db: Kysely<Database>, dedupeKey: string): Promise<boolean> {
  return (
    (await db.selectFrom('webhook_events').select('id').where('dedupe_key', '=', dedupeKey).executeTakeFirst()) !==
    undefined
  );
}

/** The counts of `daily.summary`, by their name in the payload and their column in `daily_stats`; new ones go last. */
const SUMMARY_COUNTS = {
  sent: 'sent',
  inbox: 'inbox',
  spam: 'spam',
  promotions: 'promotions',
  other: 'other',
  bounced: 'bounced',
  lost: 'lost',
  promotedToPrimary: 'promoted_to_primary',
} as const satisfies Record<string, keyof DailyStatsTable>;
type SummaryCount = keyof typeof SUMMARY_COUNTS;
const SUMMARY_COUNT_NAMES = Object.keys(SUMMARY_COUNTS) as SummaryCount[];

/** `daily.summary` of the UTC day before `now`, once per workspace. */
async function emitDailySummaries(db: Kysely<Database>, now: Date): Promise<number> {
  const day = addDays(utcDay(now), -1);
  let queued = 0;
  for (const workspaceId of await subscribedWorkspaces(db, 'daily.summary')) {
    const dedupeKey = `daily.summary:${workspaceId}:${day}`;
    if (await eventExists(db, dedupeKey)) continue;
    const rows = await db
      .selectFrom('mailboxes as m')
      .leftJoin('daily_stats as s', (join) => join.onRef('s.mailbox_id', '=', 'm.id').on('s.day', '=', day))
      .select(['m.id', 'm.email', 'm.name', 'm.status', 'm.reputation'])
      .select(Object.values(SUMMARY_COUNTS).map((column) => `s.${column}` as const))
      .where('m.workspace_id', '=', workspaceId)
      .orderBy('m.email')
      .execute();
    const mailboxes = rows.map((row) => {
      const counts = Object.fromEntries(
        SUMMARY_COUNT_NAMES.map((name) => [name, Number(row[SUMMARY_COUNTS[name]] ?? 0)]),
      ) as Record<SummaryCount, number>;
      return { ...mailboxRef(row), status: row.status, reputation: Number(row.reputation), ...counts };
    });
    const totals = Object.fromEntries(
      SUMMARY_COUNT_NAMES.map((name) => [name, mailboxes.reduce((sum, mailbox) => sum + mailbox[name], 0)]),
    );
    const deliveries = await enqueueEvent(db, {
      workspaceId,
      type: 'daily.summary',
      at: now,
      dedupeKey,
      data: { day, totals, mailboxes },
    });
    if (deliveries.length > 0) queued += 1;
  }
  return queued;
}

/** `reputation.dropped` for a mailbox whose reputation today is REPUTATION_DROP_POINTS below yesterday's, once a day. */
async function emitReputationDrops(db: Kysely<Database>, now: Date): Promise<number> {
  const today = utcDay(now);
  const yesterday = addDays(today, -1);
  const workspaces = await subscribedWorkspaces(db, 'reputation.dropped');
  if (workspaces.length === 0) return 0;
  let queued = 0;
  const dropped = await db
    .selectFrom('mailboxes as m')
    .innerJoin('daily_stats as s', (join) => join.onRef('s.mailbox_id', '=', 'm.id').on('s.day', '=', yesterday))
    .select(['m.id', 'm.email', 'm.name', 'm.workspace_id', 'm.reputation', 's.reputation as previous'])
    .where('m.workspace_id', 'in', workspaces)
    .where('s.reputation', 'is not', null)
    .where((eb) => eb('m.reputation', '<=', eb('s.reputation', '-', REPUTATION_DROP_POINTS)))
    // noticed once a day: the drops already in the outbox are not looked at again every pass
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_events')
            .select('id')
            .where('dedupe_key', '=', sql<string>`'reputation.dropped:' || m.id || ${`:${today}`}`),
        ),
      ),
    )
    .execute();
  for (const row of dropped) {
    const deliveries = await enqueueEvent(db, {
      workspaceId: row.workspace_id,
      type: 'reputation.dropped',
      at: now,
      dedupeKey: `reputation.dropped:${row.id}:${today}`,
      data: {
        mailbox: mailboxRef(row),
        reputation: Number(row.reputation),
        previous: Number(row.previous),
        day: today,
      },
    });
    if (deliveries.length > 0) queued += 1;
  }
  return queued;
}

export interface ScheduledEventsSummary {
  /** `daily.summary` events queued (one per subscribed workspace and day). */
  summaries: number;
  /** `reputation.dropped` events queued. */
  reputationDrops: number;
}

/** The events that come from time passing: the `events` job of the job list. */
export async function emitScheduledEvents(db: Kysely<Database>, now: Date): Promise<ScheduledEventsSummary> {
  return { summaries: await emitDailySummaries(db, now), reputationDrops: await emitReputationDrops(db, now) };
}
