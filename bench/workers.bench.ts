// Engine workers at scale: the same load processed by 1, 2 and 3 `warmup worker` processes
// against PostgreSQL and a real mail stack (Postfix + Dovecot on loopback, started here).
//
// The load: every bench mailbox gets the same number of planned messages to the others, all
// due now, written straight into the database (the planner's partner rules would cap a day far
// below a benchmark's volume; what is measured is the claim → SMTP → IMAP sync → engage path).
// Replies are off (replyRate 0) so every run does exactly the same work. A message counts as
// processed once it was sent, found by its recipient and acted on (read, maybe flagged, filed).
// Each run gets a fresh PostgreSQL schema and a fresh mail stack.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- --only workers
//   (standalone: node --import tsx bench/workers.bench.ts [--messages 60] [--workers 1,2,3] [--latency 100] [--wide]
//    [--cpu-prof-dir <dir>]: a V8 CPU profile of each worker, written as it stops)
//
// With `--latency <ms>` every IMAP and SMTP connection of the workers goes through a proxy that
// adds that round-trip time (half each way, per chunk), the way a real provider keeps a worker
// waiting; without it the mail servers answer on loopback at once and share the CPUs with the workers.
import { randomBytes } from 'node:crypto';
import { loadMailPolicy } from '../src/mail/policy.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Insertable } from 'kysely';
import { createPostgresSchema } from '../test/helpers/postgres-schema.js';
import { systemClock } from '../src/clock.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { newId } from '../src/db/ids.js';
import type { WarmupMessagesTable } from '../src/db/schema.js';
import { messageIdFor } from '../src/engine/message-content.js';
import { createServices } from '../src/services.js';
import {
  mailStackAvailable,
  mailStackPortsFree,
  startMailStack,
  stopMailStack,
  type MailStack,
} from '../test/mailstack/mail-stack.js';
import { MAIL_USERS, type MailUser } from '../test/mailstack/users.js';
import {
  API_KEY,
  SECRET_KEY,
  dovecotLog,
  imapSessions,
  logLines,
  machine,
  sleep,
  startWorker,
  stopProcess,
  waitFor,
  workerTotals,
  workState,
  type WorkerProcess,
} from '../test/scale/cluster.js';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.js';

export interface WorkersBenchOptions {
  /** 20 messages per mailbox instead of 60. */
  quick?: boolean;
  /** Planned messages per mailbox (default 60: 480 on the 8 bench mailboxes). */
  messagesPerMailbox?: number;
  /** Worker counts to run (default 1, 2, 3). */
  workerCounts?: number[];
  databaseUrl?: string;
  /** Round-trip time added to every IMAP and SMTP exchange (default 0: loopback as it is). */
  latencyMs?: number;
  /** The mailboxes (default MAIL_USERS.bench: 8 on 4 domains). */
  users?: readonly MailUser[];
  /** A folder for each worker's V8 CPU profile (`--cpu-prof`), written as it stops. */
  cpuProfileDir?: string;
  log?: (line: string) => void;
}

export interface WorkersRun {
  workers: number;
  messages: number;
  /** From the load's commit to the last message sent. */
  sentMs: number;
  /** From the load's commit to the last message read and filed by its recipient. */
  doneMs: number;
  messagesPerSecond: number;
  /** This run's speed over the 1-worker run's. */
  speedup: number;
  /** Messages sent by each worker, from their own cycle logs. */
  sentByWorker: number[];
  /** Share of the machine's CPU time that was busy during the run (everything: workers, mail servers, PostgreSQL). */
  cpuBusy: number;
  /** CPU seconds the worker processes used in all (Linux /proc; null elsewhere), start-up included. */
  workerCpuSeconds: number | null;
  /** CPU seconds the worker processes had used when the load went in: start-up and idle cycles. */
  workerStartCpuSeconds: number | null;
  /** Warnings and errors the workers logged, by message (with the first error's text). */
  problems: Record<string, number>;
  /** IMAP sessions the workers opened to the mailboxes from the load's commit on (Dovecot's log). */
  imapSessions: number;
}

export interface WorkersBenchResult {
  machine: ReturnType<typeof machine>;
  mailboxes: number;
  latencyMs: number;
  runs: WorkersRun[];
}

const WORKER_OPTIONS = { intervalMs: 200, leaseMs: 60_000, ignoreSchedule: true, logLevel: 'debug' } as const;

/**
 * The PostgreSQL URL a benchmark of worker processes runs on, or null (with a line saying why) when
 * there is none or this machine cannot start the mail stack.
 */
export function workerBenchDatabase(
  bench: string,
  databaseUrl: string | undefined,
  log: (line: string) => void,
): string | null {
  const url = databaseUrl ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!url) {
    log(`${bench} skipped: set TEST_DATABASE_URL=postgres://… (several workers need PostgreSQL)`);
    return null;
  }
  const available = mailStackAvailable();
  if (!available.ok) {
    log(`${bench} skipped: no mail stack (${available.missing.join(', ') || available.problem})`);
    return null;
  }
  return url;
}

export async function runWorkersBench(options: WorkersBenchOptions = {}): Promise<WorkersBenchResult | null> {
  const log = options.log ?? ((line: string) => console.log(line));
  const databaseUrl = workerBenchDatabase('workers bench', options.databaseUrl, log);
  if (databaseUrl === null) return null;
  const perMailbox = options.messagesPerMailbox ?? (options.quick ? 20 : 60);
  const latencyMs = options.latencyMs ?? 0;
  const users = options.users ?? MAIL_USERS.bench;
  const runs: WorkersRun[] = [];
  for (const count of options.workerCounts ?? [1, 2, 3]) {
    const run = await oneRun(databaseUrl, users, count, perMailbox, latencyMs, log, options.cpuProfileDir);
    run.speedup = runs.length > 0 ? Number((run.messagesPerSecond / runs[0].messagesPerSecond).toFixed(2)) : 1;
    runs.push(run);
    log(
      `workers=${run.workers} messages=${run.messages} sent in ${(run.sentMs / 1000).toFixed(1)} s, processed in ${(run.doneMs / 1000).toFixed(1)} s ` +
        `→ ${run.messagesPerSecond.toFixed(1)} msg/s (×${run.speedup} vs 1 worker); sent per worker ${run.sentByWorker.join('/')}; ${run.imapSessions} IMAP sessions; CPU ${Math.round(run.cpuBusy * 100)} % busy` +
        `; workers' CPU ${workCpuText(run)}; load average ${os.loadavg()[0].toFixed(1)}` +
        (Object.keys(run.problems).length > 0 ? `; worker warnings/errors: ${JSON.stringify(run.problems)}` : ''),
    );
  }
  return { machine: machine(), mailboxes: users.length, latencyMs, runs };
}

async function oneRun(
  databaseUrl: string,
  users: readonly MailUser[],
  workerCount: number,
  perMailbox: number,
  latencyMs: number,
  log: (line: string) => void,
  cpuProfileDir?: string,
): Promise<WorkersRun> {
  const stack = await startBenchStack(users);
  const proxies: LatencyProxy[] = [];
  const servers = { imapPort: stack.imapPort, submissionPort: stack.submissionPort };
  if (latencyMs > 0) {
    for (const side of ['imapPort', 'submissionPort'] as const) {
      const proxy = await startLatencyProxy({ host: stack.host, port: stack[side] }, latencyMs / 2);
      proxies.push(proxy);
      servers[side] = proxy.port;
    }
  }
  const schema = await createPostgresSchema(databaseUrl, 'bench');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-'));
  const database = openDatabase({ databaseUrl: schema.url, dataDir, poolSize: 4 });
  const workers: WorkerProcess[] = [];
  try {
    await migrateToLatest(database.db, database.dialect);
    await createBenchMailboxes(database, stack, users, servers, dataDir);
    const env = {
      DATABASE_URL: schema.url,
      WARMUP_DATA_DIR: dataDir,
      WARMUP_SECRET_KEY: SECRET_KEY,
      // the stack is on loopback with its own CA, as an operator's private server would be
      WARMUP_MAIL_ALLOWED_HOSTS: stack.host,
      WARMUP_MAIL_CA_FILE: stack.caCert,
    };
    const options = cpuProfileDir
      ? { ...WORKER_OPTIONS, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProfileDir)}`] }
      : WORKER_OPTIONS;
    for (let i = 1; i <= workerCount; i++) workers.push(await startWorker(`w${i}`, env, options));
    // Let every worker reach its loop (they start at a random offset), then put the whole load in at once.
    await sleep(1_000);
    const workerStartCpuSeconds = processCpuSeconds(workers.map((w) => w.pid));
    const logFrom = dovecotLog(stack).length - 1;
    const messages = await insertLoad(database, perMailbox);
    const start = Date.now();
    const cpuBefore = cpuTimes();
    let sentAt: number | undefined;
    await waitFor(
      async () => {
        const state = await workState(database.db);
        if (sentAt === undefined && state.byStatus.sent === messages) sentAt = Date.now();
        return state.byStatus.sent === messages && state.found === messages && state.engaged === messages
          ? true
          : undefined;
      },
      15 * 60_000,
      async () => JSON.stringify(await workState(database.db)),
      100,
    );
    const doneMs = Date.now() - start;
    const cpuAfter = cpuTimes();
    const workerCpuSeconds = processCpuSeconds(workers.map((w) => w.pid));
    // a worker's last cycle lines reach its output as it stops
    await Promise.all(workers.map((w) => stopProcess(w.process, 'SIGTERM')));
    const totals = workerTotals(workers);
    return {
      workers: workerCount,
      messages,
      sentMs: (sentAt ?? Date.now()) - start,
      doneMs,
      messagesPerSecond: messages / (doneMs / 1000),
      speedup: 1,
      sentByWorker: totals.map((t) => t.sent),
      cpuBusy: (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total),
      workerCpuSeconds,
      workerStartCpuSeconds,
      problems: problemsOf(workers),
      imapSessions: imapSessions(stack, users, logFrom).length,
    };
  } catch (error) {
    log(
      `workers=${workerCount} failed; last worker output:\n${workers.map((w) => w.process.output().slice(-3000)).join('\n---\n')}`,
    );
    throw error;
  } finally {
    await Promise.all(workers.map((w) => stopProcess(w.process, 'SIGTERM')));
    await database.close();
    await schema.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await stopMailStack(stack);
  }
}

/** Busy and total CPU time of the whole machine so far (ms, every core). */
export function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const { user, nice, sys, irq, idle } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + irq + idle;
  }
  return { busy, total };
}

/** utime + stime of the processes from /proc/<pid>/stat (in USER_HZ ticks, 100 per second), or null without /proc. */
export function processCpuSeconds(pids: readonly number[]): number | null {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // the command name (field 2) may hold spaces: count fields after its closing parenthesis
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks / 100;
}

/** Warnings and errors the workers logged, by message (with the first error's text). */
export function problemsOf(workers: readonly WorkerProcess[]): Record<string, number> {
  const problems: Record<string, number> = {};
  for (const worker of workers) {
    for (const line of logLines(worker.process.output())) {
      if (Number(line.level) < 40) continue;
      const err = line.err as { message?: string } | undefined;
      const key = `${String(line.msg)}${err?.message ? `: ${err.message.slice(0, 120)}` : ''}`;
      problems[key] = (problems[key] ?? 0) + 1;
    }
  }
  return problems;
}

/** A fresh mail stack with these users on the first free port range from a per-process offset. */
export async function startBenchStack(users: readonly MailUser[], name = 'bench-workers'): Promise<MailStack> {
  let offset = (process.pid * 7_919) % 29_000;
  for (let attempt = 0; attempt < 20; attempt++) {
    const basePort = 20_000 + offset;
    if (await mailStackPortsFree(basePort)) {
      return startMailStack({ name: `${name}-${process.pid}`, basePort, users: [...users] });
    }
    offset = (offset + 1_009) % 29_000;
  }
  throw new Error('no free port range for the mail stack');
}

/** The bench mailboxes through the mailboxes service (each logs in once), planned for today already. */
function benchMailSettings(stack: MailStack) {
  return { allowedHosts: [stack.host], plaintextHosts: [], caFile: stack.caCert };
}

/** The services over the bench database and its one workspace, made as the API makes it (default templates included). */
export async function benchWorkspace(
  database: DatabaseHandle,
  stack: MailStack,
  dataDir: string,
): Promise<{ services: ReturnType<typeof createServices>; workspaceId: string }> {
  const services = createServices({
    db: database.db,
    clock: systemClock,
    dataDir,
    secretKey: SECRET_KEY,
    mailPolicy: loadMailPolicy(benchMailSettings(stack)),
  });
  await services.workspaces.bootstrap(API_KEY);
  const workspace = await database.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
  return { services, workspaceId: workspace.id };
}

async function createBenchMailboxes(
  database: DatabaseHandle,
  stack: MailStack,
  users: readonly MailUser[],
  servers: { imapPort: number; submissionPort: number },
  dataDir: string,
): Promise<void> {
  const { services, workspaceId } = await benchWorkspace(database, stack, dataDir);
  for (const user of users) {
    await services.mailboxes.create(workspaceId, {
      email: user.email,
      password: user.password,
      provider: 'custom',
      connectionType: 'imap',
      imap: { host: stack.host, port: servers.imapPort, secure: false },
      smtp: { host: stack.host, port: servers.submissionPort, secure: false },
      warmup: { replyRate: 0, timezone: 'UTC', weekdaysOnly: false, dailyLimit: 500 },
    });
  }
  // The planner has nothing to add today: the load below is the day.
  const today = new Date().toISOString().slice(0, 10);
  await database.db.updateTable('mailboxes').set({ last_plan_day: today }).execute();
}

/** `perMailbox` planned messages from each mailbox, round robin over the others, all due now. */
async function insertLoad(database: DatabaseHandle, perMailbox: number): Promise<number> {
  const mailboxes = await database.db.selectFrom('mailboxes').select(['id', 'email']).orderBy('email').execute();
  const now = new Date();
  const day = now.toISOString().slice(0, 10);
  const rows: Insertable<WarmupMessagesTable>[] = [];
  for (const [i, sender] of mailboxes.entries()) {
    for (let n = 0; n < perMailbox; n++) {
      const recipient = mailboxes[(i + 1 + (n % (mailboxes.length - 1))) % mailboxes.length];
      const messageId = messageIdFor(
        sender.email,
        `${now.getTime().toString(36)}.${randomBytes(9).toString('base64url')}`,
      );
      rows.push({
        id: newId('wm'),
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: sender.id,
        recipient_mailbox_id: recipient.id,
        kind: 'initial',
        turn: 1,
        plan_day: day,
        due_at: now.toISOString(),
        status: 'planned',
        created_at: now.toISOString(),
      });
    }
  }
  await database.db.transaction().execute(async (trx) => {
    // the day's plan is the load: a sender never sends beyond its day's budget
    await trx
      .insertInto('mailbox_plans')
      .values(
        mailboxes.map((m) => ({
          mailbox_id: m.id,
          day,
          warmup_day: 1,
          target: perMailbox,
          planned: perMailbox,
          created_at: now.toISOString(),
        })),
      )
      .execute();
    for (let start = 0; start < rows.length; start += 200)
      await trx
        .insertInto('warmup_messages')
        .values(rows.slice(start, start + 200))
        .execute();
  });
  return rows.length;
}

/** The workers' CPU: start-up (until the load went in), the load's, and the load's per message. */
function workCpuText(run: WorkersRun): string {
  if (run.workerCpuSeconds === null || run.workerStartCpuSeconds === null) return 'n/a';
  const work = run.workerCpuSeconds - run.workerStartCpuSeconds;
  return `${run.workerStartCpuSeconds.toFixed(1)} s start + ${work.toFixed(1)} s load (${((work * 1000) / run.messages).toFixed(0)} ms/msg)`;
}

/** The BENCHMARKS.md report of a result: the machine, the table, and what the workers complained about. */
export function workersReport(result: WorkersBenchResult | null): string {
  if (!result) return 'skipped (needs TEST_DATABASE_URL and the mail stack packages)';
  const { cpus, model, memoryGb } = result.machine;
  const lines = [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM; ${result.mailboxes} mailboxes; ` +
      (result.latencyMs > 0
        ? `${result.latencyMs} ms round trip added to every IMAP and SMTP exchange`
        : 'mail servers on loopback, no added latency'),
    '',
    "| workers | messages | all sent | all processed | messages/s | vs 1 worker | sent per worker | IMAP sessions | machine CPU busy | workers' CPU (start + load, per message) |",
    '|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    ...result.runs.map(
      (r) =>
        `| ${r.workers} | ${r.messages} | ${(r.sentMs / 1000).toFixed(1)} s | ${(r.doneMs / 1000).toFixed(1)} s | ${r.messagesPerSecond.toFixed(1)} | ×${r.speedup.toFixed(2)} | ${r.sentByWorker.join(' / ')} | ${r.imapSessions} | ${Math.round(r.cpuBusy * 100)} % | ${workCpuText(r)} |`,
    ),
  ];
  for (const run of result.runs) {
    const problems = Object.entries(run.problems).filter(([message]) => message !== 'engine cycle');
    if (problems.length > 0)
      lines.push(
        '',
        `${run.workers} worker(s) logged: ${problems.map(([message, n]) => `${n}× "${message}"`).join(', ')}`,
      );
  }
  return lines.join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const perMailbox = argument('--messages');
  const counts = argument('--workers');
  const latency = argument('--latency');
  const cpuProfileDir = argument('--cpu-prof-dir');
  const result = await runWorkersBench({
    users: process.argv.includes('--wide') ? MAIL_USERS.benchWide : undefined,
    messagesPerMailbox: perMailbox ? Number(perMailbox) : undefined,
    latencyMs: latency ? Number(latency) : undefined,
    workerCounts: counts ? counts.split(',').map(Number) : undefined,
    cpuProfileDir,
  });
  console.log(`\n${workersReport(result)}`);
}
