// Statistics at scale: 1,000 mailboxes × 90 days of warmup history (millions of interactions),
// on SQLite and on PostgreSQL.
//
// 1. The bulk-built rollups are checked against the engine's own path (recordInteraction and
//    recordReputation) on a small sample: the benchmark measures the rollups the engine writes.
// 2. In-process time of every stats query (the service, no HTTP, no cache): median and p99.
// 3. HTTP throughput and p99 under 50 connections (autocannon) on a real listening server, beside
//    a route returning a constant in the same app, with the stats cache off and on.
// 4. Growth: the same queries on 10× fewer messages (same mailboxes and days) and on 10× fewer
//    days: rollups make query time follow mailboxes × days, not messages.
//
//   npm run bench -- --only stats [--quick]            (TEST_DATABASE_URL adds PostgreSQL)
//   (standalone: node --import tsx bench/stats.bench.ts [--quick] [--dialect sqlite|postgres] [--v8-defaults]
//    [--mailboxes N] [--days N] [--no-growth] [--rollups-only])
//
// --rollups-only writes the rollups (`daily_stats`) without the raw interactions they count: the
// statistics never read the interactions, and 10,000 mailboxes × 90 days is some 26 million rows.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { createPostgresSchema } from '../test/helpers/postgres-schema.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createAuthenticationCache } from '../src/http/auth-cache.js';
import { foldFinishedDays } from '../src/interactions/workspace-rollup.js';
import { fixedClock } from '../src/clock.js';
import { migrateToLatest, openDatabase, type DatabaseHandle, type Dialect } from '../src/db/database.js';
import { recordInteraction, recordReputation } from '../src/interactions/interactions.repository.js';
import { requireAccess } from '../src/http/auth.js';
import { createServices, type Services } from '../src/services.js';
import { exportCsv } from '../src/stats/export-csv.js';
import { renderReportPdf } from '../src/stats/export-pdf.js';
import { SERVER_NODE_FLAGS } from '../src/server-build.mjs';
import {
  historyOfDay,
  insertMailboxes,
  planHistory,
  postgresWriter,
  seedHistory,
  sqliteWriter,
  type BulkWriter,
  type SeedCounts,
  type SeedPlan,
  type SeedSize,
} from './seed-history.js';
import { type Timing, type HttpRun, type DialectResult, type StatsBenchResult, statsReport } from './stats-report.js';
import { type Sizes, machine } from './stats-report.js';

const SECRET_KEY = 'b'.repeat(64);
const TODAY = '2026-03-15';
const NOW = `${TODAY}T12:00:00.000Z`;
const WORKSPACE_ID = 'ws_bench';

export interface StatsBenchOptions {
  quick?: boolean;
  dialects?: Dialect[];
  /** Overrides the main data set's size (e.g. 10,000 mailboxes); sends a day stay as they are. */
  mailboxes?: number;
  days?: number;
  /** False skips the two smaller data sets (10× fewer messages, 10× fewer days). */
  growth?: boolean;
  /** False seeds the rollups only, not the interactions they count. */
  rawInteractions?: boolean;
  databaseUrl?: string;
  log?: (line: string) => void;
}

const FULL: Sizes = {
  main: { mailboxes: 1000, days: 90, perDay: 8 },
  runs: 200,
  exportRuns: 20,
  pdfRuns: 5,
  httpSeconds: 10,
};
const QUICK: Sizes = {
  main: { mailboxes: 200, days: 30, perDay: 6 },
  runs: 50,
  exportRuns: 5,
  pdfRuns: 2,
  httpSeconds: 3,
};

// ---------------------------------------------------------------------------------------------
// Databases

interface BenchDatabase {
  handle: DatabaseHandle;
  /** What the server child needs to open the same database. */
  location: { dialect: Dialect; file?: string; url?: string };
  writer(): BulkWriter;
  drop(): Promise<void>;
}

async function createBenchDatabase(
  dialect: Dialect,
  name: string,
  baseUrl: string | undefined,
  dir: string,
): Promise<BenchDatabase> {
  if (dialect === 'sqlite') {
    const file = path.join(dir, `${name}.db`);
    const handle = openDatabase({ dataDir: dir, sqliteFile: file });
    await migrateToLatest(handle.db, handle.dialect);
    return {
      handle,
      location: { dialect, file },
      writer: () => sqliteWriter(file),
      drop: async () => {
        await handle.close();
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  if (!baseUrl) throw new Error('PostgreSQL needs TEST_DATABASE_URL');
  const schema = await createPostgresSchema(baseUrl, `bench_${name}`);
  const handle = openDatabase({ databaseUrl: schema.url, dataDir: dir });
  await migrateToLatest(handle.db, handle.dialect);
  return {
    handle,
    location: { dialect, url: schema.url },
    writer: () => postgresWriter(schema.url),
    drop: async () => {
      await handle.close();
      await schema.drop();
    },
  };
}

function servicesFor(handle: DatabaseHandle, dir: string, statsCacheMs = 0): Services {
  return createServices({
    db: handle.db,
    clock: fixedClock(NOW),
    dataDir: dir,
    secretKey: SECRET_KEY,
    statsCacheMs,
  });
}

async function seedDataset(
  database: BenchDatabase,
  size: SeedSize,
  dir: string,
  log: (line: string) => void,
  rawInteractions: boolean,
): Promise<{ seed: SeedCounts; apiKey: string }> {
  const services = servicesFor(database.handle, dir);
  const { apiKey } = await services.workspaces.createWorkspace('Bench', WORKSPACE_ID);
  const plan = planHistory(WORKSPACE_ID, size, TODAY);
  await insertMailboxes(database.handle.db, plan, NOW);
  const writer = database.writer();
  try {
    const seed = await seedHistory(writer, plan, log, { rawInteractions });
    // The engine folds every finished day into the workspace rollup as the days go by; here the
    // whole history is folded at once, before the timings (the last two days stay live).
    const foldStarted = performance.now();
    await foldFinishedDays(database.handle.db, new Date(NOW));
    log(`  workspace rollup folded in ${((performance.now() - foldStarted) / 1000).toFixed(1)} s`);
    // PostgreSQL's autovacuum would analyze a table this size soon after; do it now. SQLite is
    // left without ANALYZE, as a default installation runs.
    if (database.handle.dialect === 'postgres') await sql`analyze`.execute(database.handle.db);
    return { seed, apiKey };
  } finally {
    await writer.close();
  }
}

/**
 * Seeds a small plan twice, once through the engine's own functions and once through the bulk
 * path, and compares every rollup row and every mailbox's reputation.
 */
async function rollupsMatchEngine(dialect: Dialect, baseUrl: string | undefined, dir: string): Promise<string> {
  const plan = planHistory(WORKSPACE_ID, { mailboxes: 25, days: 4, perDay: 5 }, TODAY, 7);
  const viaEngine = await createBenchDatabase(dialect, 'engine', baseUrl, dir);
  const viaBulk = await createBenchDatabase(dialect, 'bulk', baseUrl, dir);
  try {
    let interactions = 0;
    for (const database of [viaEngine, viaBulk]) {
      await database.handle.db
        .insertInto('workspaces')
        .values({ id: WORKSPACE_ID, name: 'Bench', created_at: NOW })
        .execute();
      await insertMailboxes(database.handle.db, plan, NOW);
    }
    for (let d = 0; d < plan.days.length; d++) {
      const history = historyOfDay(plan, d);
      await viaEngine.handle.db.transaction().execute(async (trx) => {
        for (const input of history.interactions) if (await recordInteraction(trx, input)) interactions++;
        for (const r of history.reputations) await recordReputation(trx, r.mailboxId, plan.days[d]!, r.score);
      });
    }
    const writer = viaBulk.writer();
    await seedHistory(writer, plan);
    await writer.close();

    const dump = async (database: BenchDatabase) => {
      const rows = await database.handle.db.selectFrom('daily_stats').selectAll().execute();
      const mailboxes = await database.handle.db.selectFrom('mailboxes').select(['id', 'reputation']).execute();
      const key = (row: Record<string, unknown>) => `${String(row.mailbox_id)} ${String(row.day)}`;
      return JSON.stringify({
        rows: rows
          .map((r) =>
            Object.fromEntries(
              Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? v : v === null ? null : Number(v)]),
            ),
          )
          .sort((a, b) => (key(a) < key(b) ? -1 : 1)),
        mailboxes: mailboxes.map((m) => [m.id, Number(m.reputation)]).sort(),
      });
    };
    const [engine, bulk] = [await dump(viaEngine), await dump(viaBulk)];
    if (engine !== bulk) throw new Error('bulk rollups differ from what recordInteraction/recordReputation produce');
    const count = (JSON.parse(engine) as { rows: unknown[] }).rows.length;
    return `identical (${count} rollup rows from ${interactions} interactions of ${plan.mailboxes.length} mailboxes × ${plan.days.length} days)`;
  } finally {
    await viaEngine.drop();
    await viaBulk.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// In-process timings

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function time(name: string, runs: number, work: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < Math.min(5, runs); i++) await work();
  const samples: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  samples.sort((a, b) => a - b);
  return {
    name,
    runs,
    medianMs: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
    cpuMs: (cpu.user + cpu.system) / 1000 / runs,
  };
}

const sink = () =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

function queries(stats: Services['stats'], mailboxId: string) {
  return [
    ['dashboard', () => stats.dashboard(WORKSPACE_ID)],
    ['analytics 7d', () => stats.analytics(WORKSPACE_ID, { period: '7d' })],
    ['analytics 30d', () => stats.analytics(WORKSPACE_ID, { period: '30d' })],
    ['analytics 90d', () => stats.analytics(WORKSPACE_ID, { period: '90d' })],
    ['analytics 90d, one mailbox', () => stats.analytics(WORKSPACE_ID, { period: '90d', mailboxId })],
    ['reputation 90d', () => stats.reputation(WORKSPACE_ID, { period: '90d' })],
    ['placement 90d', () => stats.placement(WORKSPACE_ID, { period: '90d' })],
    ['engagement 90d', () => stats.engagement(WORKSPACE_ID, { period: '90d' })],
    ['daily-summary (today)', () => stats.dailySummary(WORKSPACE_ID, {})],
    ['mailbox stats 90d', () => stats.mailboxStats(WORKSPACE_ID, mailboxId, { period: '90d' })],
  ] as const;
}

const GROWTH_QUERIES = new Set([
  'dashboard',
  'analytics 7d',
  'analytics 90d',
  'placement 90d',
  'daily-summary (today)',
]);

async function timeQueries(services: Services, plan: SeedPlan, sizes: Sizes, subset?: Set<string>): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (const [name, work] of queries(services.stats, plan.mailboxes[0]!.id)) {
    if (subset && !subset.has(name)) continue;
    timings.push(await time(name, sizes.runs, work));
  }
  if (subset) return timings;
  timings.push(
    await time('export csv 30d (all mailboxes × days, streamed)', sizes.exportRuns, async () => {
      const { rows } = await services.stats.exportRows(WORKSPACE_ID, { period: '30d' });
      await pipeline(exportCsv(rows), sink());
    }),
  );
  timings.push(
    await time('export pdf 90d (report incl. per-mailbox table)', sizes.pdfRuns, async () => {
      const report = await services.stats.report(WORKSPACE_ID, { period: '90d' });
      await pipeline(await renderReportPdf(report), sink());
    }),
  );
  return timings;
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;
// autocannon ships no type declarations; this is the one call the benchmark makes.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface ServerChild {
  port: number;
  nakedPort: number;
  process: ChildProcess;
}

async function startServerChild(location: BenchDatabase['location'], cacheMs: number): Promise<ServerChild> {
  // started as every warmup process is (src/server-build.mjs); --v8-defaults: with V8's own young generation
  const flags = process.argv.includes('--v8-defaults') ? [] : SERVER_NODE_FLAGS;
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
    env: { ...process.env, BENCH_SERVE: JSON.stringify({ ...location, cacheMs }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+) (\d+)/.exec(output);
      if (match) resolve({ port: Number(match[1]), nakedPort: Number(match[2]), process: child });
    });
  });
}

async function stopServerChild(server: ServerChild): Promise<void> {
  server.process.removeAllListeners('exit');
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGTERM');
  await exited;
}

/** The server child's CPU time so far, in microseconds. */
async function serverCpu(base: string): Promise<number> {
  const response = await fetch(`${base}/bench/cpu`);
  return ((await response.json()) as { micros: number }).micros;
}

async function load(
  name: string,
  url: string,
  seconds: number,
  apiKey: string | undefined,
  cacheMs: number,
  cpuBase: string,
): Promise<HttpRun> {
  const cpuBefore = await serverCpu(cpuBase);
  const started = performance.now();
  const result = await autocannon({
    url,
    connections: 50,
    duration: seconds,
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  });
  const elapsedMicros = (performance.now() - started) * 1000;
  const cpu = (await serverCpu(cpuBase)) - cpuBefore;
  return {
    name,
    cacheMs,
    requestsPerSecond: result.requests.average,
    cpuMicrosPerRequest: cpu / Math.max(1, result.requests.total),
    serverBusy: cpu / elapsedMicros,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

async function measureHttp(
  location: BenchDatabase['location'],
  apiKey: string,
  sizes: Sizes,
  withNaked: boolean,
  log: (line: string) => void,
) {
  const runs: HttpRun[] = [];
  let naked: HttpRun | null = null;
  for (const cacheMs of [0, 1000]) {
    const server = await startServerChild(location, cacheMs);
    const base = `http://127.0.0.1:${server.port}`;
    try {
      // Warm-up: JIT, connection pools, SQLite page cache.
      await load('warm-up', `${base}/api/stats/analytics?period=90d`, 2, apiKey, cacheMs, base);
      const targets: Array<[string, string, string | undefined]> =
        cacheMs === 0
          ? [
              ['constant route, same app (no auth)', '/bench/constant', undefined],
              ['constant route, same app, with API key check', '/bench/authenticated', apiKey],
              ['GET /api/stats/dashboard', '/api/stats/dashboard', apiKey],
              ['GET /api/stats/analytics?period=90d', '/api/stats/analytics?period=90d', apiKey],
            ]
          : [
              ['GET /api/stats/dashboard', '/api/stats/dashboard', apiKey],
              ['GET /api/stats/analytics?period=90d', '/api/stats/analytics?period=90d', apiKey],
            ];
      for (const [name, route, key] of targets) {
        const run = await load(name, `${base}${route}`, sizes.httpSeconds, key, cacheMs, base);
        log(
          `  ${name} (cache ${cacheMs} ms): ${Math.round(run.requestsPerSecond)} req/s, p99 ${run.p99Ms} ms, ${Math.round(run.cpuMicrosPerRequest)} µs CPU a request`,
        );
        runs.push(run);
      }
      if (withNaked && cacheMs === 0) {
        naked = await load(
          'bare Fastify(), constant route',
          `http://127.0.0.1:${server.nakedPort}/`,
          sizes.httpSeconds,
          undefined,
          0,
          base,
        );
        log(`  bare Fastify(): ${Math.round(naked.requestsPerSecond)} req/s, p99 ${naked.p99Ms} ms`);
      }
    } finally {
      await stopServerChild(server);
    }
  }
  return { runs, naked };
}

/** The server child: the real app on the seeded database, plus two constant routes to compare with. */
async function serve(): Promise<void> {
  const settings = JSON.parse(process.env.BENCH_SERVE!) as BenchDatabase['location'] & { cacheMs: number };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-serve-'));
  const handle = openDatabase({ databaseUrl: settings.url, sqliteFile: settings.file, dataDir: dir });
  const services = servicesFor(handle, dir, settings.cacheMs);
  // the API key cache at its default (WARMUP_AUTH_CACHE_MS), as `warmup serve` runs
  const app = await buildApp({
    services,
    rateLimit: 0,
    authCacheMs: loadConfig({}).authCacheMs,
    healthCheck: async () => {},
  });
  app.get('/bench/constant', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/bench/cpu', { schema: { hide: true } }, async () => {
    const usage = process.cpuUsage();
    return { micros: usage.user + usage.system };
  });
  await app.register(async (scope) => {
    requireAccess(scope, {
      key: createAuthenticationCache(services.workspaces.authenticate, { ttlMs: loadConfig({}).authCacheMs })
        .authenticate,
      session: services.accounts.authenticateSession,
    });
    scope.get('/bench/authenticated', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const naked = Fastify();
  naked.get('/', async () => ({ status: 'ok' }));
  await naked.listen({ port: 0, host: '127.0.0.1' });
  const port = (address: ReturnType<typeof app.server.address>) =>
    typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`listening ${port(app.server.address())} ${port(naked.server.address())}\n`);
  process.once('SIGTERM', () => {
    void Promise.all([app.close(), naked.close()])
      .then(() => handle.close())
      .finally(() => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      });
  });
}

export async function runStatsBench(options: StatsBenchOptions = {}): Promise<StatsBenchResult> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const preset = options.quick ? QUICK : FULL;
  const sizes: Sizes = {
    ...preset,
    main: {
      ...preset.main,
      mailboxes: options.mailboxes ?? preset.main.mailboxes,
      days: options.days ?? preset.main.days,
    },
  };
  const rawInteractions = options.rawInteractions ?? true;
  const baseUrl = options.databaseUrl ?? process.env.TEST_DATABASE_URL;
  const dialects = options.dialects ?? (baseUrl ? ['sqlite', 'postgres'] : ['sqlite']);
  if (!baseUrl && !options.dialects)
    log('stats bench: PostgreSQL skipped (set TEST_DATABASE_URL=postgres://… to include it)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-bench-stats-'));
  const result: StatsBenchResult = {
    machine: machine(),
    quick: Boolean(options.quick),
    sizes,
    dialects: [],
    naked: null,
    seconds: 0,
  };
  const fewerMessages: SeedSize = { ...sizes.main, perDay: sizes.main.perDay / 10 };
  const fewerDays: SeedSize = { ...sizes.main, days: Math.max(1, Math.round(sizes.main.days / 10)) };
  try {
    for (const dialect of dialects) {
      log(`\n== ${dialect}`);
      const rollupCheck = await rollupsMatchEngine(dialect, baseUrl, dir);
      log(`  rollups vs recordInteraction on a sample: ${rollupCheck}`);
      const dialectResult: DialectResult = { dialect, rollupCheck, datasets: [], http: [] };
      result.dialects.push(dialectResult);
      const datasets: Array<[string, SeedSize]> = [['main', sizes.main]];
      if (options.growth ?? true)
        datasets.push(['10× fewer messages a day', fewerMessages], ['10× fewer days of history', fewerDays]);
      for (const [label, size] of datasets) {
        const database = await createBenchDatabase(dialect, label === 'main' ? 'main' : 'growth', baseUrl, dir);
        try {
          log(`  seeding ${label}: ${size.mailboxes} mailboxes × ${size.days} days × ~${size.perDay} sends a day`);
          const { seed, apiKey } = await seedDataset(database, size, dir, log, rawInteractions);
          log(
            `  seeded ${seed.interactions.toLocaleString('en-US')} interactions, ${seed.rollupRows.toLocaleString('en-US')} rollup rows in ${seed.seconds.toFixed(1)} s`,
          );
          const plan = planHistory(WORKSPACE_ID, size, TODAY);
          const timings = await timeQueries(
            servicesFor(database.handle, dir),
            plan,
            sizes,
            label === 'main' ? undefined : GROWTH_QUERIES,
          );
          for (const t of timings)
            log(
              `    ${t.name}: median ${t.medianMs.toFixed(2)} ms, p99 ${t.p99Ms.toFixed(2)} ms, CPU ${t.cpuMs.toFixed(2)} ms a run`,
            );
          dialectResult.datasets.push({ label, size, seed, timings });
          if (label === 'main') {
            const http = await measureHttp(database.location, apiKey, sizes, result.naked === null, log);
            dialectResult.http = http.runs;
            result.naked ??= http.naked;
          }
        } finally {
          await database.drop();
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--serve')) {
    await serve();
  } else {
    const dialect = argument('--dialect');
    const count = (name: string) => (argument(name) === undefined ? undefined : Number(argument(name)));
    const result = await runStatsBench({
      quick: process.argv.includes('--quick'),
      dialects: dialect ? [dialect as Dialect] : undefined,
      mailboxes: count('--mailboxes'),
      days: count('--days'),
      growth: !process.argv.includes('--no-growth'),
      rawInteractions: !process.argv.includes('--rollups-only'),
    });
    console.log(`\n${statsReport(result)}`);
  }
}
