// Builds the dashboard bundle when it is missing or older than its sources; otherwise does nothing.
// Runs before `npm start` and `npm test` (and from the dashboard tests), so a fresh checkout needs
// no separate build step and an edited source is never served stale.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..', '..');
const builtIndex = join(here, 'dist', 'index.html');
const SERVER_SIDE = new Set(['dashboard.routes.ts', 'ensure-built.mjs']);

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || SERVER_SIDE.has(entry.name)) continue;
    const full = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function staleReason() {
  if (!existsSync(builtIndex)) return 'not built yet';
  const builtAt = statSync(builtIndex).mtimeMs;
  if (newestSource(here) > builtAt) return 'sources changed';
  const lock = join(repo, 'package-lock.json');
  if (existsSync(lock) && statSync(lock).mtimeMs > builtAt) return 'dependencies changed';
  return undefined;
}

const reason = staleReason();
if (reason) {
  const vite = join(repo, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) {
    console.error('dashboard: cannot build, vite is not installed (run npm ci)');
    process.exit(1);
  }
  console.log(`dashboard: building (${reason})`);
  const result = spawnSync(process.execPath, [vite, 'build', '--config', join(here, 'vite.config.ts')], {
    cwd: repo,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error('dashboard: build failed');
    process.exit(result.status ?? 1);
  }
}
