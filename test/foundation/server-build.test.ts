// `warmup` runs the server built into one file from the sources, and builds it again whenever a
// source is newer, so an edited source never runs stale (src/server-build.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { SERVER_NODE_FLAGS } from '../../src/server-build.mjs';
import { runWarmup } from '../helpers/processes.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const built = path.join(repo, 'dist/server/warmup.mjs');
const source = path.join(repo, 'src/server-build.mjs');

/**
 * Makes the built file print `mark` when the environment names it (the file is dated now, newer than
 * every source): a run that prints it ran this very file, one that does not ran something built since.
 * Only this test's processes set the variable, so processes of other test files run as before.
 */
function markBuiltFile(mark: string): void {
  const marked = `${built}.marked`;
  fs.writeFileSync(
    marked,
    // first: a command may exit before the file's last line
    `if (process.env.WARMUP_TEST_BUILT_MARK === ${JSON.stringify(mark)}) process.stderr.write(${JSON.stringify(mark)});\n${fs.readFileSync(built, 'utf8')}`,
  );
  fs.renameSync(marked, built);
}

/** Dates a source now, as an edit would. */
function touchSource(): number {
  const now = new Date();
  fs.utimesSync(source, now, now);
  return fs.statSync(source).mtimeMs;
}

describe('the built server', () => {
  it('runs from the built file while it is newer than every source, and is built again once a source is newer', async () => {
    const help = await runWarmup(['help'], {});
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('run every background job (the job list) without the API');

    markBuiltFile('from the built file');
    const again = await runWarmup(['help'], { WARMUP_TEST_BUILT_MARK: 'from the built file' });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('from the built file');

    const edited = touchSource();
    const rebuilt = await runWarmup(['help'], { WARMUP_TEST_BUILT_MARK: 'from the built file' });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toBe('');
    expect(rebuilt.stdout).toBe(help.stdout);
    expect(fs.statSync(built).mtimeMs).toBeGreaterThanOrEqual(edited - 1);
    expect(fs.readFileSync(built, 'utf8')).not.toContain('WARMUP_TEST_BUILT_MARK');
  });

  it('a user who may not write the checkout runs the same commands from the sources when the build is out of date', async (context) => {
    // root may write anywhere: the folder is read-only for the user the command runs as
    if (process.getuid?.() !== 0) context.skip();
    const nobody = { uid: 65534, gid: 65534 };
    const help = await runWarmup(['help'], {});
    markBuiltFile('stale');
    touchSource();

    const result = await runWarmup(['help'], { WARMUP_TEST_BUILT_MARK: 'stale' }, 60_000, nobody);

    expect(result.code, result.stderr).toBe(0);
    // not the stale file, and nothing said about it: the command's output is its own
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(help.stdout);
    // the next user who may write builds it again
    expect((await runWarmup(['help'], {})).code).toBe(0);
    expect(fs.readFileSync(built, 'utf8')).not.toContain('WARMUP_TEST_BUILT_MARK');
  });

  it('every way the service starts gives its process the same V8 flags', async () => {
    const flags = SERVER_NODE_FLAGS.join(' ');
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).toBe(`node ${flags} bin/warmup.js serve`);
    const dockerfile = fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
    const entrypoint = ['node', ...SERVER_NODE_FLAGS, 'bin/warmup.js'].map((part) => JSON.stringify(part));
    expect(dockerfile).toContain(`ENTRYPOINT [${entrypoint.join(', ')}]`);
    const bin = path.join(repo, 'bin/warmup.js');
    expect(fs.readFileSync(bin, 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${flags}`);

    // and the bin run as a program (npx warmup, an installed bin) gets them through its shebang
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-flags-'));
    try {
      const report = path.join(dir, 'report.cjs');
      fs.writeFileSync(report, 'process.stderr.write(JSON.stringify(process.execArgv) + "\\n");\n');
      const { stderr } = await promisify(execFile)(bin, ['help'], {
        env: { ...process.env, NODE_OPTIONS: `--require ${report}` },
      });
      expect(JSON.parse(stderr.split('\n')[0])).toEqual([...SERVER_NODE_FLAGS]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
