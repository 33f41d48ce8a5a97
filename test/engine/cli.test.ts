// The engine commands as a user runs them: `warmup run-once`, `warmup worker`, `warmup serve`.
// (The simulation runs run-once against the real mail stack; these check the command itself.)
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { TEST_SECRET_KEY } from '../helpers/test-app.js';

const BIN = fileURLToPath(new URL('../../bin/warmup.js', import.meta.url));

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const dirs: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-cli-'));
  dirs.push(dir);
  return dir;
}

function start(args: string[], dir: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    // SQLite in a directory of its own: these tests never touch the suite's databases
    env: { ...process.env, DATABASE_URL: '', WARMUP_DATA_DIR: dir, WARMUP_SECRET_KEY: TEST_SECRET_KEY, ...env },
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  /** Resolves once a log line with this message has been written. */
  async function logged(message: string | RegExp, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const line = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => (typeof message === 'string' ? l.msg === message : message.test(String(l.msg))));
      if (line) return line;
      if (Date.now() > end || child.exitCode !== null)
        throw new Error(`no "${message}" log line; stdout: ${stdout}\nstderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { child, exited, logged };
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('warmup run-once', () => {
  it('runs one cycle at the given time and prints its summary as JSON', async () => {
    const run = await start(['run-once', '--at', '2025-03-03T10:00:00Z', '--ignore-schedule'], dataDir()).exited;
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      at: '2025-03-03T10:00:00.000Z',
      ignoreSchedule: true,
      plan: { ran: true, messages: 0 },
      send: { claimed: 0 },
      sync: { synced: 0 },
      replies: { claimed: 0 },
      reputation: { scored: 0 },
      health: { stopped: [] },
      errors: [],
      stopped: false,
    });
    // stdout is the summary alone (logs go to stderr)
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('refuses an --at that is not an ISO time', async () => {
    const run = await start(['run-once', '--at', 'next tuesday'], dataDir()).exited;
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--at must be an ISO 8601 time such as 2025-03-03T10:00:00Z, got "next tuesday"');
    expect(run.stdout).toBe('');
  });
});

describe('warmup worker', () => {
  it('runs engine cycles until SIGTERM, then stops cleanly and gives back its leases', async () => {
    const dir = dataDir();
    const worker = start(['worker'], dir, { LOG_LEVEL: 'debug' });
    const started = await worker.logged('warmup worker started (SQLite: run no other engine on this database)');
    await worker.logged('engine cycle');
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('"msg":"shutting down"');
    const database = openDatabase({ dataDir: dir });
    try {
      const leases = await database.db
        .selectFrom('leases')
        .selectAll()
        .where('owner', '=', String(started.workerId))
        .execute();
      expect(leases).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

describe('warmup serve', () => {
  it('serves with the engine by default and stops both on SIGTERM', async () => {
    const server = start(['serve'], dataDir(), { PORT: '0', LOG_LEVEL: 'debug' });
    await server.logged('warmup engine started');
    await server.logged('engine cycle');
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit.code, exit.stderr).toBe(0);
  });

  it('serves without the engine with --no-engine', async () => {
    const server = start(['serve', '--no-engine'], dataDir(), { PORT: '0', LOG_LEVEL: 'debug' });
    await server.logged(/^First run: open http:\/\/127\.0\.0\.1:\d+\/ in your browser to create the owner account$/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.child.exitCode).toBeNull();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).not.toContain('warmup engine started');
    expect(exit.stdout).not.toContain('engine cycle');
  });
});
