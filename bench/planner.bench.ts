// Planning one day for 100,000 active mailboxes on SQLite: one `planDay`, timed, with the peak
// resident memory of the process that runs it (rss sampled every 50 ms, and the kernel's maxRSS).
//
// The mailboxes are seeded by one child process, and the planning runs in another, as a worker
// plans: so its memory is the planner's, not what 100,000 inserted rows left in the seeding
// process. The planning has a process of its own also so that a run far over the target can be cut off at a time
// budget: the parent then reports how far it got (plans committed, read from the SQLite file).
// The parent also samples the child's memory (/proc/<pid>/status VmRSS every 50 ms, and VmHWM,
// the kernel's maxRSS): better-sqlite3 answers synchronously, so a planDay on SQLite never yields
// to the event loop and a timer inside the planning process would not fire until it is over.
// Smaller sizes run first, to show how the time grows.
//
//   npm run bench -- --only planner [-- --quick]
//   (standalone: node --import tsx bench/planner.bench.ts [--mailboxes 100000] [--budget 120] [--tsx] [--v8-defaults])
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import type { Insertable } from 'kysely';
import { pino } from 'pino';
import { fixedClock } from '../src/clock.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { newId } from '../src/db/ids.js';
import type { MailboxesTable } from '../src/db/schema.js';
import { createEngineDeps } from '../src/engine/engine-deps.js';
import { limitHeapGrowth } from '../src/engine/heap-growth.js';
import { planDay } from '../src/engine/planner.js';
import { seededRandom } from '../src/engine/random.js';
import { machine } from '../test/scale/cluster.js';
import { buildBundle, SERVER_NODE_FLAGS } from '../src/server-build.mjs';

export interface PlannerBenchOptions {
  /** 10,000 mailboxes for the main run instead of 100,000. */
  quick?: boolean;
  /** Mailboxes of the main run (default 100,000). */
  mailboxes?: number;
  /** Smaller runs first, to show the growth (default 1,000, 2,000, 4,000, 8,000). */
  steps?: number[];
  /** Seconds a run may plan before it is cut off (default 120). */
  budgetSeconds?: number;
  log?: (line: string) => void;
}

export interface PlannerRun {
  mailboxes: number;
  seedMs: number;
  /** Whole planDay when it finished; the time until the cut-off otherwise. */
  planMs: number;
  finished: boolean;
  /** Mailboxes with a plan for the day when planDay returned or was cut off. */
  planned: number;
  messages: number;
  /** Highest rss of the planning process sampled during planDay (MB). */
  peakRssMb: number;
  /** Its maxRSS (MB): VmHWM, or process.resourceUsage().maxRSS when it finished. */
  maxRssMb: number;
  /** The same rows (plans and planned messages) bulk inserted into a fresh database; 0 when not run. */
  baselineMs: number;
  /** CPU time (user + system) of planDay and of the baseline's inserts: the fair measure on a shared machine. */
  planCpuMs: number;
  baselineCpuMs: number;
}

export interface PlannerBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  budgetSeconds: number;
  runs: PlannerRun[];
}

/** planDay may take at most this many times the bare bulk insert of the rows it writes. */
const TARGET_RATIO = 2;
const TARGET_MB = 300;
/** A Wednesday, before every mailbox's send window (08:00–18:00 UTC): a normal morning plan. */
const PLAN_AT = new Date('2026-03-04T06:00:00.000Z');
const WORKSPACES = 4;
/** Mailboxes per domain: 100,000 mailboxes on 5,000 domains. */
const PER_DOMAIN = 20;

export async function runPlannerBench(options: PlannerBenchOptions = {}): Promise<PlannerBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const main = options.mailboxes ?? (options.quick ? 10_000 : 100_000);
  const steps = (options.steps ?? (options.quick ? [1_000, 2_000] : [1_000, 2_000, 4_000, 8_000])).filter(
    (n) => n > 0 && n < main,
  );
  const budgetSeconds = options.budgetSeconds ?? 120;
  const runs: PlannerRun[] = [];
  for (const mailboxes of [...steps, main]) {
    const run = await runChild(mailboxes, budgetSeconds);
    runs.push(run);
    log(
      `mailboxes=${run.mailboxes} seeded in ${(run.seedMs / 1000).toFixed(1)} s; planDay ${run.finished ? 'took' : 'cut off after'} ${(run.planMs / 1000).toFixed(1)} s, ` +
        `${run.planned} mailboxes planned (${run.messages} messages); peak rss ${run.peakRssMb} MB, maxRSS ${run.maxRssMb} MB; ` +
        `bare bulk insert of the same rows ${(run.baselineMs / 1000).toFixed(1)} s; CPU planDay ${run.planCpuMs} ms, bulk insert ${run.baselineCpuMs} ms`,
    );
  }
  return { machine: machine(), node: process.version, budgetSeconds, runs };
}

interface ChildLine {
  phase: 'seeded' | 'ready' | 'done' | 'baseline';
  seedMs?: number;
  baselineMs?: number;
  baselineCpuMs?: number;
  planCpuMs?: number;
  planMs?: number;
  planned?: number;
  messages?: number;
  peakRssMb?: number;
  maxRssMb?: number;
}

let childScript: Promise<string> | undefined;
/**
 * This file built into one JavaScript file as the server is (src/server-build.mjs), for the children
 * to run: so the planning process's memory is a worker's, not a TypeScript loader's (at 20,000
 * mailboxes 273 MB through tsx, 232–239 MB built).
 */
function builtChildScript(): Promise<string> {
  const file = fileURLToPath(new URL('../dist/bench/planner.mjs', import.meta.url));
  childScript ??= buildBundle(fileURLToPath(import.meta.url), file).then(() => file);
  return childScript;
}

/** Seeds `mailboxes` into a new database in `dataDir`, in a process of its own; returns the time it took. */
async function runSeed(dataDir: string, mailboxes: number): Promise<number> {
  const seeder = spawn(process.execPath, [await builtChildScript(), '--seed', dataDir, String(mailboxes)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  seeder.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    seeder.on('exit', (code, signal) => {
      const seeded = output
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as ChildLine)
        .find((line) => line.phase === 'seeded');
      if (code === 0 && seeded) resolve(seeded.seedMs ?? 0);
      else reject(new Error(`planner seeding exited with ${code ?? signal}`));
    });
  });
}

async function runChild(mailboxes: number, budgetSeconds: number): Promise<PlannerRun> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-planner-'));
  const seedMs = await runSeed(dataDir, mailboxes);
  // --tsx: the planning process loads the sources through tsx, as every process did before the build
  const script = process.argv.includes('--tsx')
    ? ['--import', 'tsx', fileURLToPath(import.meta.url)]
    : [await builtChildScript()];
  // started as every warmup process is (src/server-build.mjs); --v8-defaults: with V8's own young generation
  const flags = process.argv.includes('--v8-defaults') ? [] : SERVER_NODE_FLAGS;
  const child = spawn(process.execPath, [...flags, ...script, '--child', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const run: PlannerRun = {
    mailboxes,
    seedMs,
    planMs: 0,
    finished: false,
    planned: 0,
    messages: 0,
    peakRssMb: 0,
    maxRssMb: 0,
    baselineMs: 0,
    planCpuMs: 0,
    baselineCpuMs: 0,
  };
  let planStarted: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const sample = () => {
    const memory = processMemory(child.pid);
    if (!memory) return;
    run.peakRssMb = Math.max(run.peakRssMb, memory.rssMb);
    run.maxRssMb = Math.max(run.maxRssMb, memory.hwmMb);
  };
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as ChildLine;
      if (line.phase === 'ready') {
        planStarted = performance.now();
        sampler = setInterval(sample, 50);
        timer = setTimeout(() => {
          // Cut off: count what the child committed before stopping it.
          run.planMs = performance.now() - (planStarted ?? 0);
          sample();
          const progress = readProgress(dataDir);
          run.planned = progress.plans;
          run.messages = progress.messages;
          child.kill('SIGKILL');
        }, budgetSeconds * 1000);
      }
      if (line.peakRssMb !== undefined) run.peakRssMb = Math.max(run.peakRssMb, line.peakRssMb);
      if (line.maxRssMb !== undefined) run.maxRssMb = Math.max(run.maxRssMb, line.maxRssMb);
      if (line.phase === 'baseline') {
        run.baselineMs = line.baselineMs ?? 0;
        run.baselineCpuMs = line.baselineCpuMs ?? 0;
      }
      if (line.phase === 'done') {
        if (timer) clearTimeout(timer);
        if (sampler) clearInterval(sampler);
        run.finished = true;
        run.planMs = line.planMs ?? 0;
        run.planCpuMs = line.planCpuMs ?? 0;
        run.planned = line.planned ?? 0;
        run.messages = line.messages ?? 0;
      }
    }
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (sampler) clearInterval(sampler);
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (run.finished || signal === 'SIGKILL') resolve(run);
      else reject(new Error(`planner child exited with ${code ?? signal}`));
    });
  });
}

/** VmRSS and VmHWM of a process from /proc (Linux), in MB; undefined once it is gone. */
function processMemory(pid: number | undefined): { rssMb: number; hwmMb: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMb: Math.round(kb('VmRSS') / 1024), hwmMb: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return undefined;
  }
}

function readProgress(dataDir: string): { plans: number; messages: number } {
  const sqlite = new SQLite(path.join(dataDir, 'warmup.db'), { readonly: true });
  try {
    const plans = sqlite.prepare('select count(*) as n from mailbox_plans').get() as { n: number };
    const messages = sqlite.prepare('select count(*) as n from warmup_messages').get() as { n: number };
    return { plans: plans.n, messages: messages.n };
  } finally {
    sqlite.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The children: one seeds, the other runs one planDay.

const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
const emit = (line: ChildLine) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function seedChild(dataDir: string, mailboxes: number): Promise<void> {
  const database = openDatabase({ dataDir });
  await migrateToLatest(database.db, database.dialect);
  const seedStarted = performance.now();
  await seedMailboxes(database, mailboxes);
  emit({ phase: 'seeded', seedMs: Math.round(performance.now() - seedStarted) });
  await database.close();
}

async function child(dataDir: string, batchSize: number | undefined): Promise<void> {
  // as in every process that runs the engine (createEngineFor)
  limitHeapGrowth();
  const database = openDatabase({ dataDir });

  // Fires only when planDay awaits real I/O (not on SQLite); the parent's /proc sampling is the measure there.
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const deps = createEngineDeps({
    db: database.db,
    dialect: database.dialect,
    clock: fixedClock(PLAN_AT),
    logger: pino({ level: 'silent' }),
    random: seededRandom(1),
    workerId: 'bench-planner',
    // the planner never touches credentials or templates
    mailboxes: {
      getCredentials: () => Promise.reject(new Error('not used by the planner')),
    },
    templates: { pickTemplate: () => Promise.resolve(undefined) },
    // one lease for the whole day, however long it takes
    settings: { leaseMs: 24 * 3_600_000 },
  });
  emit({ phase: 'ready' });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const summary = await planDay(deps, PLAN_AT, batchSize ? { batchSize } : {});
  const planMs = Math.round(performance.now() - started);
  const planCpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  emit({
    phase: 'done',
    planMs,
    planCpuMs: Math.round((planCpu.user + planCpu.system) / 1000),
    planned: summary.mailboxes.length,
    messages: summary.messages,
    peakRssMb: mb(peak),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  });
  await database.close();
  emit({ phase: 'baseline', ...bareBulkInsert(dataDir) });
}

/** Rows a transaction of the baseline holds: about what the planner writes per batch of mailboxes. */
const BASELINE_TRANSACTION_ROWS = 12_000;
/** Rows per INSERT statement of the baseline, as the planner's (1,000 × 12 columns). */
const BASELINE_STATEMENT_ROWS = 1_000;

/**
 * The baseline: the plan rows and planned messages the planner wrote, inserted into a fresh database
 * of the same schema with nothing but prepared multi-row INSERTs in transactions of
 * BASELINE_TRANSACTION_ROWS rows, straight through better-sqlite3. Only the inserts are timed (the
 * rows are read back from the planned database page by page, outside the clock).
 */
function bareBulkInsert(dataDir: string): { baselineMs: number; baselineCpuMs: number } {
  const source = new SQLite(path.join(dataDir, 'warmup.db'), { readonly: true });
  const targetDir = `${dataDir}-baseline`;
  fs.mkdirSync(targetDir);
  const target = new SQLite(path.join(targetDir, 'warmup.db'));
  try {
    target.pragma('journal_mode = WAL');
    target.pragma('synchronous = NORMAL');
    target.pragma('foreign_keys = ON');
    // the same schema: every table and index of the planned database, mailboxes copied untimed
    const schema = source
      .prepare("select sql from sqlite_master where sql is not null and name not like 'sqlite_%' order by type desc")
      .all() as Array<{ sql: string }>;
    for (const { sql } of schema) target.exec(sql);
    target.exec(`attach '${path.join(dataDir, 'warmup.db')}' as planned`);
    target.exec('insert into main.workspaces select * from planned.workspaces');
    target.exec('insert into main.mailboxes select * from planned.mailboxes');
    target.exec('detach planned');
    let elapsed = 0;
    let cpuMicros = 0;
    for (const table of ['mailbox_plans', 'warmup_messages']) {
      const page = source.prepare(
        `select rowid as row_number, * from ${table} where rowid > ? order by rowid limit ${BASELINE_TRANSACTION_ROWS}`,
      );
      // the columns the planner writes: those holding something other than their default (warmup_messages
      // has 33 columns, 33,000 values a 1,000-row INSERT, over SQLite's 32,766; the planner writes 12)
      const defaults = new Map(
        (
          source.prepare(`select name, dflt_value from pragma_table_info('${table}')`).all() as Array<{
            name: string;
            dflt_value: string | null;
          }>
        ).map((column) => [column.name, column.dflt_value]),
      );
      const written = (rows: Array<Record<string, unknown>>, column: string) =>
        rows.some((row) => row[column] !== null && String(row[column]) !== defaults.get(column));
      const statements = new Map<string, SQLite.Statement>();
      let after = 0;
      for (;;) {
        const rows = page.all(after) as Array<Record<string, unknown>>;
        if (rows.length === 0) break;
        after = Number(rows[rows.length - 1].row_number);
        const columns = Object.keys(rows[0]).filter((c) => c !== 'row_number' && written(rows, c));
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        target.transaction(() => {
          for (let r = 0; r < rows.length; r += BASELINE_STATEMENT_ROWS) {
            const chunk = rows.slice(r, r + BASELINE_STATEMENT_ROWS);
            const shape = `${columns.join(' ')} ${chunk.length}`;
            let insert = statements.get(shape);
            if (!insert) {
              const tuple = `(${columns.map(() => '?').join(', ')})`;
              insert = target.prepare(
                `insert into ${table} (${columns.join(', ')}) values ${Array.from({ length: chunk.length }, () => tuple).join(', ')}`,
              );
              statements.set(shape, insert);
            }
            insert.run(chunk.flatMap((row) => columns.map((c) => row[c])));
          }
        })();
        elapsed += performance.now() - started;
        const cpu = process.cpuUsage(cpuBefore);
        cpuMicros += cpu.user + cpu.system;
      }
    }
    return { baselineMs: Math.round(elapsed), baselineCpuMs: Math.round(cpuMicros / 1000) };
  } finally {
    source.close();
    target.close();
    fs.rmSync(targetDir, { recursive: true, force: true });
  }
}

/** `count` active mailboxes over a few workspaces and many domains, 1,000 rows per transaction. */
async function seedMailboxes(database: DatabaseHandle, count: number): Promise<void> {
  const now = PLAN_AT.toISOString();
  const workspaceIds: string[] = [];
  for (let w = 0; w < WORKSPACES; w++) {
    const id = newId('ws');
    workspaceIds.push(id);
    await database.db
      .insertInto('workspaces')
      .values({ id, name: `bench ${w + 1}`, created_at: now })
      .execute();
  }
  const server = (kind: string, domain: string) =>
    JSON.stringify({ host: `${kind}.${domain}`, port: kind === 'imap' ? 993 : 465, secure: true, username: '' });
  for (let start = 0; start < count; start += 1_000) {
    const rows: Insertable<MailboxesTable>[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) {
      const domain = `d${Math.floor(i / PER_DOMAIN)}.bench.test`;
      const email = `m${i}@${domain}`;
      rows.push({
        id: newId('mb'),
        workspace_id: workspaceIds[i % WORKSPACES],
        email,
        email_normalized: email,
        name: null,
        provider: 'custom',
        connection_type: 'imap',
        status: 'active',
        imap: server('imap', domain),
        smtp: server('smtp', domain),
        password_encrypted: 'not-a-real-ciphertext',
        warmup: JSON.stringify({ replyRate: 0, timezone: 'UTC', weekdaysOnly: false }),
        // a spread of ramp positions, so targets differ as on a real pool
        warmup_day: i % 30,
        // the pool is the proven mailboxes
        proven_at: now,
        created_at: now,
        updated_at: now,
      });
    }
    await database.db.transaction().execute(async (trx) => {
      // SQLite allows 32,766 bound variables per statement: 500 rows of 18 columns
      for (let r = 0; r < rows.length; r += 500)
        await trx
          .insertInto('mailboxes')
          .values(rows.slice(r, r + 500))
          .execute();
    });
  }
}

// ---------------------------------------------------------------------------------------------

/** The BENCHMARKS.md report: the machine, one row per size, and the targets of the largest run. */
export function plannerReport(result: PlannerBenchResult): string {
  const { cpus, model, memoryGb } = result.machine;
  const main = result.runs[result.runs.length - 1];
  const rate = (r: PlannerRun) => (r.planMs > 0 ? (r.planned / (r.planMs / 1000)).toFixed(0) : 'n/a');
  const ratio = (r: PlannerRun) =>
    r.finished && r.baselineMs > 0 ? `×${(r.planMs / r.baselineMs).toFixed(2)}` : 'n/a';
  const cpuRatio = (r: PlannerRun) =>
    r.finished && r.baselineCpuMs > 0
      ? `${(r.planCpuMs / 1000).toFixed(1)} s / ${(r.baselineCpuMs / 1000).toFixed(1)} s = ×${(r.planCpuMs / r.baselineCpuMs).toFixed(2)}`
      : 'n/a';
  const memoryMb = Math.max(main.peakRssMb, main.maxRssMb);
  const lines = [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, Node ${result.node}; SQLite; one \`planDay\` per size, cut off after ${result.budgetSeconds} s`,
    '',
    '| active mailboxes | seed | planDay | finished | mailboxes planned | messages | mailboxes/s | bare bulk insert of the same rows | planDay / bulk insert | CPU: planDay / bulk insert | peak rss | maxRSS |',
    '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...result.runs.map(
      (r) =>
        `| ${r.mailboxes.toLocaleString('en-US')} | ${(r.seedMs / 1000).toFixed(1)} s | ${(r.planMs / 1000).toFixed(1)} s | ${r.finished ? 'yes' : 'no (cut off)'} | ` +
        `${r.planned.toLocaleString('en-US')} | ${r.messages.toLocaleString('en-US')} | ${rate(r)} | ` +
        `${r.baselineMs > 0 ? `${(r.baselineMs / 1000).toFixed(1)} s` : 'n/a'} | ${ratio(r)} | ${cpuRatio(r)} | ${r.peakRssMb} MB | ${r.maxRssMb} MB |`,
    ),
    '',
    `Targets for ${main.mailboxes.toLocaleString('en-US')} mailboxes: planDay ≤ ${TARGET_RATIO}× a bare bulk insert of the same rows — ` +
      `${main.finished && main.baselineMs > 0 ? (main.planMs <= TARGET_RATIO * main.baselineMs ? 'met' : 'missed') : 'missed'}` +
      `${main.finished ? ` (${ratio(main)})` : ` (not finished after ${(main.planMs / 1000).toFixed(0)} s)`}; ` +
      `peak memory < ${TARGET_MB} MB — ${memoryMb < TARGET_MB ? 'met' : 'missed'} (${memoryMb} MB)${main.finished ? '' : ' (so far)'}.`,
  ];
  return lines.join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const childDir = argument('--child');
  const seedDir = argument('--seed');
  if (seedDir) {
    await seedChild(seedDir, Number(process.argv[process.argv.indexOf('--seed') + 2]));
  } else if (childDir) {
    await child(childDir, process.env.PLANNER_BENCH_BATCH ? Number(process.env.PLANNER_BENCH_BATCH) : undefined);
  } else {
    const mailboxes = argument('--mailboxes');
    const budget = argument('--budget');
    const steps = argument('--steps');
    const result = await runPlannerBench({
      quick: process.argv.includes('--quick'),
      mailboxes: mailboxes ? Number(mailboxes) : undefined,
      budgetSeconds: budget ? Number(budget) : undefined,
      steps: steps ? steps.split(',').map(Number) : undefined,
    });
    console.log(`\n${plannerReport(result)}`);
  }
}
