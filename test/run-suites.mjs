// `npm test`: the typecheck and lint, the SQLite pass (in two halves) and the PostgreSQL pass side by
// side. Each half and each pass runs its files one at a time with its own mail stack and its own
// databases (temporary SQLite files, one PostgreSQL schema per test file), so none sees another's mail
// or rows. Most of a test's time is spent waiting on mail servers, sockets and timers, not computing:
// with one SQLite process beside the PostgreSQL pass the two cores were less than half busy (about
// 1,100 s of CPU in a 1,190 s run), and the SQLite pass alone was the long pole. Halved by vitest's
// `--shard`, it ends near the PostgreSQL pass. The first half streams; the others are printed whole
// when they end, so nothing interleaves, and what failed is repeated at the very end.
// WARMUP_TEST_SERIAL=1 runs everything one after the other instead, the checks first, the SQLite pass
// whole.
import { spawn } from 'node:child_process';

const serial = process.env.WARMUP_TEST_SERIAL === '1';

function run(label, command, args, { stream }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
const checks = () => run('Typecheck and lint', 'npm', ['run', '--silent', 'check'], { stream: serial });
const sqlitePass = () => run('SQLite', process.execPath, [vitest, 'run'], { stream: true });
const sqliteHalf = (half, stream) =>
  run(`SQLite ${half}/2`, process.execPath, [vitest, 'run', `--shard=${half}/2`], { stream });
const postgresPass = () => run('PostgreSQL', process.execPath, ['test/postgres-suite.mjs'], { stream: serial });

let results;
if (serial) {
  const checked = await checks();
  results = checked.code === 0 ? [checked, await sqlitePass(), await postgresPass()] : [checked];
} else {
  const checked = checks();
  const postgres = postgresPass();
  const secondHalf = sqliteHalf(2, false);
  const firstHalf = await sqliteHalf(1, true);
  results = [firstHalf];
  for (const [title, pending] of [
    ['the second half of the SQLite pass', secondHalf],
    ['the PostgreSQL pass', postgres],
    ['the typecheck and lint', checked],
  ]) {
    const result = await pending;
    console.log(`\n--- ${title}, which ran alongside ---\n`);
    process.stdout.write(result.output);
    results.push(result);
  }
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
