// Per-request log lines: one per request, at `debug`, so `info` stays readable under load; a
// failed or slow request is still logged at `info`.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

function capture(level: string): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level }, stream);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

let testApp: TestApp | undefined;
afterEach(async () => {
  await testApp?.close();
  testApp = undefined;
});

describe('request logging', () => {
  it('at info, an ordinary request writes nothing', async () => {
    const log = capture('info');
    testApp = await createTestApp({ logger: log.logger });
    const res = await testApp.workspace.request({ method: 'GET', url: '/api/templates' });
    expect(res.statusCode).toBe(200);
    expect(log.lines()).toEqual([]);
  });

  it('at debug, each request is one line with method, path, status and time, without the key', async () => {
    const log = capture('debug');
    testApp = await createTestApp({ logger: log.logger });
    await testApp.workspace.request({ method: 'GET', url: '/api/templates?limit=5' });
    const lines = log.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 20, msg: expect.stringMatching(/^GET \/api\/templates 200 in \d+ ms$/) });
    expect(JSON.stringify(lines)).not.toContain(testApp.workspace.apiKey);
  });

  it('a slow request is logged at info', async () => {
    const log = capture('info');
    testApp = await createTestApp({ logger: log.logger, slowRequestMs: 0 });
    await testApp.workspace.request({ method: 'GET', url: '/api/templates' });
    expect(log.lines()).toEqual([
      expect.objectContaining({ level: 30, responseTime: expect.any(Number), res: { statusCode: 200 } }),
    ]);
  });
});
