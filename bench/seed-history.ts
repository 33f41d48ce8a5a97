import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/db/schema.js';
import { addDays, eachDay, utcDay } from '../src/calendar.js';
import type { InteractionInput } from '../src/interactions/interactions.repository.js';
import type { Placement } from '../src/interactions/interactions.schemas.js';
import type { MailboxStatus, ProviderId } from '../src/mailboxes/mailboxes.schemas.js';

/*
 * Seeds a warmup history for the statistics benchmark: mailboxes, then day by day the interactions
 * the engine would have recorded (sent, received with a placement, opened, flagged, rescued,
 * replied, bounced), inserted in bulk batches, with the day's rollups and reputation written in the
 * same transaction by the same rules as recordInteraction (checked against recordInteraction and
 * recordReputation themselves on a sample by `rollupsMatchEngine` in stats.bench.ts).
 */

export interface SeedSize {
  mailboxes: number;
  days: number;
  /** Mean warmup emails a mailbox sends a day. */
  perDay: number;
}

export interface SeedMailbox {
  id: string;
  email: string;
  provider: ProviderId;
  status: MailboxStatus;
  /** How likely its mail lands in spam, before the receiving provider's bias. */
  spamBase: number;
}

export interface SeedPlan {
  workspaceId: string;
  mailboxes: SeedMailbox[];
  /** Oldest first; the last one is "today" for the benchmark's clock. */
  days: string[];
  perDay: number;
  seed: number;
}

export interface DayHistory {
  interactions: InteractionInput[];
  reputations: Array<{ mailboxId: string; score: number }>;
}

export interface SeedCounts {
  messages: number;
  interactions: number;
  /** False when only the rollups were written (the statistics read nothing else). */
  rawInteractions: boolean;
  rollupRows: number;
  seconds: number;
}

const PROVIDERS: ProviderId[] = [
  'gmail',
  'gmail',
  'gmail',
  'outlook',
  'outlook',
  'yahoo',
  'zoho',
  'icloud',
  'fastmail',
  'custom',
];
/** Receiving providers differ in how harshly they filter. */
const SPAM_BIAS: Record<string, number> = {
  gmail: 1.2,
  outlook: 1.4,
  yahoo: 1,
  zoho: 0.8,
  icloud: 0.9,
  fastmail: 0.7,
  custom: 0.6,
};

/** mulberry32: a small seeded generator, so every run seeds the same history. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function planHistory(workspaceId: string, size: SeedSize, today: string, seed = 1): SeedPlan {
  const rng = random(seed);
  const mailboxes: SeedMailbox[] = [];
  for (let i = 0; i < size.mailboxes; i++) {
    const provider = PROVIDERS[Math.floor(rng() * PROVIDERS.length)]!;
    const roll = rng();
    mailboxes.push({
      id: `mb_${workspaceId}_${String(i).padStart(5, '0')}`,
      email: `sender${i}@domain${i % 97}.example`,
      provider,
      status: roll < 0.9 ? 'active' : roll < 0.96 ? 'paused' : 'error',
      spamBase: 0.02 + rng() * rng() * 0.3,
    });
  }
  return {
    workspaceId,
    mailboxes,
    days: eachDay({ startDate: addDays(today, -(size.days - 1)), endDate: today }),
    perDay: size.perDay,
    seed,
  };
}

/** What the engine records on one day: each mailbox's sends and what its peers did with them. */
export function historyOfDay(plan: SeedPlan, dayIndex: number): DayHistory {
  const rng = random(plan.seed * 1_000_003 + dayIndex);
  const day = plan.days[dayIndex]!;
  const midnight = Date.parse(`${day}T00:00:00.000Z`);
  const { mailboxes } = plan;
  const interactions: InteractionInput[] = [];
  const reputations: DayHistory['reputations'] = [];
  let serial = 0;
  for (let i = 0; i < mailboxes.length; i++) {
    const sender = mailboxes[i]!;
    const sends = Math.floor(plan.perDay * (0.6 + 0.8 * rng()) + rng());
    for (let s = 0; s < sends && mailboxes.length > 1; s++) {
      let j = Math.floor(rng() * (mailboxes.length - 1));
      if (j >= i) j++;
      const recipient = mailboxes[j]!;
      const messageId = `<${day}.${i}.${serial++}@domain${i % 97}.example>`;
      // Sends in the 08:00–18:00 window; reading within 30 minutes, acting within 3 hours: all on the same UTC day.
      const sentAt = midnight + (8 + rng() * 10) * 3_600_000;
      const receivedAt = sentAt + (1 + rng() * 29) * 60_000;
      const actedAt = receivedAt + rng() * 3 * 3_600_000;
      const fate = rng();
      // One object shape for every entry (no spreads) and one Date per instant: this runs millions of times.
      const entry = (
        mailboxId: string,
        type: InteractionInput['type'],
        counterpart: SeedMailbox,
        placement: Placement | null,
        occurredAt: Date,
      ): InteractionInput => ({
        mailboxId,
        type,
        senderMailboxId: sender.id,
        counterpartMailboxId: counterpart.id,
        counterpartEmail: counterpart.email,
        subject: 'Quick follow-up',
        messageId,
        threadId: messageId,
        placement,
        occurredAt,
      });
      interactions.push(entry(sender.id, 'sent', recipient, null, new Date(sentAt)));
      if (fate < 0.005) {
        interactions.push(entry(sender.id, 'bounced', recipient, null, new Date(receivedAt)));
        continue;
      }
      if (fate < 0.015) continue; // never found: lost
      const spam = sender.spamBase * (SPAM_BIAS[recipient.provider] ?? 1);
      const promotions = recipient.provider === 'gmail' ? 0.1 : 0.02;
      const roll = rng();
      const placement: Placement =
        roll < spam
          ? 'spam'
          : roll < spam + promotions
            ? 'promotions'
            : roll < spam + promotions + 0.02
              ? 'other'
              : 'inbox';
      const acted = new Date(actedAt);
      interactions.push(entry(recipient.id, 'received', sender, placement, new Date(receivedAt)));
      if (placement === 'spam') interactions.push(entry(recipient.id, 'rescued', sender, null, acted));
      if (rng() < 0.95) interactions.push(entry(recipient.id, 'opened', sender, null, acted));
      if (rng() < 0.3) interactions.push(entry(recipient.id, 'flagged', sender, null, acted));
      if (rng() < 0.3) interactions.push(entry(recipient.id, 'replied', sender, null, acted));
    }
    const progress = dayIndex / Math.max(1, plan.days.length - 1);
    const score = Math.round(55 + 40 * progress - sender.spamBase * 60 + (rng() - 0.5) * 6);
    reputations.push({ mailboxId: sender.id, score: Math.max(0, Math.min(100, score)) });
  }
  return { interactions, reputations };
}

/** The workspace's mailboxes, inserted with Kysely (few rows). */
export async function insertMailboxes(db: Kysely<Database>, plan: SeedPlan, createdAt: string): Promise<void> {
  for (let start = 0; start < plan.mailboxes.length; start += 200) {
    await db
      .insertInto('mailboxes')
      .values(
        plan.mailboxes.slice(start, start + 200).map((m) => ({
          id: m.id,
          workspace_id: plan.workspaceId,
          email: m.email,
          email_normalized: m.email,
          name: null,
          provider: m.provider,
          connection_type: 'imap',
          status: m.status,
          imap: '{}',
          smtp: '{}',
          password_encrypted: 'x',
          warmup: '{}',
          warmup_day: plan.days.length,
          daily_target: Math.round(plan.perDay),
          created_at: createdAt,
          updated_at: createdAt,
        })),
      )
      .execute();
  }
}

const INTERACTION_COLUMNS = [
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
] as const;

type InteractionTuple = Array<string | null>;

function tuple(id: string, workspaceId: string, input: InteractionInput): InteractionTuple {
  return [
    id,
    workspaceId,
    input.mailboxId,
    input.type,
    input.counterpartMailboxId,
    input.counterpartEmail,
    input.counterpartMailboxId === null ? null : workspaceId,
    input.subject,
    input.messageId,
    input.threadId,
    input.placement ?? null,
    input.occurredAt.toISOString(),
    utcDay(input.occurredAt),
  ];
}

/** A daily_stats row: the rollup counters of one mailbox on one day, and its reputation that day. */
const ROLLUP_COLUMNS = [
  'sent',
  'received',
  'inbox',
  'spam',
  'promotions',
  'other',
  'rescued',
  'opened',
  'flagged',
  'replied',
  'bounced',
  'failed',
  'received_inbox',
  'received_spam',
  'received_promotions',
  'received_other',
] as const;
type RollupColumn = (typeof ROLLUP_COLUMNS)[number];

interface RollupRow {
  mailboxId: string;
  counts: Record<RollupColumn, number>;
  reputation: number | null;
}

/**
 * The rollups of one day's interactions, by the rules of recordInteraction: `sent`, `received`,
 * `bounced`, `failed` and `received_<placement>` for the acting mailbox; the placement and what
 * the peer did with a message for its sender; a mailbox that does not exist is skipped. Checked
 * against recordInteraction itself by the benchmark before it seeds.
 */
export function rollupsOfDay(history: DayHistory, mailboxIds: ReadonlySet<string>): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  const row = (mailboxId: string) => {
    let found = rows.get(mailboxId);
    if (!found) {
      found = {
        mailboxId,
        counts: Object.fromEntries(ROLLUP_COLUMNS.map((c) => [c, 0])) as Record<RollupColumn, number>,
        reputation: null,
      };
      rows.set(mailboxId, found);
    }
    return found;
  };
  const bump = (mailboxId: string, column: RollupColumn) => {
    if (mailboxIds.has(mailboxId)) row(mailboxId).counts[column]++;
  };
  for (const input of history.interactions) {
    switch (input.type) {
      case 'sent':
      case 'bounced':
      case 'failed':
        bump(input.mailboxId, input.type);
        break;
      case 'received': {
        const placement = input.placement ?? 'other';
        bump(input.mailboxId, 'received');
        bump(input.mailboxId, `received_${placement}`);
        bump(input.senderMailboxId, placement);
        break;
      }
      default:
        bump(input.senderMailboxId, input.type);
    }
  }
  for (const { mailboxId, score } of history.reputations)
    if (mailboxIds.has(mailboxId)) row(mailboxId).reputation = score;
  return [...rows.values()];
}

/** Bulk writers of one dialect: raw prepared statements (SQLite) or unnest arrays (PostgreSQL). */
export interface BulkWriter {
  /** Before the first day: drops the secondary indexes that are cheaper to rebuild than to grow row by row. */
  prepare(): Promise<void>;
  /** One day's interactions and rollup rows, in one transaction. */
  writeDay(workspaceId: string, day: string, interactions: InteractionTuple[], rollups: RollupRow[]): Promise<void>;
  /** After the last day: rebuilds the indexes and leaves each mailbox's last score on it, as recordReputation does. */
  finish(lastScores: DayHistory['reputations']): Promise<void>;
  close(): Promise<void>;
}

function rollupTuple(workspaceId: string, day: string, rollup: RollupRow): Array<string | number | null> {
  return [rollup.mailboxId, workspaceId, day, ...ROLLUP_COLUMNS.map((c) => rollup.counts[c]), rollup.reputation];
}

const ROLLUP_INSERT_COLUMNS = ['mailbox_id', 'workspace_id', 'day', ...ROLLUP_COLUMNS, 'reputation'];

export function sqliteWriter(file: string): BulkWriter {
  const raw = new SQLite(file);
  raw.pragma('journal_mode = WAL');
  // Seeding only: a crash would just mean seeding again.
  raw.pragma('synchronous = OFF');
  // A large page cache for this connection only: the unique index of millions of rows is written
  // at many places at once. The benchmark's own connections keep the default.
  raw.pragma('cache_size = -1000000');
  raw.pragma('temp_store = memory');
  const ROWS_PER_STATEMENT = 50;
  const placeholders = (columns: number, rows: number) =>
    Array.from({ length: rows }, () => `(${Array.from({ length: columns }, () => '?').join(', ')})`).join(', ');
  const insertMany = raw.prepare(
    `insert into interactions (${INTERACTION_COLUMNS.join(', ')}) values ${placeholders(INTERACTION_COLUMNS.length, ROWS_PER_STATEMENT)}`,
  );
  const insertOne = raw.prepare(
    `insert into interactions (${INTERACTION_COLUMNS.join(', ')}) values ${placeholders(INTERACTION_COLUMNS.length, 1)}`,
  );
  const insertRollup = raw.prepare(
    `insert into daily_stats (${ROLLUP_INSERT_COLUMNS.join(', ')}) values ${placeholders(ROLLUP_INSERT_COLUMNS.length, 1)}`,
  );
  const setReputation = raw.prepare('update mailboxes set reputation = ? where id = ?');
  const writeDay = raw.transaction(
    (workspaceId: string, day: string, rows: InteractionTuple[], rollups: RollupRow[]) => {
      let i = 0;
      for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT)
        insertMany.run(rows.slice(i, i + ROWS_PER_STATEMENT).flat());
      for (; i < rows.length; i++) insertOne.run(rows[i]);
      for (const rollup of rollups) insertRollup.run(rollupTuple(workspaceId, day, rollup));
    },
  );
  return {
    prepare: async () => {
      raw.exec('drop index interactions_mailbox_time');
    },
    writeDay: async (workspaceId, day, rows, rollups) => {
      writeDay(workspaceId, day, rows, rollups);
    },
    finish: async (lastScores) => {
      raw.exec('create index interactions_mailbox_time on interactions (mailbox_id, occurred_at)');
      raw.transaction(() => {
        for (const { mailboxId, score } of lastScores) setReputation.run(score, mailboxId);
      })();
    },
    close: async () => {
      raw.pragma('wal_checkpoint(TRUNCATE)');
      raw.close();
    },
  };
}

export function postgresWriter(url: string): BulkWriter {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  const CHUNK = 10_000;
  const arrays = (columns: readonly string[], type: (column: string) => string) =>
    columns.map((c, i) => `$${i + 1}::${type(c)}[]`).join(', ');
  const insertInteractions = `insert into interactions (${INTERACTION_COLUMNS.join(', ')}) select * from unnest(${arrays(INTERACTION_COLUMNS, () => 'text')})`;
  const insertRollups = `insert into daily_stats (${ROLLUP_INSERT_COLUMNS.join(', ')}) select * from unnest(${arrays(
    ROLLUP_INSERT_COLUMNS,
    (c) => (['mailbox_id', 'workspace_id', 'day'].includes(c) ? 'text' : 'int'),
  )})`;
  const columnsOf = <T>(rows: T[][], count: number) =>
    Array.from({ length: count }, (_, c) => rows.map((row) => row[c]));
  return {
    prepare: async () => {
      await connected;
      // Seeding only: commits need not wait for the disk, and the indexes are built once at the end.
      await client.query('set synchronous_commit = off');
      await client.query('drop index interactions_mailbox_time');
      await client.query('alter table interactions drop constraint interactions_once');
      await client.query('alter table interactions drop constraint interactions_pkey');
    },
    writeDay: async (workspaceId, day, rows, rollups) => {
      await client.query('begin');
      try {
        for (let start = 0; start < rows.length; start += CHUNK)
          await client.query(
            insertInteractions,
            columnsOf(rows.slice(start, start + CHUNK), INTERACTION_COLUMNS.length),
          );
        await client.query(
          insertRollups,
          columnsOf(
            rollups.map((r) => rollupTuple(workspaceId, day, r)),
            ROLLUP_INSERT_COLUMNS.length,
          ),
        );
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw error;
      }
    },
    finish: async (lastScores) => {
      // Session setting of the seeder's own connection: index builds sort in memory.
      await client.query("set maintenance_work_mem = '512MB'");
      await client.query('alter table interactions add constraint interactions_pkey primary key (id)');
      await client.query(
        'alter table interactions add constraint interactions_once unique (mailbox_id, message_id, type)',
      );
      await client.query('create index interactions_mailbox_time on interactions (mailbox_id, occurred_at)');
      await client.query(
        'update mailboxes m set reputation = s.score from unnest($1::text[], $2::int[]) as s(id, score) where m.id = s.id',
        [lastScores.map((s) => s.mailboxId), lastScores.map((s) => s.score)],
      );
    },
    close: () => client.end(),
  };
}

/** Seeds the whole plan day by day: each day's interactions and its rollups in one transaction. */
export async function seedHistory(
  writer: BulkWriter,
  plan: SeedPlan,
  log: (line: string) => void = () => {},
  { rawInteractions = true }: { rawInteractions?: boolean } = {},
): Promise<SeedCounts> {
  const started = performance.now();
  const mailboxIds = new Set(plan.mailboxes.map((m) => m.id));
  let interactions = 0;
  let messages = 0;
  let rollupRows = 0;
  let lastScores: DayHistory['reputations'] = [];
  await writer.prepare();
  for (let d = 0; d < plan.days.length; d++) {
    const day = plan.days[d]!;
    const history = historyOfDay(plan, d);
    const rows = rawInteractions
      ? history.interactions.map((input, i) =>
          tuple(
            `int_${plan.workspaceId}_${d.toString(36).padStart(3, '0')}_${i.toString(36).padStart(6, '0')}`,
            plan.workspaceId,
            input,
          ),
        )
      : [];
    const rollups = rollupsOfDay(history, mailboxIds);
    await writer.writeDay(plan.workspaceId, day, rows, rollups);
    interactions += history.interactions.length;
    rollupRows += rollups.length;
    messages += history.interactions.filter((i) => i.type === 'sent').length;
    if (history.reputations.length > 0) lastScores = history.reputations;
    if (d % 30 === 29)
      log(
        `  day ${d + 1}/${plan.days.length}: ${interactions.toLocaleString('en-US')} interactions, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
  }
  await writer.finish(lastScores);
  return { messages, interactions, rawInteractions, rollupRows, seconds: (performance.now() - started) / 1000 };
}
