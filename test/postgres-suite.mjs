// Runs the suite again on PostgreSQL (`WARMUP_TEST_DB=postgres`): every test file whose imports reach
// `test/helpers/test-database.ts`, the one place that reads WARMUP_TEST_DB and opens a test database.
// A file that cannot reach it (mail protocol, rendering, policy, SpamAssassin scoring …) runs exactly
// the same on either setting and has already run in the SQLite pass. The dashboard's Chromium tests
// (test/dashboard) run in the SQLite pass only: they drive the page through the same API routes
// whose PostgreSQL behaviour the API tests prove (every route with every role, on both databases),
// and a browser on both passes would double the slowest part of CI for no query it does not reach.
// So do the few long runs in SQLITE_ONLY below, each with its reason.
// Under CI a missing TEST_DATABASE_URL is a failure; on a laptop it is one clear line. Arguments (files, filters) go to vitest as they are and skip the selection;
// `--list` prints the selection.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testDatabaseModule = path.join(root, 'test/helpers/test-database.ts');

/**
 * Long runs whose subject is not the database, each with why a second pass on PostgreSQL would add
 * no query of its own: the two passes share two cores, and CI must stay well under 20 minutes.
 */
const SQLITE_ONLY = {
  // three weeks of the planner over pools of 3 to 25 (the capacity model and the pair rules); the
  // planner's statements run on PostgreSQL in planner.test.ts, the engine tests and the seeded replay
  'test/simulation/capacity.test.ts': 'capacity model',
  // Dovecot crashing, hanging and delivering twice: the mail server's faults, not the database's;
  // counting each message once is reader.test.ts's "does nothing twice", which runs on both
  'test/engine/faults.test.ts': 'mail-server faults',
};

if (process.argv[2] === '--list') {
  console.log(databaseTestFiles().join('\n'));
  process.exit(0);
}
if (!process.env.TEST_DATABASE_URL) {
  if (process.env.CI === 'true') {
    console.error('PostgreSQL suite: TEST_DATABASE_URL is not set (required under CI)');
    process.exit(1);
  }
  console.log(
    'PostgreSQL suite skipped: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run every test on PostgreSQL too',
  );
  process.exit(0);
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args : databaseTestFiles();
if (args.length === 0) {
  console.log(`PostgreSQL suite: the ${files.length} test files that open a test database`);
}
const result = spawnSync('npx', ['vitest', 'run', ...files], {
  stdio: 'inherit',
  env: { ...process.env, WARMUP_TEST_DB: 'postgres' },
});
process.exit(result.status ?? 1);

function databaseTestFiles() {
  const testFiles = ['src', 'test'].flatMap((dir) => walk(path.join(root, dir))).filter((f) => f.endsWith('.test.ts'));
  // Who imports whom, from the test files down; then everything that reaches the test database module.
  const importers = new Map();
  const seen = new Set();
  const pending = [...testFiles];
  while (pending.length > 0) {
    const file = pending.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of runtimeImports(file)) {
      if (!importers.has(imported)) importers.set(imported, []);
      importers.get(imported).push(file);
      pending.push(imported);
    }
  }
  const reaching = new Set([testDatabaseModule]);
  const frontier = [testDatabaseModule];
  while (frontier.length > 0) {
    for (const importer of importers.get(frontier.pop()) ?? []) {
      if (!reaching.has(importer)) {
        reaching.add(importer);
        frontier.push(importer);
      }
    }
  }
  const browserTests = path.join(root, 'test/dashboard') + path.sep;
  const sqliteOnly = new Set(Object.keys(SQLITE_ONLY).map((file) => path.join(root, file)));
  return testFiles
    .filter((file) => reaching.has(file) && !file.startsWith(browserTests) && !sqliteOnly.has(file))
    .map((file) => path.relative(root, file))
    .sort();
}

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

/** The repository files `file` imports at run time (type-only imports are erased). */
function runtimeImports(file) {
  const source = fs.readFileSync(file, 'utf8');
  const specifiers = [
    // import … from / export … from, unless type-only
    ...[...source.matchAll(/^(?:import|export)\s+(type\s+)?[^;'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm)]
      .filter((m) => m[1] === undefined)
      .map((m) => m[2]),
    // import './x.js' and import('./x.js')
    ...[...source.matchAll(/\bimport\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]),
  ];
  return specifiers
    .map((specifier) => resolveSource(path.resolve(path.dirname(file), specifier)))
    .filter((resolved) => resolved !== undefined);
}

/** `./x.js` in TypeScript source names `./x.ts` (or `.tsx`); plain JavaScript files are read as they are. */
function resolveSource(target) {
  const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), `${target}.ts`];
  return candidates.find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
}
