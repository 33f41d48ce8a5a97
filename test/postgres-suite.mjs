// Runs the whole suite again on PostgreSQL (`WARMUP_TEST_DB=postgres`). Under CI a missing
// TEST_DATABASE_URL is a failure; on a laptop it is one clear line.
import { spawnSync } from 'node:child_process';

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
const result = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, WARMUP_TEST_DB: 'postgres' },
});
process.exit(result.status ?? 1);
