// The server runs from one JavaScript file built from the TypeScript sources, dist/server/warmup.mjs,
// built again whenever a source or the installed dependencies are newer than it, so a checkout needs
// no build step and an edited source never runs stale. Loading the sources through tsx instead cost
// every process (each `warmup` command, each worker) 2.5 s of CPU or more and 57–65 MB more at
// start-up (bench/startup.bench.ts): its hooks run in a thread of their own and transpile every
// module on each start. esbuild builds the file in about a second. `npm run build:server` builds it
// ahead (the image does: its /app is read-only).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const sources = join(repo, 'src');
export const BUILT_SERVER = join(repo, 'dist', 'server', 'warmup.mjs');

/**
 * The V8 flags every warmup process is started with: the package's `start` script, the bin's
 * shebang and the image's entrypoint carry them (a running process cannot set them itself).
 * A young generation of at most 3 × 4 MB instead of V8's 3 × 16 MB: planning keeps a batch of
 * mailboxes alive across many young collections, so V8 grew it to its maximum and kept it there;
 * capped, a process planning 20,000 mailboxes peaked 49 MB lower at the same CPU
 * (bench/planner.bench.ts, "The young generation capped at 4 MB" in BENCHMARKS.md).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=4'];

/** The newest modification time under src/ (the dashboard's bundle is not a source of the server). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist') continue;
    const full = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function newestInput() {
  const lock = join(repo, 'package-lock.json');
  return Math.max(newestSource(sources), existsSync(lock) ? statSync(lock).mtimeMs : 0);
}

/** Builds the server file when it is missing or older than its inputs; returns its URL to import. */
export async function builtServer() {
  const newest = newestInput();
  // within a millisecond: the built file's date is set from a Date, and reads back a hair off
  if (!existsSync(BUILT_SERVER) || statSync(BUILT_SERVER).mtimeMs + 1 < newest) {
    // Dated from the inputs it was built from: a source edited while it was built is newer, and the
    // next start builds again.
    await buildBundle(join(sources, 'cli.ts'), BUILT_SERVER, new Date(Math.ceil(newest)));
  }
  return pathToFileURL(BUILT_SERVER).href;
}

/**
 * Builds `entry` and the sources it imports into the one file `outfile` (with its source map), dated
 * `modified`; the dependencies load from node_modules as they are (native modules, their own files),
 * so `outfile` lies inside the checkout. The benchmarks build their child processes with it.
 */
export async function buildBundle(entry, outfile, modified = new Date()) {
  // loaded only to build: a start with a fresh file does not pay for it
  const { build } = await import('esbuild');
  const { outputFiles } = await build({
    entryPoints: [entry],
    outfile,
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    // error classes name themselves after their class (http/errors.ts)
    keepNames: true,
    // used with --enable-source-maps only: reading it at every start costs 12 MB
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'error',
  });
  // Processes that start together each write into a folder of their own and move the files into
  // place: the same bytes. The map goes first, so the file never names a map that is not there.
  const pending = join(dirname(outfile), `.building-${process.pid}`);
  try {
    mkdirSync(pending, { recursive: true });
    for (const output of outputFiles) writeFileSync(join(pending, basename(output.path)), output.contents);
    const file = join(pending, basename(outfile));
    utimesSync(file, new Date(), modified);
    renameSync(`${file}.map`, `${outfile}.map`);
    renameSync(file, outfile);
  } finally {
    rmSync(pending, { recursive: true, force: true });
  }
}
