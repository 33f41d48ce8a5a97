// The network edge of webhook delivery: what a stored endpoint may reach is decided at every
// delivery, by the operator's rules as they are now, whether the URL names a host or an address.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAIL_POLICY, loadMailPolicy } from '../mail/policy.js';
import { postWebhook } from './webhook-http.js';

describe('posting a webhook', () => {
  let server: http.Server;
  let received = 0;
  let port = 0;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      received += 1;
      request.resume();
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (url: string) => ({ url, body: '{}', headers: {} });

  it('reaches a loopback address the operator allows', async () => {
    const policy = loadMailPolicy({ allowedHosts: ['127.0.0.1'], plaintextHosts: [] });
    const answer = await postWebhook(post(`http://127.0.0.1:${port}/hook`), { policy, timeoutMs: 5_000 });
    expect(answer).toEqual({ statusCode: 200, error: null });
  });

  it('refuses an internal address written as such once the operator no longer allows it, sending nothing', async () => {
    // Node looks up host names only: an address in the URL must be checked before connecting
    const before = received;
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
      const answer = await postWebhook(post(`http://${host}:${port}/hook`), {
        policy: DEFAULT_MAIL_POLICY,
        timeoutMs: 5_000,
      });
      expect(answer).toEqual({ statusCode: null, error: 'could not connect to the endpoint' });
    }
    expect(received).toBe(before);
  });

  it('refuses an internal host name the operator does not allow, sending nothing', async () => {
    const before = received;
    const answer = await postWebhook(post(`http://localhost:${port}/hook`), {
      policy: DEFAULT_MAIL_POLICY,
      timeoutMs: 5_000,
    });
    expect(answer).toEqual({ statusCode: null, error: 'could not connect to the endpoint' });
    expect(received).toBe(before);
  });
});
