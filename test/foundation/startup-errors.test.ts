// A `warmup` command that cannot start says so in one line — what is wrong, the path or URL
// involved, the fix — and exits non-zero; the stack trace only with LOG_LEVEL=debug.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runWarmup, type CommandResult } from '../helpers/processes.js';

const SECRET = { WARMUP_SECRET_KEY: 'c'.repeat(64) };
// Root may write anywhere: the read-only folder is read-only for the user the command runs as.
const UNPRIVILEGED = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

function expectOneLine(result: CommandResult, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^warmup: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

let readOnlyDir: string;
let busy: net.Server;
let busyPort: number;

beforeAll(async () => {
  readOnlyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-readonly-'));
  fs.chmodSync(readOnlyDir, 0o555);
  busy = net.createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve));
  fs.rmSync(readOnlyDir, { recursive: true, force: true });
});

describe('startup failures are one line and a non-zero exit', () => {
  it('a data folder the user may not write: names the folder and the fix', async () => {
    const result = await runWarmup(['migrate'], { ...SECRET, WARMUP_DATA_DIR: readOnlyDir }, 60_000, UNPRIVILEGED);
    expectOneLine(result, new RegExp(`data folder ${readOnlyDir} is not writable .*WARMUP_DATA_DIR`));
    expect(fs.readdirSync(readOnlyDir)).toEqual([]);
  });

  it('the same with LOG_LEVEL=debug adds the stack trace of the cause', async () => {
    const result = await runWarmup(
      ['migrate'],
      { ...SECRET, WARMUP_DATA_DIR: readOnlyDir, LOG_LEVEL: 'debug' },
      60_000,
      UNPRIVILEGED,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^warmup: the data folder /);
    expect(result.stderr).toMatch(/\n\w*Error: .*\n\s+at /);
  });

  it('a PostgreSQL server that does not answer: names the URL without its password', async () => {
    const port = await freePort();
    const result = await runWarmup(['migrate'], {
      ...SECRET,
      DATABASE_URL: `postgres://warmup:hunter2@127.0.0.1:${port}/warmup`,
    });
    expectOneLine(result, new RegExp(`cannot reach PostgreSQL at postgres://warmup@127\\.0\\.0\\.1:${port}/warmup`));
    expect(result.stderr).not.toContain('hunter2');
  });

  // Under CI a missing TEST_DATABASE_URL fails this test instead of skipping it.
  describe.runIf(process.env.TEST_DATABASE_URL || process.env.CI === 'true')('with a PostgreSQL server', () => {
    it('a database that does not exist: names it and how to create it', async () => {
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.pathname = '/warmup_missing_database';
      const result = await runWarmup(['migrate'], { ...SECRET, DATABASE_URL: url.toString() });
      expectOneLine(result, /the PostgreSQL database "warmup_missing_database" does not exist .*createdb/);
    });
  });

  it('a port in use: names host and port and how to pick another', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-port-'));
    try {
      const result = await runWarmup(['serve', '--no-engine'], {
        ...SECRET,
        WARMUP_DATA_DIR: dataDir,
        PORT: String(busyPort),
        LOG_LEVEL: 'info',
      });
      expectOneLine(result, new RegExp(`port ${busyPort} on 127\\.0\\.0\\.1 is already in use: .*set PORT`));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
