// A scale-out installation made of real processes: one PostgreSQL schema, a `warmup serve
// --no-engine` API process and any number of `warmup worker` processes, against a real mail
// stack. Used by test/scale/scale-out.test.ts and bench/workers.bench.ts. Everything that
// proves a claim (who did what, whether two IMAP sessions of one mailbox overlapped, how many
// times a message was handed to Postfix) is read from outside the engine: the database, the
// workers' own log lines and the mail servers' logs.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { INTERACTION_TYPES } from '../../src/interactions/interactions.schemas.js';
import type { MailStack } from '../mailstack/mail-stack.js';
import type { MailUser } from '../mailstack/users.js';
import { freePort, startWarmup, type RunningProcess } from '../helpers/processes.js';

export const SECRET_KEY = 'c'.repeat(64);
export const API_KEY = 'scale-out-api-key-for-tests-0123456789';

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns a value other than undefined; throws `describe()` on timeout. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  describe: () => Promise<string> | string,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${await describe()}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// The API process

export interface ApiProcess {
  process: RunningProcess;
  baseUrl: string;
  request(method: string, url: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

/** `warmup serve --no-engine`, as an API replica of a scale-out deployment runs it. */
export async function startApi(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const process = await startWarmup(
    ['serve', '--no-engine'],
    { LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: '127.0.0.1', WARMUP_API_KEY: API_KEY },
    /Warmup is serving/,
  );
  return {
    process,
    baseUrl,
    async request(method, url, body) {
      const res = await fetch(`${baseUrl}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    stop: () => stopProcess(process, 'SIGTERM'),
  };
}

export interface MailboxSettings {
  startVolume: number;
  rampUpIncrement?: number;
  dailyLimit?: number;
  replyRate: number;
}

/** Creates one mailbox per user through the API (it logs in to both servers first), in UTC, every day a send day. */
export async function createMailboxes(
  api: ApiProcess,
  stack: MailStack,
  users: readonly MailUser[],
  warmup: MailboxSettings,
): Promise<string[]> {
  const ids: string[] = [];
  for (const user of users) {
    const res = await api.request('POST', '/api/mailboxes', {
      email: user.email,
      password: user.password,
      provider: 'custom',
      connectionType: 'imap',
      imap: { host: stack.host, port: stack.imapPort, secure: false },
      smtp: { host: stack.host, port: stack.submissionPort, secure: false },
      warmup: { rampUpIncrement: 0, dailyLimit: 100, ...warmup, timezone: 'UTC', weekdaysOnly: false, language: 'en' },
    });
    if (res.status !== 201)
      throw new Error(`POST /api/mailboxes ${user.email} answered ${res.status}: ${JSON.stringify(res.body)}`);
    ids.push((res.body as { mailbox: { id: string } }).mailbox.id);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Workers

export interface WorkerOptions {
  /** Pause between cycles. */
  intervalMs: number;
  /** Lease of a planning run, a mailbox's sync or a claimed send. */
  leaseMs: number;
  /** Everything planned for the day is due now (the test runs a whole day in seconds). */
  ignoreSchedule: boolean;
  logLevel?: string;
  /** Options for node itself (a benchmark's `--cpu-prof`). */
  nodeArgs?: string[];
}

/** The command line of a worker with these options (the engine's test knobs). */
export function workerArgs(options: WorkerOptions): string[] {
  return [
    'worker',
    '--interval',
    String(options.intervalMs),
    '--lease',
    String(options.leaseMs),
    ...(options.ignoreSchedule ? ['--ignore-schedule'] : []),
  ];
}

/** What one engine cycle reported (the subset these checks read). */
export interface CycleLog {
  time: number;
  workerId: string;
  plan: { messages: number } | null;
  send: { claimed: number; sent: number } | null;
  sync: { synced: number; skipped: number; received: number; opened: number; replied: number; failed: number } | null;
  replies: { claimed: number; sent: number } | null;
  errors: Array<{ step: string; message: string }>;
}

export interface WorkerProcess {
  /** A stable label for reports (w1, w2, …; a restarted worker gets a new one). */
  label: string;
  process: RunningProcess;
  pid: number;
  /** Its name in lease rows. */
  workerId: string;
  /** Cycles it logged so far. */
  cycles(): CycleLog[];
}

/** Starts `warmup worker` and waits for its "started" line, which names its lease owner id. */
export async function startWorker(
  label: string,
  env: Record<string, string>,
  options: WorkerOptions,
): Promise<WorkerProcess> {
  const process = await startWarmup(
    workerArgs(options),
    { ...env, LOG_LEVEL: options.logLevel ?? 'debug' },
    /warmup worker started/,
    30_000,
    options.nodeArgs,
  );
  const started = logLines(process.output()).find(
    (line) => typeof line.msg === 'string' && line.msg.startsWith('warmup worker started'),
  );
  const workerId = started?.workerId;
  if (typeof workerId !== 'string')
    throw new Error(`worker ${label} did not log its workerId: ${process.output().slice(0, 2000)}`);
  return {
    label,
    process,
    pid: process.child.pid ?? -1,
    workerId,
    cycles: () =>
      logLines(process.output())
        .filter((line) => line.msg === 'engine cycle' && typeof line.cycle === 'object' && line.cycle !== null)
        .map((line) => ({ ...(line.cycle as Omit<CycleLog, 'time'>), time: Number(line.time) })),
  };
}

/** The JSON lines of a pino log (anything else, e.g. a stack trace on stderr, is skipped). */
export function logLines(output: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const text of output.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      // a line cut in the middle by a SIGKILL
    }
  }
  return lines;
}

/** Sends a signal and waits for the exit; SIGKILL after `graceMs`. */
export async function stopProcess(process: RunningProcess, signal: NodeJS.Signals, graceMs = 20_000): Promise<void> {
  if (process.child.exitCode !== null || process.child.signalCode !== null) return;
  process.child.kill(signal);
  const timer = setTimeout(() => process.child.kill('SIGKILL'), graceMs);
  await process.exited;
  clearTimeout(timer);
}

export interface WorkerTotals {
  label: string;
  workerId: string;
  cycles: number;
  planned: number;
  sent: number;
  received: number;
  replied: number;
  synced: number;
}

/** What each worker reported doing, from its own cycle log lines. */
export function workerTotals(workers: readonly WorkerProcess[]): WorkerTotals[] {
  return workers.map((worker) => {
    const totals: WorkerTotals = {
      label: worker.label,
      workerId: worker.workerId,
      cycles: 0,
      planned: 0,
      sent: 0,
      received: 0,
      replied: 0,
      synced: 0,
    };
    for (const cycle of worker.cycles()) {
      totals.cycles += 1;
      totals.planned += cycle.plan?.messages ?? 0;
      totals.sent += (cycle.send?.sent ?? 0) + (cycle.replies?.sent ?? 0);
      totals.received += cycle.sync?.received ?? 0;
      totals.replied += cycle.sync?.replied ?? 0;
      totals.synced += cycle.sync?.synced ?? 0;
    }
    return totals;
  });
}

// ---------------------------------------------------------------------------------------------
// The database's account of the day

const count = sql<number>`cast(count(*) as integer)`;

export interface WorkState {
  mailboxes: number;
  plans: number;
  /** Sum of mailbox_plans.planned: the initial sends the planner decided. */
  plannedByPlans: number;
  initial: number;
  replies: number;
  /** The day's messages: every message but the replies waiting for a later day and the closed ones. */
  total: number;
  /** Replies for which the day's budget had no room: planned for the next day, not part of this one. */
  laterReplies: number;
  /** New threads closed unsent by the send bounds (a reply took their place in the day's budget). */
  closed: number;
  /** Statuses of the day's messages. */
  byStatus: Record<string, number>;
  found: number;
  engaged: number;
  leases: number;
  leasedRows: number;
}

/**
 * The work of the day as one snapshot. Read piece by piece while workers run, the counts could come
 * from different moments: messages counted before a reply was planned and progress counted after its
 * parent was acted on made a day look done with that reply still to send (seen once in CI: 45 sent
 * against a done day of 44).
 */
export async function workState(db: Kysely<Database>): Promise<WorkState> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => readWorkState(trx));
}

async function readWorkState(db: Kysely<Database>): Promise<WorkState> {
  const [mailboxes, plans, kinds, statuses, progress, leases, leasedRows, later] = await Promise.all([
    db.selectFrom('mailboxes').select(count.as('n')).where('status', '=', 'active').executeTakeFirstOrThrow(),
    db
      .selectFrom('mailbox_plans')
      .select([count.as('n'), sql<number>`cast(coalesce(sum(planned), 0) as integer)`.as('planned')])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('warmup_messages')
      .select(['kind', count.as('n')])
      .groupBy('kind')
      .execute(),
    db
      .selectFrom('warmup_messages')
      .select(['status', count.as('n')])
      .groupBy('status')
      .execute(),
    db
      .selectFrom('warmup_messages')
      .select([
        sql<number>`cast(count(found_at) as integer)`.as('found'),
        sql<number>`cast(count(engaged_at) as integer)`.as('engaged'),
      ])
      .executeTakeFirstOrThrow(),
    db.selectFrom('leases').select(count.as('n')).executeTakeFirstOrThrow(),
    db
      .selectFrom('warmup_messages')
      .select(count.as('n'))
      .where('lease_owner', 'is not', null)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('warmup_messages')
      .select(count.as('n'))
      .where('kind', '=', 'reply')
      .where('status', '=', 'planned')
      .where('plan_day', '>', (eb) => eb.selectFrom('mailbox_plans').select((p) => p.fn.max('day').as('day')))
      .executeTakeFirstOrThrow(),
  ]);
  const byKind = Object.fromEntries(kinds.map((k) => [k.kind, Number(k.n)]));
  const byStatus = Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)]));
  const initial = byKind.initial ?? 0;
  const replies = byKind.reply ?? 0;
  const laterReplies = Number(later.n);
  if (laterReplies > 0) {
    byStatus.planned -= laterReplies;
    if (byStatus.planned === 0) delete byStatus.planned;
  }
  const closed = byStatus.expired ?? 0;
  delete byStatus.expired;
  return {
    mailboxes: Number(mailboxes.n),
    plans: Number(plans.n),
    plannedByPlans: Number(plans.planned),
    initial,
    replies,
    total: initial + replies - laterReplies - closed,
    laterReplies,
    closed,
    byStatus,
    found: Number(progress.found),
    engaged: Number(progress.engaged),
    leases: Number(leases.n),
    leasedRows: Number(leasedRows.n),
  };
}

/**
 * The day is over when every mailbox has its plan and every message was sent, found and acted on
 * by its recipient (a reply is planned before its parent counts as acted on, so no reply is missed).
 */
export function dayDone(state: WorkState): boolean {
  return (
    state.mailboxes > 0 &&
    state.plans === state.mailboxes &&
    state.total > 0 &&
    state.byStatus.sent === state.total &&
    state.found === state.total &&
    state.engaged === state.total
  );
}

export interface Accounting {
  /** Per interaction type: rows, distinct (mailbox, message) pairs, distinct messages. */
  interactions: Record<string, { rows: number; distinctPairs: number; distinctMessages: number }>;
  /** Sums of the daily rollup columns over every mailbox and day. */
  rollups: Record<string, number>;
}

export async function accounting(db: Kysely<Database>): Promise<Accounting> {
  const rows = await db
    .selectFrom('interactions')
    .select([
      'type',
      count.as('rows'),
      sql<number>`cast(count(distinct mailbox_id || ' ' || message_id) as integer)`.as('pairs'),
      sql<number>`cast(count(distinct message_id) as integer)`.as('messages'),
    ])
    .groupBy('type')
    .execute();
  const interactions: Accounting['interactions'] = {};
  for (const type of INTERACTION_TYPES) interactions[type] = { rows: 0, distinctPairs: 0, distinctMessages: 0 };
  for (const row of rows)
    interactions[row.type] = {
      rows: Number(row.rows),
      distinctPairs: Number(row.pairs),
      distinctMessages: Number(row.messages),
    };

  const columns = [
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
    'lost',
  ] as const;
  const sums = await db
    .selectFrom('daily_stats')
    .select(columns.map((c) => sql<number>`cast(coalesce(sum(${sql.ref(c)}), 0) as integer)`.as(c)))
    .executeTakeFirstOrThrow();
  const rollups: Record<string, number> = {};
  for (const column of columns) rollups[column] = Number((sums as Record<string, unknown>)[column]);
  return { interactions, rollups };
}

// ---------------------------------------------------------------------------------------------
// The mail servers' own account

export interface ImapSession {
  user: string;
  session: string;
  /** Line numbers in dovecot.log: the log process writes lines in the order it receives them. */
  loginLine: number;
  logoutLine: number | null;
}

/** Dovecot's log of the stack, one entry per line. */
export function dovecotLog(stack: MailStack): string[] {
  return readFileSync(path.join(stack.dir, 'log', 'dovecot.log'), 'utf8').split('\n');
}

/**
 * A session's closing line: `imap(user)<pid><session>: Info: Disconnected: … session=<session>`. Dovecot
 * sometimes drops the prefix of a process that exits at once (`imap: Info: Disconnected: …`), so the
 * session is read from the test stack's logout format, at the line's end.
 */
const CLOSING_LINE = /\bimap(?:\([^)]*\)<\d+><[^>]*>)?: Info: Disconnected: .* session=<([^>]+)>$/;

/** IMAP sessions of these users that logged in at or after line `fromLine` (Login … Disconnected, keyed by session id). */
export function parseImapSessions(lines: readonly string[], users: readonly MailUser[], fromLine = 0): ImapSession[] {
  const wanted = new Set(users.map((u) => u.email.toLowerCase()));
  const sessions = new Map<string, ImapSession>();
  lines.forEach((line, index) => {
    const login = /imap-login: Info: Login: user=<([^>]+)>.*session=<([^>]+)>/.exec(line);
    if (login && index >= fromLine && wanted.has(login[1].toLowerCase())) {
      sessions.set(login[2], { user: login[1].toLowerCase(), session: login[2], loginLine: index, logoutLine: null });
      return;
    }
    const out = CLOSING_LINE.exec(line);
    const known = out ? sessions.get(out[1]) : undefined;
    if (known && known.logoutLine === null) known.logoutLine = index;
  });
  return [...sessions.values()];
}

export function imapSessions(stack: MailStack, users: readonly MailUser[], fromLine = 0): ImapSession[] {
  return parseImapSessions(dovecotLog(stack), users, fromLine);
}

/** Pairs of sessions of one user that were open at the same time (one logged in before the other logged out). */
export function overlappingSessions(sessions: readonly ImapSession[]): Array<[ImapSession, ImapSession]> {
  const overlaps: Array<[ImapSession, ImapSession]> = [];
  const byUser = new Map<string, ImapSession[]>();
  for (const s of sessions) byUser.set(s.user, [...(byUser.get(s.user) ?? []), s]);
  for (const list of byUser.values()) {
    const sorted = [...list].sort((a, b) => a.loginLine - b.loginLine);
    for (let i = 1; i < sorted.length; i++) {
      const previous = sorted[i - 1];
      if (previous.logoutLine === null || previous.logoutLine > sorted[i].loginLine)
        overlaps.push([previous, sorted[i]]);
    }
  }
  return overlaps;
}

/**
 * Every Dovecot log line that names these sessions (login, the imap process's own lines, however it
 * ended), for a failure message: a session the parser saw no closing line for shows what Dovecot did
 * write about it.
 */
export function describeSessions(stack: MailStack, sessions: readonly ImapSession[]): string {
  const lines = dovecotLog(stack);
  return sessions
    .map((x) => lines.filter((line) => line.includes(`<${x.session}>`)).join('\n') || `(no line names ${x.session})`)
    .join('\n\n');
}

/** The Dovecot log lines of overlapping sessions, for a failure message. */
export function describeOverlaps(stack: MailStack, overlaps: ReadonlyArray<[ImapSession, ImapSession]>): string {
  const lines = dovecotLog(stack);
  return overlaps
    .map((pair) =>
      pair
        .flatMap((x) => [lines[x.loginLine], x.logoutLine === null ? '(never logged out)' : lines[x.logoutLine]])
        .join('\n'),
    )
    .join('\n\n');
}

/** How many times Postfix accepted a message with each Message-ID (its cleanup daemon logs every one). */
export function postfixSubmissions(stack: MailStack): Map<string, number> {
  const counts = new Map<string, number>();
  const text = readFileSync(path.join(stack.dir, 'log', 'postfix.log'), 'utf8');
  for (const match of text.matchAll(/cleanup\[\d+\]: [0-9A-F]+: message-id=(<[^>\s]+>)/g)) {
    counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
  }
  return counts;
}

/** The machine, for a benchmark report. */
export function machine(): { cpus: number; model: string; memoryGb: number } {
  const cpus = os.availableParallelism();
  return { cpus, model: os.cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(os.totalmem() / 2 ** 30) };
}
