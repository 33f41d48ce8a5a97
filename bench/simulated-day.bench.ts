// A full simulated warmup day of N mailboxes (default 10,000) on the real local mail stack,
// PostgreSQL and 3 `warmup worker` processes: every planned email sent once and counted once?
//
// N mail users on one throw-away Postfix + Dovecot (50 to a domain), N mailboxes in one PostgreSQL
// schema, written in bulk (active, proven, on warmup day 1 with the default settings: 2 emails a
// day, less on a light day, replies at 30 %). Nothing is written into the day's plan: the workers
// plan it, send it, read it and answer it themselves.
//
// The day runs in the engine's test mode (`warmup worker --ignore-schedule`): everything planned for
// the mailbox's day is due at once, and the recipients act at once, so a day takes minutes, not
// ten hours. What holds as in a real day: the planner's targets, partner rules and inbound caps,
// each mailbox's day budget (replies count against it; a reply with no room left waits for the next
// day), the sends over SMTP and the reading, rescuing, flagging, replying and filing over IMAP.
// What does not: the send window, the gaps between sends and the delays before reading. The
// workers' clock is the real one, so the mailboxes live in a time zone where their day has hours
// left (a day that ended mid-run would be planned again).
//
// The day is over when every mailbox has its plan, nothing of the day is still planned, and every
// message sent was found and acted on by its recipient. Then the checks, from outside the engine:
// the Message-IDs Postfix accepted (its log) and the copies Dovecot stored (the Maildirs) per sent
// message, the interactions (one per mailbox, message and type), the daily rollups against them,
// and what is still claimed.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- --only simulated-day [--mailboxes 2000] [--workers 3]
//   (standalone: node --import tsx bench/simulated-day.bench.ts --mailboxes 2000 --workers 3)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Insertable } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { newId } from '../src/db/ids.js';
import type { MailboxesTable } from '../src/db/schema.js';
import { encryptSecret, loadSecretKey } from '../src/secrets/secrets.js';
import { DEFAULT_WARMUP } from '../src/mailboxes/warmup-settings.js';
import { createPostgresSchema } from '../test/helpers/postgres-schema.js';
import { stopMailStack, type MailStack } from '../test/mailstack/mail-stack.js';
import type { MailUser } from '../test/mailstack/users.js';
import {
  accounting,
  machine,
  postfixSubmissions,
  SECRET_KEY,
  sleep,
  startWorker,
  stopProcess,
  workerTotals,
  workState,
  type Accounting,
  type WorkerProcess,
  type WorkState,
} from '../test/scale/cluster.js';
import {
  benchWorkspace,
  cpuTimes,
  problemsOf,
  processCpuSeconds,
  startBenchStack,
  workerBenchDatabase,
} from './workers.bench.js';

export interface SimulatedDayOptions {
  /** Mailboxes (and mail users) in the pool; default 10,000. */
  mailboxes?: number;
  /** `warmup worker` processes; default 3. */
  workers?: number;
  databaseUrl?: string;
  /** Give up when nothing moved for this long (default 5 minutes). */
  stallMs?: number;
  /** Stop the day unfinished after this long, and report how far it got (default: no limit). */
  limitMs?: number;
  log?: (line: string) => void;
}

/** CPU seconds (user + system) over the day, by who spent them; null where /proc could not tell. */
export interface DayCpu {
  workers: number | null;
  /** Postfix's and Dovecot's masters and every process under them, exited ones included. */
  mailServers: number | null;
  /** The PostgreSQL backends that served the workers (sampled while they lived: a backend closed between samples loses its last seconds). */
  postgres: number | null;
  /** This process: the polling of the database state. */
  bench: number;
  /** Share of the machine's CPU time that was busy, everything and everyone included. */
  machineBusy: number;
}

export interface SimulatedDayResult {
  machine: ReturnType<typeof machine>;
  mailboxes: number;
  workers: number;
  timezone: string;
  /** Load average (1 min) at the start and the end: other work on the machine. */
  loadAverage: [number, number];
  setupMs: { mailStack: number; database: number };
  /** From starting the workers: every mailbox planned, the last send, the last message acted on. */
  plannedMs: number | null;
  /**
   * The last message sent and the last one acted on, from starting the workers, as the 2 s poll saw
   * their counts last grow (the rows' own times are the business time of the call that wrote them).
   */
  lastSentMs: number | null;
  lastActedOnMs: number | null;
  /** Nothing of the day left planned, and every message sent found and acted on (seen by the 2 s poll). */
  doneMs: number | null;
  completed: boolean;
  state: WorkState;
  accounting: Accounting;
  perWorker: ReturnType<typeof workerTotals>;
  cpu: DayCpu;
  /** What the checks found wrong; empty when the day was sent once and counted once. */
  discrepancies: string[];
  /** Sent messages and the copies of them: accepted by Postfix, stored by Dovecot. */
  copies: { sent: number; acceptedOnce: number; storedOnce: number; storedCopies: number };
  problems: Record<string, number>;
}

const WORKER_OPTIONS = { intervalMs: 200, leaseMs: 120_000, ignoreSchedule: true, logLevel: 'info' } as const;
const MAILBOXES_PER_DOMAIN = 50;
const POLL_MS = 2_000;
const WORKERS_APP = 'warmup-simulated-day';

export async function runSimulatedDay(options: SimulatedDayOptions = {}): Promise<SimulatedDayResult | null> {
  const log = options.log ?? ((line: string) => console.log(line));
  const databaseUrl = workerBenchDatabase('simulated-day', options.databaseUrl, log);
  if (databaseUrl === null) return null;
  const count = options.mailboxes ?? 10_000;
  const workerCount = options.workers ?? 3;
  const stallMs = options.stallMs ?? 5 * 60_000;
  const limitMs = options.limitMs ?? Infinity;
  const users = simulatedUsers(count);
  const timezone = zoneWithTheMostDayLeft(new Date());
  const loadAtStart = os.loadavg()[0];

  let started = Date.now();
  const stack = await startBenchStack(users, 'bench-day');
  const stackMs = Date.now() - started;
  log(`mail stack with ${count} users up in ${(stackMs / 1000).toFixed(1)} s`);
  const schema = await createPostgresSchema(databaseUrl, 'bench_day');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-day-'));
  const database = openDatabase({ databaseUrl: schema.url, dataDir, poolSize: 4 });
  const workers: WorkerProcess[] = [];
  try {
    started = Date.now();
    await migrateToLatest(database.db, database.dialect);
    await insertMailboxes(database, stack, users, dataDir, timezone);
    const databaseMs = Date.now() - started;
    log(`${count} mailboxes written in ${(databaseMs / 1000).toFixed(1)} s (time zone ${timezone})`);

    const workerUrl = new URL(schema.url);
    workerUrl.searchParams.set('application_name', WORKERS_APP);
    const env = {
      DATABASE_URL: workerUrl.toString(),
      WARMUP_DATA_DIR: dataDir,
      WARMUP_SECRET_KEY: SECRET_KEY,
      WARMUP_MAIL_ALLOWED_HOSTS: stack.host,
      WARMUP_MAIL_CA_FILE: stack.caCert,
    };
    const serversBefore = mailServerTicks(stack);
    const machineBefore = cpuTimes();
    const benchBefore = process.cpuUsage();
    const backends = new BackendCpu(databaseUrl);
    const start = Date.now();
    for (let i = 1; i <= workerCount; i++) workers.push(await startWorker(`w${i}`, env, WORKER_OPTIONS));

    let plannedMs: number | null = null;
    let doneMs: number | null = null;
    let lastSent = 0;
    let lastSentMs: number | null = null;
    let lastActedOn = 0;
    let lastActedOnMs: number | null = null;
    let state = await workState(database.db);
    let lastChange = Date.now();
    let lastShape = '';
    let lastLog = 0;
    for (;;) {
      await sleep(POLL_MS);
      await backends.sample();
      state = await workState(database.db);
      const elapsed = Date.now() - start;
      const open = state.byStatus.planned ?? 0;
      const sent = state.byStatus.sent ?? 0;
      if (plannedMs === null && state.plans === state.mailboxes) plannedMs = elapsed;
      if (sent > lastSent) {
        lastSent = sent;
        lastSentMs = elapsed;
      }
      if (state.engaged > lastActedOn) {
        lastActedOn = state.engaged;
        lastActedOnMs = elapsed;
      }
      if (plannedMs !== null && open === 0 && state.found === sent && state.engaged === sent) {
        doneMs = elapsed;
        break;
      }
      const shape = JSON.stringify(state);
      if (shape !== lastShape) {
        lastShape = shape;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > stallMs) {
        log(`nothing moved for ${stallMs / 1000} s: stopping the day unfinished`);
        break;
      }
      if (elapsed > limitMs) {
        log(`the day is not done after ${(limitMs / 60_000).toFixed(0)} minutes: stopping it unfinished`);
        break;
      }
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        log(
          `${(elapsed / 1000).toFixed(0)} s: plans ${state.plans}/${state.mailboxes}, messages ${JSON.stringify(state.byStatus)}, ` +
            `found ${state.found}, acted on ${state.engaged}, closed ${state.closed}, replies for tomorrow ${state.laterReplies}`,
        );
      }
    }
    // A few more cycles change nothing when the day is really over.
    await sleep(3_000);
    await backends.sample();
    const after = await workState(database.db);
    const workerCpu = processCpuSeconds(workers.map((w) => w.pid));
    const serversAfter = mailServerTicks(stack);
    const machineAfter = cpuTimes();
    const benchCpu = process.cpuUsage(benchBefore);
    // a worker's last cycle lines reach its output as it stops; it gives its claims back
    await Promise.all(workers.map((w) => stopProcess(w.process, 'SIGTERM')));
    await backends.close();

    const discrepancies: string[] = [];
    if (doneMs === null) discrepancies.push(`the day did not finish: ${JSON.stringify(state)}`);
    // Not the day's state: named leases (plan buckets, …) run out or are given back by themselves, and
    // test mode claims tomorrow's replies ahead and leaves them waiting (checked once the workers stop).
    const settled = (x: WorkState) => JSON.stringify({ ...x, leases: 0, leasedRows: 0 });
    if (settled(after) !== settled(state))
      discrepancies.push(`the state moved after the day was over: ${JSON.stringify(state)} → ${JSON.stringify(after)}`);
    const counted = await accounting(database.db);
    discrepancies.push(...countingDiscrepancies(after, counted));
    const claimed = await stillClaimed(database);
    if (claimed.rows > 0)
      discrepancies.push(`${claimed.rows} messages still claimed by a worker after the workers stopped`);
    if (claimed.syncs > 0)
      discrepancies.push(`${claimed.syncs} mailboxes still claimed for a sync after the workers stopped`);
    const copies = await copiesOfSentMail(database, stack, discrepancies);

    return {
      machine: machine(),
      mailboxes: count,
      workers: workerCount,
      timezone,
      loadAverage: [loadAtStart, os.loadavg()[0]],
      setupMs: { mailStack: stackMs, database: databaseMs },
      plannedMs,
      lastSentMs,
      lastActedOnMs,
      doneMs,
      completed: doneMs !== null,
      state: after,
      accounting: counted,
      perWorker: workerTotals(workers),
      cpu: {
        workers: workerCpu,
        mailServers:
          serversBefore === null || serversAfter === null ? null : (serversAfter - serversBefore) / TICKS_PER_SECOND,
        postgres: backends.seconds(),
        bench: (benchCpu.user + benchCpu.system) / 1e6,
        machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
      },
      discrepancies,
      copies,
      problems: problemsOf(workers),
    };
  } catch (error) {
    log(
      `simulated day failed; last worker output:\n${workers.map((w) => w.process.output().slice(-3000)).join('\n---\n')}`,
    );
    throw error;
  } finally {
    // a failed clean-up step is reported, not thrown: it would replace the day's result
    const cleanUp = async (what: string, step: () => Promise<unknown>) => {
      try {
        await step();
      } catch (error) {
        log(`clean-up: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    await cleanUp('stopping the workers', () => Promise.all(workers.map((w) => stopProcess(w.process, 'SIGTERM'))));
    await cleanUp('closing the database', () => database.close());
    await cleanUp('dropping the schema', () => schema.drop());
    fs.rmSync(dataDir, { recursive: true, force: true });
    await cleanUp('stopping the mail stack', () => stopMailStack(stack, { timeoutMs: 180_000 }));
  }
}

/** `count` users, 50 to a domain, so most partners are on another domain than the sender's. */
export function simulatedUsers(count: number): MailUser[] {
  return Array.from({ length: count }, (_, i) => ({
    email: `m${i}@day${Math.floor(i / MAILBOXES_PER_DOMAIN)}.sim.test`,
    password: `m${i}-pass-123`,
  }));
}

/**
 * UTC before noon, else UTC−12: the mailboxes' day then has at least 12 hours left, so it does not
 * end (and a next day get planned) in the middle of the run.
 */
function zoneWithTheMostDayLeft(now: Date): string {
  return now.getUTCHours() < 12 ? 'UTC' : 'Etc/GMT+12';
}

/**
 * The bench workspace (with its default templates, as the API makes it) and one mailbox per user,
 * written in bulk: active and proven, as mailboxes that passed their round trip, on warmup day 0
 * (the first plan makes it day 1).
 */
async function insertMailboxes(
  database: DatabaseHandle,
  stack: MailStack,
  users: readonly MailUser[],
  dataDir: string,
  timezone: string,
): Promise<void> {
  const { workspaceId } = await benchWorkspace(database, stack, dataDir);
  const key = loadSecretKey({ secretKey: SECRET_KEY, dataDir });
  const warmup = JSON.stringify({ ...DEFAULT_WARMUP, timezone });
  const now = new Date().toISOString();
  for (let start = 0; start < users.length; start += 1_000) {
    const rows: Insertable<MailboxesTable>[] = users.slice(start, start + 1_000).map((user) => {
      const id = newId('mbx');
      const server = (port: number) => JSON.stringify({ host: stack.host, port, secure: false, username: user.email });
      return {
        id,
        workspace_id: workspaceId,
        email: user.email,
        email_normalized: user.email,
        name: null,
        provider: 'custom',
        connection_type: 'imap',
        status: 'active',
        imap: server(stack.imapPort),
        smtp: server(stack.submissionPort),
        password_encrypted: encryptSecret(key, user.password, id),
        warmup,
        proven_at: now,
        created_at: now,
        updated_at: now,
      };
    });
    await database.db.insertInto('mailboxes').values(rows).execute();
  }
}

/** Sending is at least once, counting exactly once: what the interactions and rollups say against the messages. */
function countingDiscrepancies(state: WorkState, { interactions, rollups }: Accounting): string[] {
  const found: string[] = [];
  const expect = (what: string, actual: number, expected: number) => {
    if (actual !== expected) found.push(`${what}: ${actual}, expected ${expected}`);
  };
  const sent = state.byStatus.sent ?? 0;
  for (const [type, counts] of Object.entries(interactions))
    expect(`${type} interactions per (mailbox, message)`, counts.rows, counts.distinctPairs);
  expect('sent interactions', interactions.sent.rows, sent);
  expect('received interactions', interactions.received.rows, state.found);
  expect('daily_stats sent', rollups.sent, interactions.sent.rows);
  expect('daily_stats received', rollups.received, interactions.received.rows);
  expect(
    'daily_stats placements (inbox + spam + promotions + other)',
    rollups.inbox + rollups.spam + rollups.promotions + rollups.other,
    interactions.received.rows,
  );
  for (const type of ['opened', 'flagged', 'rescued', 'replied', 'bounced', 'failed'] as const)
    expect(`daily_stats ${type}`, rollups[type], interactions[type].rows);
  expect('reply messages against replied interactions', state.replies, interactions.replied.rows);
  expect('initial messages against the plans', state.initial, state.plannedByPlans);
  return found;
}

async function stillClaimed(database: DatabaseHandle): Promise<{ rows: number; syncs: number }> {
  const [rows, syncs] = await Promise.all([
    database.db
      .selectFrom('warmup_messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('lease_owner', 'is not', null)
      .executeTakeFirstOrThrow(),
    database.db
      .selectFrom('mailboxes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sync_owner', 'is not', null)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows: Number(rows.n), syncs: Number(syncs.n) };
}

/**
 * Every sent message handed to Postfix once (its cleanup daemon logs each Message-ID it accepts)
 * and stored once by Dovecot (one file in the recipient's Maildir, whatever folder it was filed in).
 */
async function copiesOfSentMail(
  database: DatabaseHandle,
  stack: MailStack,
  discrepancies: string[],
): Promise<SimulatedDayResult['copies']> {
  const rows = await database.db
    .selectFrom('warmup_messages')
    .select('message_id')
    .where('sent_at', 'is not', null)
    .execute();
  const accepted = postfixSubmissions(stack);
  const stored = storedMessageIds(path.join(stack.dir, 'mail'));
  let acceptedOnce = 0;
  let storedOnce = 0;
  const notOnce: string[] = [];
  for (const { message_id: id } of rows) {
    const a = accepted.get(id) ?? 0;
    const s = stored.get(id) ?? 0;
    if (a === 1) acceptedOnce += 1;
    if (s === 1) storedOnce += 1;
    if (a !== 1 || s !== 1) notOnce.push(`${id} accepted ${a}× stored ${s}×`);
  }
  const known = new Set(rows.map((r) => r.message_id));
  const unknown = [...accepted.keys()].filter((id) => !known.has(id));
  if (notOnce.length > 0)
    discrepancies.push(
      `${notOnce.length} sent messages not accepted and stored exactly once, e.g. ${notOnce.slice(0, 3).join('; ')}`,
    );
  if (unknown.length > 0)
    discrepancies.push(
      `${unknown.length} messages Postfix accepted that no sent row names, e.g. ${unknown.slice(0, 3).join(' ')}`,
    );
  let storedCopies = 0;
  for (const n of stored.values()) storedCopies += n;
  return { sent: rows.length, acceptedOnce, storedOnce, storedCopies };
}

/** Message-ID → number of files holding it, over every Maildir folder under `root`. */
function storedMessageIds(root: string): Map<string, number> {
  const counts = new Map<string, number>();
  const head = Buffer.alloc(8_192);
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && /[/\\](cur|new)$/.test(dir)) {
        const fd = fs.openSync(full, 'r');
        const length = fs.readSync(fd, head, 0, head.length, 0);
        fs.closeSync(fd);
        const headers = head
          .subarray(0, length)
          .toString('latin1')
          .split(/\r?\n\r?\n/)[0];
        const id = /^message-id:\s*(<[^>\s]+>)/im.exec(headers)?.[1];
        if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
  };
  walk(root);
  return counts;
}

const TICKS_PER_SECOND = 100;

/** utime, stime, cutime and cstime of a /proc/<pid>/stat line, and its parent. */
function procStat(pid: number): { ppid: number; ticks: number } | null {
  try {
    // the command name (field 2) may hold spaces: count fields after its closing parenthesis
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return null;
  }
}

/**
 * CPU ticks of Postfix's and Dovecot's masters and every process under them; an exited child's time
 * is in its master's cutime/cstime once reaped. Null without /proc.
 */
function mailServerTicks(stack: MailStack): number | null {
  const masters = [
    path.join(stack.dir, 'run', 'dovecot', 'master.pid'),
    path.join(stack.dir, 'postfix', 'spool', 'pid', 'master.pid'),
  ].map((file) => Number(fs.readFileSync(file, 'utf8').trim()));
  let processes: Map<number, { ppid: number; ticks: number }>;
  try {
    processes = new Map();
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const stat = procStat(Number(name));
      if (stat) processes.set(Number(name), stat);
    }
  } catch {
    return null;
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, depth = 0; p > 1 && depth < 10; depth++) {
      if (masters.includes(p)) return true;
      p = processes.get(p)?.ppid ?? 0;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, stat] of processes) if (inTree(pid)) ticks += stat.ticks;
  return ticks;
}

/**
 * CPU of the PostgreSQL backends serving the workers (found by their application_name), sampled while they live: the highest reading of each backend process.
 */
class BackendCpu {
  private readonly client: pg.Client;
  private readonly ticks = new Map<number, number>();
  private readonly connected: Promise<void>;

  constructor(baseUrl: string) {
    this.client = new pg.Client({ connectionString: baseUrl });
    this.connected = this.client.connect().then(() => undefined);
  }

  async sample(): Promise<void> {
    await this.connected;
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [WORKERS_APP],
    );
    for (const { pid } of rows) {
      // null: the backend closed since the query (or there is no /proc: then nothing is ever read)
      const stat = procStat(pid);
      if (stat !== null) this.ticks.set(pid, Math.max(this.ticks.get(pid) ?? 0, stat.ticks));
    }
  }

  seconds(): number | null {
    if (this.ticks.size === 0) return null;
    let ticks = 0;
    for (const t of this.ticks.values()) ticks += t;
    return ticks / TICKS_PER_SECOND;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

const seconds = (ms: number | null) => (ms === null ? 'not reached' : `${(ms / 1000).toFixed(1)} s`);
const cpuSeconds = (s: number | null) => (s === null ? 'n/a' : `${s.toFixed(1)} s`);

/** The BENCHMARKS.md report of a result. */
export function simulatedDayReport(result: SimulatedDayResult | null): string {
  if (!result) return 'skipped (needs TEST_DATABASE_URL and the mail stack packages)';
  const { cpus, model, memoryGb } = result.machine;
  const { state, accounting: counted, cpu, copies } = result;
  const sent = state.byStatus.sent ?? 0;
  const lines = [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, shared (load average ${result.loadAverage[0].toFixed(1)} at the start, ${result.loadAverage[1].toFixed(1)} at the end); ` +
      `${result.mailboxes.toLocaleString('en-US')} mailboxes in ${result.timezone}, ${result.workers} workers, --ignore-schedule`,
    '',
    '| mailboxes | workers | planned (initial) | replies | closed unsent | sent | found | acted on | all planned | last sent | last acted on | day done | msg/s |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${result.mailboxes.toLocaleString('en-US')} | ${result.workers} | ${state.initial} | ${state.replies - state.laterReplies} (+${state.laterReplies} for tomorrow) | ${state.closed} | ${sent} | ${state.found} | ${state.engaged} | ` +
      `${seconds(result.plannedMs)} | ${seconds(result.lastSentMs)} | ${seconds(result.lastActedOnMs)} | ${seconds(result.doneMs)} | ${result.doneMs ? (sent / (result.doneMs / 1000)).toFixed(1) : 'n/a'} |`,
    '',
    `CPU over the day: workers ${cpuSeconds(cpu.workers)}, Postfix + Dovecot ${cpuSeconds(cpu.mailServers)}, the workers' PostgreSQL backends ${cpuSeconds(cpu.postgres)}, ` +
      `the benchmark's own polling ${cpu.bench.toFixed(1)} s; machine ${Math.round(cpu.machineBusy * 100)} % busy. ` +
      `Set-up: mail stack ${(result.setupMs.mailStack / 1000).toFixed(1)} s, mailboxes ${(result.setupMs.database / 1000).toFixed(1)} s.`,
    '',
    `Copies: ${copies.sent} sent messages, ${copies.acceptedOnce} accepted by Postfix exactly once, ${copies.storedOnce} stored by Dovecot exactly once (${copies.storedCopies} copies of warmup mail stored in all). ` +
      `Counting: sent interactions ${counted.interactions.sent.rows} = daily_stats sent ${counted.rollups.sent}; received ${counted.interactions.received.rows} = daily_stats received ${counted.rollups.received}; ` +
      `opened ${counted.rollups.opened}, flagged ${counted.rollups.flagged}, replied ${counted.rollups.replied}, failed ${counted.rollups.failed}.`,
    '',
    `Per worker (from its cycle logs): ${result.perWorker.map((w) => `${w.label} ${w.cycles} cycles, planned ${w.planned}, sent ${w.sent}, received ${w.received}`).join('; ')}`,
    '',
    result.discrepancies.length === 0
      ? 'Discrepancies: none.'
      : `Discrepancies:\n${result.discrepancies.map((d) => `- ${d}`).join('\n')}`,
  ];
  const problems = Object.entries(result.problems).filter(([message]) => message !== 'engine cycle');
  if (problems.length > 0)
    lines.push('', `Workers logged: ${problems.map(([message, n]) => `${n}× "${message}"`).join(', ')}`);
  return lines.join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

/** `--mailboxes N`, `--workers N` and `--minutes N` (the time limit) from the command line (npm run bench passes them through). */
export function simulatedDayArguments(): Pick<SimulatedDayOptions, 'mailboxes' | 'workers' | 'limitMs'> {
  const mailboxes = argument('--mailboxes');
  const workers = argument('--workers');
  const minutes = argument('--minutes');
  return {
    ...(mailboxes ? { mailboxes: Number(mailboxes) } : {}),
    ...(workers ? { workers: Number(workers) } : {}),
    ...(minutes ? { limitMs: Number(minutes) * 60_000 } : {}),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(`\n${simulatedDayReport(await runSimulatedDay(simulatedDayArguments()))}`);
}
