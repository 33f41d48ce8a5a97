// Planners as separate processes on one database: each runs one `planDay` as its own worker
// (its own connections, its own CPU), so several really plan at once. Used by
// test/scale/parallel-planning.test.ts and bench/parallel-planner.bench.ts.
//
// A planner process connects, says it is ready, waits for a line on stdin (so several start
// together), plans, and reports what it planned and the CPU time it took.
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Insertable, Kysely } from 'kysely';
import { pino } from 'pino';
import { fixedClock } from '../../src/clock.js';
import { localDay } from '../../src/calendar.js';
import { openDatabase } from '../../src/db/database.js';
import type { Database, MailboxesTable } from '../../src/db/schema.js';
import { createEngineDeps } from '../../src/engine/engine-deps.js';
import { PAIR_SPACING_MS, PAIR_THREADS_PER_DAY, INBOUND_SLACK, emailDomain } from '../../src/engine/partners.js';
import { planDay } from '../../src/engine/planner.js';
import { seededRandom } from '../../src/engine/random.js';
import { buildBundle, SERVER_NODE_FLAGS } from '../../src/server-build.mjs';

const SELF = fileURLToPath(import.meta.url);

let built: Promise<string> | undefined;
/** This file built as the server is (src/server-build.mjs): a planner process starts as a worker does, in about 1 s of CPU. */
function builtSelf(): Promise<string> {
  const file = fileURLToPath(new URL('../../dist/test/planners.mjs', import.meta.url));
  built ??= buildBundle(SELF, file).then(() => file);
  return built;
}

export interface PlannerOptions {
  workerId: string;
  at: Date;
  seed: number;
  leaseMs: number;
  /** Mailboxes per transaction (the planner's default when not given). */
  batchSize?: number;
  /** Plans whole days whatever the time (budgets do not depend on when a planner runs). */
  ignoreSchedule?: boolean;
}

export interface PlannerReport {
  workerId: string;
  mailboxes: number;
  messages: number;
  ran: boolean;
  wallMs: number;
  /** user + system CPU of the planning itself (connecting and loading the code left out). */
  cpuMs: number;
}

export interface PlannerProcess {
  child: ChildProcess;
  /** Starts planning (all planners of a run are told at once). */
  go(): void;
  /** Its report; rejects when it exits without one (killed, failed). */
  done: Promise<PlannerReport>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a planner process on the database of `env` (DATABASE_URL); resolves once it is connected and waiting. */
export async function startPlanner(env: Record<string, string>, options: PlannerOptions): Promise<PlannerProcess> {
  // started as a worker is (src/server-build.mjs)
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, await builtSelf(), '--child', JSON.stringify(options)], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = readline.createInterface({ input: child.stdout });
  let report: PlannerReport | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const message = JSON.parse(line) as { phase: string } & PlannerReport;
      if (message.phase === 'ready') resolve();
      if (message.phase === 'done') report = message;
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`planner exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  const done = exited.then(({ code, signal }) => {
    if (report) return report;
    throw new Error(`planner ${options.workerId} exited (${code ?? signal}) without a report: ${stderr}`);
  });
  // a planner that is killed on purpose rejects `done`; its caller decides whether to look
  done.catch(() => undefined);
  await ready;
  return { child, go: () => child.stdin.end('go\n'), done, exited };
}

async function child(options: PlannerOptions & { at: string }): Promise<void> {
  const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is needed');
  const database = openDatabase({ databaseUrl: url, dataDir: process.env.WARMUP_DATA_DIR ?? '.', poolSize: 2 });
  await database.db.selectFrom('leases').select('key').limit(1).execute();
  const at = new Date(options.at);
  const deps = createEngineDeps({
    db: database.db,
    dialect: database.dialect,
    clock: fixedClock(at),
    logger: pino({ level: 'silent' }),
    random: seededRandom(options.seed),
    workerId: options.workerId,
    // the planner never touches credentials or templates
    mailboxes: {
      getCredentials: () => Promise.reject(new Error('not used by the planner')),
    },
    templates: { pickTemplate: () => Promise.resolve(undefined) },
    settings: { leaseMs: options.leaseMs },
  });
  emit({ phase: 'ready' });
  const input = readline.createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => input.once('line', () => resolve()));
  // stdin would keep the process alive after its report
  input.close();
  process.stdin.destroy();
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const summary = await planDay(deps, at, { batchSize: options.batchSize, ignoreSchedule: options.ignoreSchedule });
  const cpu = process.cpuUsage(cpuBefore);
  emit({
    phase: 'done',
    workerId: options.workerId,
    mailboxes: summary.mailboxes.length,
    messages: summary.messages,
    ran: summary.ran,
    wallMs: Math.round(performance.now() - started),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  });
  await database.close();
}

// ---------------------------------------------------------------------------------------------
// A pool to plan, and the rules its plans must keep.

export interface PoolOptions {
  workspaceId: string;
  count: number;
  /** Mailboxes per domain: each sender has this many − 1 peers it must not write to. */
  perDomain: number;
  zones: readonly string[];
  /** The warmup settings of mailbox i (the zone is added). */
  warmup: (i: number) => Record<string, unknown>;
  /** Its ramp position. */
  warmupDay: (i: number) => number;
  now: string;
}

/** Proven, active mailboxes straight into the table, 500 a statement. Returns each one's zone and domain by id. */
export async function seedPool(
  db: Kysely<Database>,
  options: PoolOptions,
): Promise<{ zoneOf: Map<string, string>; domainOf: Map<string, string> }> {
  const zoneOf = new Map<string, string>();
  const domainOf = new Map<string, string>();
  const rows: Insertable<MailboxesTable>[] = [];
  for (let i = 0; i < options.count; i++) {
    const id = `mb_${String(i).padStart(6, '0')}`;
    const domain = `d${Math.floor(i / options.perDomain)}.pool.test`;
    const email = `m${i}@${domain}`;
    const timezone = options.zones[i % options.zones.length];
    zoneOf.set(id, timezone);
    domainOf.set(id, domain);
    rows.push({
      id,
      workspace_id: options.workspaceId,
      email,
      email_normalized: email,
      name: null,
      provider: 'custom',
      connection_type: 'imap',
      status: 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'x',
      warmup: JSON.stringify({ ...options.warmup(i), timezone, weekdaysOnly: false }),
      warmup_day: options.warmupDay(i),
      proven_at: options.now,
      created_at: options.now,
      updated_at: options.now,
    });
  }
  for (let start = 0; start < rows.length; start += 500)
    await db
      .insertInto('mailboxes')
      .values(rows.slice(start, start + 500))
      .execute();
  return { zoneOf, domainOf };
}

/**
 * Every broken rule over all the plans in the database, as readable lines (empty when none):
 * a mailbox with two plans for a day or planned rows that do not add up to its plan, a sender
 * writing to itself or to its own domain, the same pair more than PAIR_THREADS_PER_DAY times on a
 * day or two of its threads closer than PAIR_SPACING_MS, and a recipient receiving more new threads on one of its
 * planned local days than its budget + INBOUND_SLACK.
 */
export async function brokenRules(db: Kysely<Database>, zoneOf: ReadonlyMap<string, string>): Promise<string[]> {
  const broken: string[] = [];
  const plans = await db.selectFrom('mailbox_plans').selectAll().execute();
  const targetOf = new Map<string, number>();
  const plannedOf = new Map<string, number>();
  for (const plan of plans) {
    const key = `${plan.mailbox_id} ${plan.day}`;
    if (targetOf.has(key)) broken.push(`two plans for ${key}`);
    targetOf.set(key, Number(plan.target));
    plannedOf.set(key, Number(plan.planned));
  }
  const rows = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
    .select([
      'w.sender_mailbox_id as sender',
      'w.recipient_mailbox_id as recipient',
      'w.plan_day as day',
      'w.due_at as dueAt',
      's.email_normalized as senderEmail',
      'r.email_normalized as recipientEmail',
    ])
    .where('w.kind', '=', 'initial')
    .execute();
  const rowsOf = new Map<string, number>();
  const pairsOfDay = new Map<string, number>();
  const pairDays = new Map<string, string[]>();
  const inbound = new Map<string, number>();
  for (const row of rows) {
    const planKey = `${row.sender} ${row.day}`;
    rowsOf.set(planKey, (rowsOf.get(planKey) ?? 0) + 1);
    if (row.sender === row.recipient) broken.push(`${row.sender} writes to itself`);
    if (emailDomain(row.senderEmail) === emailDomain(row.recipientEmail))
      broken.push(`${row.sender} writes to ${row.recipient} on its own domain`);
    const pairDay = `${row.sender} ${row.recipient} ${row.day}`;
    pairsOfDay.set(pairDay, (pairsOfDay.get(pairDay) ?? 0) + 1);
    const pair = `${row.sender} ${row.recipient}`;
    pairDays.set(`${pair} ${row.day}`, [...(pairDays.get(`${pair} ${row.day}`) ?? []), row.dueAt]);
    const received = `${row.recipient} ${localDay(new Date(row.dueAt), zoneOf.get(row.recipient) ?? 'UTC')}`;
    inbound.set(received, (inbound.get(received) ?? 0) + 1);
  }
  for (const [key, planned] of plannedOf)
    if ((rowsOf.get(key) ?? 0) !== planned) broken.push(`${key}: plan says ${planned}, rows ${rowsOf.get(key) ?? 0}`);
  for (const [key, n] of pairsOfDay) if (n > PAIR_THREADS_PER_DAY) broken.push(`pair ${key} ${n} times on one day`);
  for (const [pair, times] of pairDays) {
    const sorted = times.sort();
    for (let i = 1; i < sorted.length; i++)
      if (Date.parse(sorted[i]) - Date.parse(sorted[i - 1]) < PAIR_SPACING_MS)
        broken.push(`pair ${pair} twice within ${PAIR_SPACING_MS / 60_000} minutes`);
  }
  for (const [key, n] of inbound) {
    // a recipient's own day it has a plan for: at most its budget + slack
    const target = targetOf.get(key);
    if (target !== undefined && n > target + INBOUND_SLACK)
      broken.push(`${key} receives ${n}, budget ${target} + ${INBOUND_SLACK}`);
  }
  return broken;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const options = argument('--child');
  if (options) await child(JSON.parse(options) as PlannerOptions & { at: string });
}
