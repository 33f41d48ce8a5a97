// `npm test` after typecheck and lint: the SQLite pass and the PostgreSQL pass side by side. Each pass
// runs its files one at a time with its own mail stack and its own databases (temporary SQLite files,
// one PostgreSQL schema per test file), so neither sees the other's mail or rows. Most of a test's
// time is spent waiting on Postfix, Dovecot and timers rather than on a core, so two passes at once
// take little longer than the slower one alone. The SQLite pass streams; the PostgreSQL pass is
// printed whole when it ends, so the two never interleave.
// WARMUP_TEST_SERIAL=1 runs them one after the other instead.
import { spawn } from 'node:child_process';

const serial = process.env.WARMUP_TEST_SERIAL === '1';

function run(label, args, { stream }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      from.on('data', (chunk) => {
        output.push(chunk);
        if (stream) to.write(chunk);
      });
    }
    child.on('close', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      resolve({ label, code: code ?? 1, signal, seconds, output: Buffer.concat(output) });
    });
  });
}

const vitest = 'node_modules/vitest/vitest.mjs';
const sqlitePass = () => run('SQLite', [vitest, 'run'], { stream: true });
const postgresPass = () => run('PostgreSQL', ['test/postgres-suite.mjs'], { stream: serial });

let results;
if (serial) {
  results = [await sqlitePass(), await postgresPass()];
} else {
  const postgres = postgresPass();
  const sqlite = await sqlitePass();
  console.log('\n--- the PostgreSQL pass, which ran alongside ---\n');
  const postgresResult = await postgres;
  process.stdout.write(postgresResult.output);
  results = [sqlite, postgresResult];
}

// A CI log is often read from its end: repeat each failed test's name and first error lines there.
for (const { label, code, output } of results) {
  if (code !== 0) console.log(`\n--- what failed in the ${label} pass ---\n${failureSummary(output.toString('utf8'))}`);
}
for (const { label, code, signal, seconds } of results) {
  console.log(`${label} pass: ${code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`} in ${seconds} s`);
}
process.exit(results.every((result) => result.code === 0) ? 0 : 1);

function failureSummary(text) {
  // eslint-disable-next-line no-control-regex -- the escape that starts a terminal colour
  const lines = text.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const summary = [];
  lines.forEach((line, index) => {
    if (/^\s*FAIL\s/.test(line)) summary.push(...lines.slice(index, index + 4), '');
    else if (/^\s*(Test Files|Tests|Errors)\s/.test(line)) summary.push(line);
  });
  return (summary.length > 0 ? summary : lines.slice(-40)).slice(0, 120).join('\n');
}
