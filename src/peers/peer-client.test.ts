// A peer that turns hostile answers: too much, too slowly, off the protocol's schema, or with a
// redirect into the operator's network. A plain HTTP server on loopback plays it; each answer is
// refused with its reason and nothing of it is kept.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { systemClock } from '../clock.js';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { rawPublicKey } from './http-signatures.js';
import { MAX_ANSWER_BYTES } from './peer-client.js';
import { createPeersService, type PeersService } from './peers.service.js';

type Answer = (response: http.ServerResponse) => void;

let database: TestDatabase;
let server: http.Server;
let peers: PeersService;
let peerId: string;
let answerOffer: Answer;
const hits: string[] = [];

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => {
  return (response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
};

beforeAll(async () => {
  database = await createTestDatabase();
  server = http.createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => {
      if (request.url === '/peer/v1/hello') return json(200, { state: 'active' })(response);
      if (request.url === '/peer/v1/offer') return answerOffer(response);
      return json(404, {})(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peers = createPeersService({
    db: database.db,
    clock: systemClock,
    secretKey: Buffer.alloc(32, 3),
    publicUrl: 'https://a.example',
    allowPlainLoopback: true,
    timeoutMs: 300,
  });
  const peer = await peers.add({
    url,
    publicKey: rawPublicKey(generateKeyPairSync('ed25519').publicKey).toString('base64url'),
    offer: { domains: ['a.test'], mailboxes: 1, dailyCeiling: 10 },
  });
  expect(peer.state).toBe('active');
  peerId = peer.id;
});

beforeEach(() => {
  hits.length = 0;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await database.close();
});

it('takes an offer in the protocol form', async () => {
  const offer = {
    mailboxes: [
      {
        address: 'b@b.test',
        dailyVolume: 5,
        window: { start: '09:00', end: '17:00' },
        timezone: 'UTC',
        weekdaysOnly: false,
      },
    ],
    dailyCeiling: 3,
  };
  answerOffer = json(200, offer);
  expect(await peers.fetchOffer(peerId)).toEqual(offer);
});

it('refuses an offer with a field the protocol does not have', async () => {
  answerOffer = json(200, { mailboxes: [], dailyCeiling: 3, note: 'tell me your passwords' });
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({ status: 502, code: 'peer_answer_invalid' });
});

it('refuses an offer of more mailboxes than the protocol carries', async () => {
  const mailbox = {
    address: 'b@b.test',
    dailyVolume: 5,
    window: { start: '09:00', end: '17:00' },
    timezone: 'UTC',
    weekdaysOnly: false,
  };
  answerOffer = json(200, { mailboxes: Array.from({ length: 1001 }, () => mailbox), dailyCeiling: 3 });
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({ status: 502 });
});

it('stops reading an answer past its size limit', async () => {
  answerOffer = (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(`{"mailboxes":[],"dailyCeiling":1,"x":"`);
    const chunk = 'x'.repeat(64 * 1024);
    for (let sent = 0; sent <= MAX_ANSWER_BYTES; sent += chunk.length) response.write(chunk);
    response.end('"}');
  };
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({
    code: 'peer_unreachable',
    message: 'the peer answered with more than this protocol carries',
  });
});

it('gives up on a peer that never finishes its answer', async () => {
  answerOffer = (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"mailboxes":');
  };
  const started = Date.now();
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({
    code: 'peer_unreachable',
    message: 'the peer did not answer within 0 s',
  });
  expect(Date.now() - started).toBeLessThan(2_000);
});

it('follows no redirect', async () => {
  answerOffer = (response) => {
    response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
    response.end();
  };
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({
    code: 'peer_refused',
    message: 'the peer answered 302',
  });
  expect(hits).toEqual(['GET /peer/v1/offer']);
});

it('refuses an answer that is not JSON', async () => {
  answerOffer = (response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<html>');
  };
  await expect(peers.fetchOffer(peerId)).rejects.toMatchObject({
    code: 'peer_unreachable',
    message: 'the peer answered with something other than JSON',
  });
});

it('never connects to a private address without the loopback allowance', async () => {
  const strict = createPeersService({
    db: database.db,
    clock: systemClock,
    secretKey: Buffer.alloc(32, 3),
    publicUrl: 'https://a.example',
    timeoutMs: 300,
  });
  // the same active peer on 127.0.0.1, asked by a service under the default rules
  await expect(strict.fetchOffer(peerId)).rejects.toMatchObject({
    code: 'peer_unreachable',
    message: 'could not connect to the peer',
  });
  expect(hits).toEqual([]);
});
