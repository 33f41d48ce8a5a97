// What the statistics benchmark (stats.bench.ts) measures, as data, and the report it prints of it.
import os from 'node:os';
import { type Dialect } from '../src/db/database.js';
import { type SeedCounts, type SeedSize } from './seed-history.js';
import fs from 'node:fs';

export interface Timing {
  name: string;
  runs: number;
  medianMs: number;
  p99Ms: number;
  /**
   * This process's CPU time a run (user + system), a mean: on a shared machine the part of the
   * wall-clock time that is the query's own. All of it on SQLite; on PostgreSQL the server's share is not in it.
   */
  cpuMs: number;
}

export interface HttpRun {
  name: string;
  cacheMs: number;
  requestsPerSecond: number;
  /** The server process's CPU time per request (user + system): its cost, whatever else ran on the machine. */
  cpuMicrosPerRequest: number;
  /** Share of the run the server process was on a CPU. */
  serverBusy: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface DatasetResult {
  label: string;
  size: SeedSize;
  seed: SeedCounts;
  timings: Timing[];
}

export interface DialectResult {
  dialect: Dialect;
  rollupCheck: string;
  datasets: DatasetResult[];
  http: HttpRun[];
}

export interface StatsBenchResult {
  /** loadBefore: the 1-minute load average when the run started (other work on the machine skews wall-clock numbers). */
  machine: { cpus: number; model: string; memoryGb: number; node: string; loadBefore: number };
  quick: boolean;
  sizes: Sizes;
  dialects: DialectResult[];
  naked: HttpRun | null;
  seconds: number;
}

export interface Sizes {
  main: SeedSize;
  runs: number;
  exportRuns: number;
  pdfRuns: number;
  httpSeconds: number;
}

/** The machine the benchmark ran on, as the report names it. */
export function machine(): StatsBenchResult['machine'] {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  return {
    cpus: os.availableParallelism(),
    model,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadBefore: os.loadavg()[0]!,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

export function statsReport(result: StatsBenchResult): string {
  const lines: string[] = [];
  const { machine: m, sizes } = result;
  lines.push(
    `Machine: ${m.cpus} CPUs (${m.model}), ${m.memoryGb} GB RAM, Node ${m.node}; load average ${m.loadBefore.toFixed(1)} before the run, ${os.loadavg()[0]!.toFixed(1)} after. ` +
      `Whole run: ${Math.round(result.seconds)} s${result.quick ? ' (--quick)' : ''}.`,
  );
  lines.push('');
  for (const d of result.dialects) {
    const main = d.datasets.find((x) => x.label === 'main')!;
    lines.push(`#### ${d.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`);
    lines.push('');
    lines.push(
      `Dataset: ${main.size.mailboxes.toLocaleString('en-US')} mailboxes × ${main.size.days} days, ${main.seed.messages.toLocaleString('en-US')} messages, ` +
        `${main.seed.interactions.toLocaleString('en-US')} interactions${main.seed.rawInteractions ? '' : ' (counted in the rollups; the raw rows not written)'}, ${main.seed.rollupRows.toLocaleString('en-US')} rollup rows (seeded in ${main.seed.seconds.toFixed(0)} s). ` +
        `Rollups vs the engine path on a sample: ${d.rollupCheck}.`,
    );
    lines.push('');
    lines.push(
      `| in-process (service, no cache) | runs | median | p99 | CPU a run (${d.dialect === 'sqlite' ? 'all of it' : 'this process only'}) | < 20 ms (median / p99) |`,
    );
    lines.push('|---|---:|---:|---:|---:|:---:|');
    const met = (value: number) => (value < 20 ? 'yes' : '**no**');
    for (const t of main.timings) {
      const isQuery = !t.name.startsWith('export');
      lines.push(
        `| ${t.name} | ${t.runs} | ${ms(t.medianMs)} ms | ${ms(t.p99Ms)} ms | ${ms(t.cpuMs)} ms | ${isQuery ? `${met(t.medianMs)} / ${met(t.p99Ms)}` : 'n/a'} |`,
      );
    }
    lines.push('');
    const constant = d.http.find((r) => r.name.startsWith('constant route, same app (no auth)'));
    lines.push(
      '| HTTP, 50 connections | stats cache | req/s | vs constant route | p50 | p99 | server CPU a request | server busy | errors |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    const row = (r: HttpRun, cache: string, ratio: string) =>
      `| ${r.name} | ${cache} | ${Math.round(r.requestsPerSecond).toLocaleString('en-US')} | ${ratio} | ${r.p50Ms} ms | ${r.p99Ms} ms | ${Math.round(r.cpuMicrosPerRequest)} µs | ${Math.round(100 * r.serverBusy)} % | ${r.errors} |`;
    for (const r of d.http) {
      const ratio = constant ? `${((100 * r.requestsPerSecond) / constant.requestsPerSecond).toFixed(0)} %` : '';
      lines.push(row(r, r.name.startsWith('constant') ? '' : `${r.cacheMs} ms`, ratio));
    }
    if (result.naked && d === result.dialects[0])
      lines.push(row({ ...result.naked, name: `${result.naked.name} (framework ceiling)` }, '', ''));
    lines.push('');
    const fewerMessages = d.datasets.find((x) => x.label.includes('messages'));
    const fewerDays = d.datasets.find((x) => x.label.includes('days'));
    if (fewerMessages && fewerDays) {
      lines.push(
        `| growth (median) | ${fewerMessages.seed.interactions.toLocaleString('en-US')} interactions, ${fewerMessages.size.days} days | ${main.seed.interactions.toLocaleString('en-US')} interactions, ${main.size.days} days | ×messages | ` +
          `${fewerDays.seed.interactions.toLocaleString('en-US')} interactions, ${fewerDays.size.days} days | ×days |`,
      );
      lines.push('|---|---:|---:|---:|---:|---:|');
      for (const t of fewerMessages.timings) {
        const big = main.timings.find((x) => x.name === t.name)!;
        const short = fewerDays.timings.find((x) => x.name === t.name)!;
        lines.push(
          `| ${t.name} | ${ms(t.medianMs)} ms | ${ms(big.medianMs)} ms | ×${(big.medianMs / t.medianMs).toFixed(2)} | ${ms(short.medianMs)} ms | ×${(big.medianMs / short.medianMs).toFixed(2)} |`,
        );
      }
      lines.push('');
    }
  }
  lines.push(
    `Runs: ${sizes.runs} per query (${sizes.exportRuns} for the CSV export, ${sizes.pdfRuns} for the PDF), after 5 warm-up runs; HTTP: autocannon, 50 connections, ${sizes.httpSeconds} s per target after a 2 s warm-up.`,
  );
  return lines.join('\n');
}
