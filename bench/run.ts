// `npm run bench`: every benchmark in turn, or one with `--only <name>`; `--quick` for a smaller
// size, `--list` to see them. Each prints the table BENCHMARKS.md quotes.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench [-- --only stats] [-- --quick]
import { claimsReport, runClaimsBench } from './claims.bench.js';
import { diversityReport, runDiversityBench } from './diversity.bench.js';
import { effectivenessReport, runEffectivenessBench } from './effectiveness.bench.js';
import { engineReport, runEngineBench } from './engine.bench.js';
import { importReport, runImportBench } from './import.bench.js';
import { parallelPlannerReport, runParallelPlannerBench } from './parallel-planner.bench.js';
import { plannerReport, runPlannerBench } from './planner.bench.js';
import { runSimulatedDay, simulatedDayArguments, simulatedDayReport } from './simulated-day.bench.js';
import { runStartupBench, startupReport } from './startup.bench.js';
import { runStatsBench } from './stats.bench.js';
import { statsReport } from './stats-report.js';
import { MAIL_USERS } from '../test/mailstack/users.js';
import { runWorkersBench, workersReport } from './workers.bench.js';

interface BenchmarkOptions {
  quick: boolean;
  log: (line: string) => void;
}

interface Benchmark {
  name: string;
  description: string;
  /** Runs the benchmark and returns its report (markdown). */
  run(options: BenchmarkOptions): Promise<string>;
}

const benchmarks: Benchmark[] = [
  {
    name: 'diversity',
    description:
      'how alike a month of warmup mail is (100 mailboxes, 10 workspaces): the conversation generator against the shipped templates',
    run: ({ quick }) => Promise.resolve(diversityReport(runDiversityBench({ quick }))),
  },
  {
    name: 'startup',
    description:
      'CPU and memory of one `warmup` process before it does any work: the built file against the sources through tsx',
    run: async ({ quick, log }) => startupReport(await runStartupBench({ runs: quick ? 3 : 7, log })),
  },
  {
    name: 'stats',
    description:
      'statistics queries and HTTP throughput over 1,000 mailboxes × 90 days of history (SQLite, and PostgreSQL with TEST_DATABASE_URL)',
    run: async ({ quick, log }) => statsReport(await runStatsBench({ quick, log })),
  },
  {
    name: 'workers',
    description:
      'the same load (8 mailboxes, 480 messages due now) processed by 1, 2 and 3 `warmup worker` processes (PostgreSQL, real mail stack)',
    run: async ({ quick, log }) => workersReport(await runWorkersBench({ quick, log })),
  },
  {
    name: 'workers-latency',
    description:
      '24 mailboxes, 10 messages each due now, with 100 ms round trip added to every IMAP and SMTP exchange as a real provider answers: 1, 2 and 3 workers (PostgreSQL, real mail stack)',
    run: async ({ quick, log }) =>
      workersReport(
        await runWorkersBench({
          log,
          latencyMs: 100,
          users: MAIL_USERS.benchWide,
          messagesPerMailbox: quick ? 5 : 10,
        }),
      ),
  },
  {
    name: 'simulated-day',
    description:
      'a full warmup day of 10,000 mailboxes (500 with --quick; --mailboxes N, --workers N) planned, sent, read and counted by 3 workers (PostgreSQL, real mail stack, --ignore-schedule)',
    run: async ({ quick, log }) =>
      simulatedDayReport(
        await runSimulatedDay({ log, ...(quick ? { mailboxes: 500 } : {}), ...simulatedDayArguments() }),
      ),
  },
  {
    name: 'engine',
    description:
      'engine throughput (120 messages on 8 mailboxes, SQLite, real mail stack) against a nodemailer + imapflow loop doing the same work',
    run: async ({ quick, log }) => engineReport(await runEngineBench({ quick, log })),
  },
  {
    name: 'import',
    description:
      'bulk import of 200 mailboxes from one CSV (some wrong passwords, some repeated) through the API, then the same file again (real mail stack)',
    run: async ({ quick, log }) => importReport(await runImportBench({ quick, log })),
  },
  {
    name: 'planner',
    description: 'one `planDay` for 100,000 active mailboxes on SQLite (smaller sizes first): time and peak memory',
    run: async ({ quick, log }) => plannerReport(await runPlannerBench({ quick, log })),
  },
  {
    name: 'parallel-planner',
    description:
      'one day planned for 100,000 active mailboxes (10,000 with --quick) on PostgreSQL by 1 and by 3 planner processes at once',
    run: async ({ quick, log }) => parallelPlannerReport(await runParallelPlannerBench({ quick, log })),
  },
  {
    name: 'claims',
    description:
      "a cycle's sync, reputation and health steps over 1,000 and 10,000 idle mailboxes: statements, rows and time (SQLite, and PostgreSQL with TEST_DATABASE_URL)",
    run: async ({ quick, log }) => claimsReport(await runClaimsBench({ quick, log })),
  },
  {
    name: 'effectiveness',
    description:
      "does warmup work: the INBOX share per simulated day of three pools of 6 cold mailboxes warmed by the engine (rescue only, rescue + open, the full behaviour) and of two control groups of 6 that send as much without engagement to receivers of their own, at the test stack's learning spam filter (7 days, 3 with --quick)",
    run: async ({ quick, log }) => effectivenessReport(await runEffectivenessBench({ quick, log })),
  },
];

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  if (process.argv.includes('--list')) {
    for (const b of benchmarks) console.log(`${b.name.padEnd(12)} ${b.description}`);
    return;
  }
  const only = argument('--only');
  const selected = only ? benchmarks.filter((b) => b.name === only) : benchmarks;
  if (selected.length === 0) {
    console.error(`unknown benchmark "${only}"; one of: ${benchmarks.map((b) => b.name).join(', ')}`);
    process.exit(2);
  }
  const quick = process.argv.includes('--quick');
  const reports: string[] = [];
  for (const benchmark of selected) {
    console.log(`\n### ${benchmark.name}`);
    reports.push(`### ${benchmark.name}\n\n${await benchmark.run({ quick, log: (line) => console.log(line) })}`);
  }
  console.log(`\n${reports.join('\n\n')}`);
}

await main();
