// A cycle's sync, reputation and health steps over N idle mailboxes (active, proven, nothing on
// its way to them), at two sizes: with work claimed by due time, their cost must not grow with N.
//
// Each size gets a fresh database (SQLite; PostgreSQL too with TEST_DATABASE_URL) and N mailboxes.
// The first pass finds every new mailbox due (read once, scored, judged: what every mailbox cost
// every few minutes before syncs were claimed); the measured cycles come after it, a scheduler
// interval apart, and count the statements they run and the rows those return or change.
//
//   npm run bench -- --only claims [-- --quick]
//   (standalone: node --import tsx bench/claims.bench.ts)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Insertable } from 'kysely';
import { createPostgresSchema } from '../test/helpers/postgres-schema.js';
import { pino } from 'pino';
import { fixedClock } from '../src/clock.js';
import { migrateToLatest, openDatabase, type DatabaseHandle, type Dialect } from '../src/db/database.js';
import { newId } from '../src/db/ids.js';
import type { MailboxesTable } from '../src/db/schema.js';
import { createEngineDeps, type EngineDeps } from '../src/engine/engine-deps.js';
import { DEFAULT_CYCLE_INTERVAL_MS } from '../src/jobs/job-list.js';
import { applyHealthGuard } from '../src/engine/health.js';
import { seededRandom } from '../src/engine/random.js';
import { syncMailboxes } from '../src/engine/reader.js';
import { updateReputation } from '../src/engine/reputation.js';
import { machine } from '../test/scale/cluster.js';
import { StatementCounter } from '../test/helpers/statement-counter.js';

export interface ClaimsBenchOptions {
  quick?: boolean;
  /** PostgreSQL as well (default: TEST_DATABASE_URL). */
  databaseUrl?: string;
  log?: (line: string) => void;
}

export interface ClaimsRun {
  dialect: Dialect;
  mailboxes: number;
  /** The first pass: every mailbox due once (ms). */
  firstPassMs: number;
  firstPassStatements: number;
  /** The idle cycles: median and worst of the three steps together (ms). */
  medianMs: number;
  maxMs: number;
  /** Statements and rows per idle cycle (the same in every cycle). */
  statements: number;
  rows: number;
}

export interface ClaimsBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  cycles: number;
  runs: ClaimsRun[];
}

const T0 = new Date('2026-03-04T10:00:00.000Z');

export async function runClaimsBench(options: ClaimsBenchOptions = {}): Promise<ClaimsBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const sizes = options.quick ? [500, 5_000] : [1_000, 10_000];
  const cycles = options.quick ? 10 : 30;
  const baseUrl = options.databaseUrl ?? process.env.TEST_DATABASE_URL;
  const dialects: Dialect[] = baseUrl ? ['sqlite', 'postgres'] : ['sqlite'];
  if (!baseUrl) log('claims bench: PostgreSQL skipped (set TEST_DATABASE_URL=postgres://… to include it)');
  const runs: ClaimsRun[] = [];
  for (const dialect of dialects) {
    for (const mailboxes of sizes) {
      const run = await measure(dialect, mailboxes, cycles, baseUrl);
      runs.push(run);
      log(
        `${dialect} ${mailboxes} idle mailboxes: first pass ${run.firstPassMs.toFixed(0)} ms (${run.firstPassStatements} statements); ` +
          `idle cycle median ${run.medianMs.toFixed(2)} ms, max ${run.maxMs.toFixed(2)} ms, ${run.statements} statements, ${run.rows} rows`,
      );
    }
  }
  return { machine: machine(), node: process.version, cycles, runs };
}

async function measure(dialect: Dialect, mailboxes: number, cycles: number, baseUrl?: string): Promise<ClaimsRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-claims-'));
  const database = await openBenchDatabase(dialect, dir, baseUrl);
  try {
    await seedIdleMailboxes(database.handle, mailboxes);
    const deps = (db: DatabaseHandle['db']): EngineDeps =>
      createEngineDeps({
        db,
        dialect,
        clock: fixedClock(T0.toISOString()),
        logger: pino({ level: 'silent' }),
        random: seededRandom(1),
        workerId: 'bench',
        mailboxes: {
          getCredentials: () => Promise.reject(new Error('an idle mailbox opens no connection')),
        },
        templates: { pickTemplate: async () => undefined },
      });
    const steps = async (engine: EngineDeps, now: Date) => {
      await syncMailboxes(engine, { now, ignoreSchedule: false });
      await updateReputation(engine, now);
      await applyHealthGuard(engine, now);
    };

    const first = new StatementCounter();
    let started = performance.now();
    await steps(deps(database.handle.db.withPlugin(first)), T0);
    const firstPassMs = performance.now() - started;

    const times: number[] = [];
    let statements = 0;
    let rows = 0;
    for (let i = 1; i <= cycles; i += 1) {
      const counting = new StatementCounter();
      const now = new Date(T0.getTime() + i * DEFAULT_CYCLE_INTERVAL_MS);
      started = performance.now();
      await steps(deps(database.handle.db.withPlugin(counting)), now);
      times.push(performance.now() - started);
      statements = Math.max(statements, counting.statements);
      rows = Math.max(rows, counting.rows);
    }
    times.sort((a, b) => a - b);
    return {
      dialect,
      mailboxes,
      firstPassMs,
      firstPassStatements: first.statements,
      medianMs: times[Math.floor(times.length / 2)],
      maxMs: times[times.length - 1],
      statements,
      rows,
    };
  } finally {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function openBenchDatabase(
  dialect: Dialect,
  dir: string,
  baseUrl: string | undefined,
): Promise<{ handle: DatabaseHandle; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const handle = openDatabase({ dataDir: dir, sqliteFile: path.join(dir, 'claims.db') });
    await migrateToLatest(handle.db, handle.dialect);
    return { handle, drop: () => handle.close() };
  }
  if (!baseUrl) throw new Error('PostgreSQL needs TEST_DATABASE_URL');
  const schema = await createPostgresSchema(baseUrl, 'bench_claims');
  const handle = openDatabase({ databaseUrl: schema.url, dataDir: dir });
  await migrateToLatest(handle.db, handle.dialect);
  return {
    handle,
    drop: async () => {
      await handle.close();
      await schema.drop();
    },
  };
}

/** `count` active, proven mailboxes of one workspace with no mail at all. */
async function seedIdleMailboxes(database: DatabaseHandle, count: number): Promise<void> {
  const now = T0.toISOString();
  const workspaceId = newId('ws');
  await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'bench', created_at: now }).execute();
  for (let start = 0; start < count; start += 1_000) {
    const rows: Insertable<MailboxesTable>[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) {
      const email = `m${i}@d${Math.floor(i / 20)}.bench.test`;
      rows.push({
        id: newId('mb'),
        workspace_id: workspaceId,
        email,
        email_normalized: email,
        name: null,
        provider: 'custom',
        connection_type: 'imap',
        status: 'active',
        imap: JSON.stringify({ host: 'imap.bench.test', port: 993, secure: true, username: '' }),
        smtp: JSON.stringify({ host: 'smtp.bench.test', port: 465, secure: true, username: '' }),
        password_encrypted: 'not-a-real-ciphertext',
        warmup: JSON.stringify({ timezone: 'UTC' }),
        proven_at: now,
        created_at: now,
        updated_at: now,
      });
    }
    await database.db.insertInto('mailboxes').values(rows).execute();
  }
}

export function claimsReport(result: ClaimsBenchResult): string {
  const { machine: m } = result;
  const lines = [
    `${m.cpus} CPUs (${m.model}), ${m.memoryGb} GB RAM, Node ${result.node}; ${result.cycles} idle cycles per size, ` +
      `each the sync, reputation and health steps, ${DEFAULT_CYCLE_INTERVAL_MS / 1000} s of business time apart`,
    '',
    '| database | idle mailboxes | first pass (all due) | its statements | idle cycle median | max | statements a cycle | rows a cycle |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const run of result.runs) {
    lines.push(
      `| ${run.dialect} | ${run.mailboxes.toLocaleString('en-US')} | ${run.firstPassMs.toFixed(0)} ms | ${run.firstPassStatements.toLocaleString('en-US')} | ` +
        `${run.medianMs.toFixed(2)} ms | ${run.maxMs.toFixed(2)} ms | ${run.statements} | ${run.rows} |`,
    );
  }
  lines.push('');
  for (const dialect of new Set(result.runs.map((r) => r.dialect))) {
    const [small, large] = result.runs.filter((r) => r.dialect === dialect);
    if (!small || !large) continue;
    lines.push(
      `${dialect}: ×${(large.mailboxes / small.mailboxes).toFixed(0)} mailboxes → idle cycle ×${(large.medianMs / small.medianMs).toFixed(2)} ` +
        `(statements ${small.statements} → ${large.statements}, rows ${small.rows} → ${large.rows}); ` +
        `first pass ×${(large.firstPassMs / small.firstPassMs).toFixed(2)}`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(claimsReport(await runClaimsBench({ quick: process.argv.includes('--quick') })));
}
