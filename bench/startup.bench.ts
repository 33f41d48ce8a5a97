// What one `warmup` process costs before it does any work: CPU time and peak memory of
// `warmup help` (it loads every module of the server, as `serve` and `worker` do) run from the built
// file (bin/warmup.js, src/server-build.mjs) against the same sources loaded through tsx, alternating,
// in the same run. Each run reports its own CPU and maxRSS as it exits (bench/usage-at-exit.mjs).
//
//   npm run bench -- --only startup
//   (standalone: node --import tsx bench/startup.bench.ts [--runs 7])
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtServer } from '../src/server-build.mjs';
import { machine } from '../test/scale/cluster.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const usageAtExit = path.join(repo, 'bench/usage-at-exit.mjs');

interface Usage {
  cpuMs: number;
  maxRssMb: number;
}

export interface StartupBenchResult {
  machine: ReturnType<typeof machine>;
  node: string;
  runs: number;
  built: Usage[];
  tsx: Usage[];
}

const WAYS = {
  built: ['bin/warmup.js', 'help'],
  tsx: ['--import', 'tsx', 'src/cli.ts', 'help'],
} as const;

function runOnce(way: keyof typeof WAYS): Usage {
  const result = spawnSync(process.execPath, ['--import', usageAtExit, ...WAYS[way]], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, WARMUP_USAGE_AT_EXIT: '1' },
  });
  const line = result.stderr.split('\n').find((text) => text.startsWith('{"cpuMs"'));
  if (result.status !== 0 || !line) throw new Error(`${way} run failed (${result.status}): ${result.stderr}`);
  return JSON.parse(line) as Usage;
}

export async function runStartupBench(
  options: { runs?: number; log?: (line: string) => void } = {},
): Promise<StartupBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const runs = options.runs ?? 7;
  // built before the first run is timed: the build itself is not a start-up
  await builtServer();
  const result: StartupBenchResult = { machine: machine(), node: process.version, runs, built: [], tsx: [] };
  for (let i = 0; i < runs; i += 1) {
    for (const way of ['built', 'tsx'] as const) {
      const usage = runOnce(way);
      result[way].push(usage);
      log(`${way}: ${usage.cpuMs} ms CPU, maxRSS ${usage.maxRssMb} MB`);
    }
  }
  return result;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export function startupReport(result: StartupBenchResult): string {
  const { cpus, model, memoryGb } = result.machine;
  const row = (label: string, usages: Usage[]) => {
    const cpu = usages.map((u) => u.cpuMs);
    const rss = usages.map((u) => u.maxRssMb);
    return `| ${label} | ${median(cpu)} ms (${Math.min(...cpu)}–${Math.max(...cpu)}) | ${median(rss)} MB (${Math.min(...rss)}–${Math.max(...rss)}) |`;
  };
  const cpuRatio = median(result.built.map((u) => u.cpuMs)) / median(result.tsx.map((u) => u.cpuMs));
  const rssSaved = median(result.tsx.map((u) => u.maxRssMb)) - median(result.built.map((u) => u.maxRssMb));
  return [
    `${cpus} CPUs (${model}), ${memoryGb} GB RAM, Node ${result.node}; \`warmup help\` ${result.runs} times each way, alternating`,
    '',
    '| process | CPU (user + system), median (range) | maxRSS, median (range) |',
    '|---|---:|---:|',
    row('built file (`bin/warmup.js`)', result.built),
    row('the sources through tsx (the baseline)', result.tsx),
    '',
    `The built file starts on ×${cpuRatio.toFixed(2)} the CPU of the sources through tsx, and ${rssSaved} MB less memory.`,
  ].join('\n');
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const runs = argument('--runs');
  console.log(`\n${startupReport(await runStartupBench({ runs: runs ? Number(runs) : undefined }))}`);
}
