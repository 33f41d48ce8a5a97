// What `warmup serve` writes: readable lines for a person at a terminal, JSON lines for a log
// collector, and the same secrets hidden in both.
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startWarmup, type RunningProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const BOOTSTRAP_KEY = 'bootstrap-key-for-log-tests-0123456789abcdef';

let database: TestDatabase | undefined;
let server: RunningProcess | undefined;

afterEach(async () => {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
  await database?.close();
  database = undefined;
});

/** Serves with the given log settings, sends one authenticated request, and returns the output lines. */
async function serveAndRequest(logEnv: Record<string, string>): Promise<{ lines: string[]; port: number }> {
  database = await createTestDatabase();
  const port = await freePort();
  server = await startWarmup(
    ['serve', '--no-engine'],
    {
      ...database.env,
      PORT: String(port),
      WARMUP_SECRET_KEY: 'c'.repeat(64),
      WARMUP_API_KEY: BOOTSTRAP_KEY,
      LOG_LEVEL: 'debug',
      ...logEnv,
    },
    /Warmup is serving/,
  );
  const res = await fetch(`http://127.0.0.1:${port}/api/workspace`, {
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` },
  });
  expect(res.status).toBe(200);
  // the request line is written after the answer
  for (let i = 0; i < 50 && !/workspace/.test(server.output().split('Warmup is serving')[1] ?? ''); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { lines: server.output().split('\n').filter(Boolean), port };
}

describe('log lines', () => {
  it('LOG_FORMAT=pretty: one readable line per event, with time, level and message, secrets hidden', async () => {
    const { lines, port } = await serveAndRequest({ LOG_FORMAT: 'pretty' });
    const serving = lines.find((line) => line.includes('Warmup is serving'));
    expect(serving).toMatch(
      new RegExp(
        `^\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\] INFO: Warmup is serving on http://127\\.0\\.0\\.1:${port}`,
      ),
    );
    expect(
      lines.filter((line) => line.startsWith('{')),
      'no JSON line',
    ).toEqual([]);
    expect(
      lines.some((line) => line.includes('/api/workspace')),
      lines.join('\n'),
    ).toBe(true);
    expect(lines.join('\n')).not.toContain(BOOTSTRAP_KEY);
  });

  it('piped without LOG_FORMAT (a log collector): JSON lines, secrets hidden', async () => {
    const { lines } = await serveAndRequest({});
    const events = lines.map((line) => JSON.parse(line) as { level: number; msg?: string });
    expect(events.some((event) => event.msg?.startsWith('Warmup is serving'))).toBe(true);
    expect(lines.some((line) => line.includes('/api/workspace'))).toBe(true);
    expect(lines.join('\n')).not.toContain(BOOTSTRAP_KEY);
  });
});
