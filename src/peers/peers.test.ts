// The peer protocol's door and the operator's admin API, on one installation (A, at
// https://a.example). The other installation is B, whose key the test holds; B's server is a
// plain HTTP server on loopback that records what A sends it and answers as an installation that
// has not added A yet. The attacker's requests come first: each is refused with problem+json and
// leaves the peer, and every other table, as it was.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { signedPeerRequest, type SignOptions } from '../../test/helpers/signed-peer-request.js';
import {
  contentDigest,
  parseSignature,
  parseSignatureInput,
  publicKeyFromText,
  rawPublicKey,
  verifyMessage,
} from './http-signatures.js';
import { createPeersService } from './peers.service.js';
import type { Peer } from './peers.schemas.js';
import { TEST_SECRET_KEY } from '../../test/helpers/test-app.js';

const ORIGIN = 'https://a.example';
const OFFER = { domains: ['a.test'], mailboxes: 2, dailyCeiling: 30 };

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let t: TestApp;
let owner: TestPerson;
let standIn: http.Server;
let standInUrl: string;
const received: Received[] = [];
const b = generateKeyPairSync('ed25519');
const bKey = rawPublicKey(b.publicKey).toString('base64url');
let peer: Peer;

function signed(options: SignOptions) {
  return signedPeerRequest(ORIGIN, { privateKey: b.privateKey, keyId: bKey }, options);
}

const hello = (url = standInUrl) => JSON.stringify({ url });

async function peerRow() {
  return t.database.db.selectFrom('peers').selectAll().where('id', '=', peer.id).executeTakeFirstOrThrow();
}

async function expectUnchanged(res: LightMyRequestResponse, status: number, code: string) {
  const before = await peerRow();
  expectProblem(res, status, code);
  expect(await peerRow()).toEqual(before);
}

beforeAll(async () => {
  standIn = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(401, { 'content-type': 'application/problem+json' });
      response.end(JSON.stringify({ type: 'about:blank', status: 401, code: 'unknown_key', title: 'x', detail: 'x' }));
    });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  t = await createTestApp({ oauth: { publicUrl: ORIGIN, providers: {} }, peersOnLoopback: true });
  owner = await createPerson(t, t.workspace.id, 'owner');
});

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => standIn.close(() => resolve()));
});

describe('the installation identity', () => {
  it('is made on first use, shown as 43 base64url characters with a fingerprint, and stays the same', async () => {
    const first = await owner.request({ method: 'GET', url: '/api/peers/identity' });
    expect(first.statusCode, first.body).toBe(200);
    const identity = first.json<{ publicKey: string; fingerprint: string }>();
    expect(identity.publicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(identity.fingerprint).toMatch(/^[0-9a-f]{4}(-[0-9a-f]{4}){3}$/);
    expect((await owner.request({ method: 'GET', url: '/api/peers/identity' })).json()).toEqual(identity);
    // another process on the same database reads the same key
    const other = createPeersService({
      db: t.database.db,
      clock: t.clock,
      secretKey: Buffer.from(TEST_SECRET_KEY, 'hex'),
    });
    expect(await other.identity()).toEqual(identity);
  });

  it('keeps its private key encrypted with the secret key, and never shows it', async () => {
    const row = await t.database.db.selectFrom('peer_identity').selectAll().executeTakeFirstOrThrow();
    expect(row.private_key).toMatch(/^v1:/);
    const wrongKey = createPeersService({ db: t.database.db, clock: t.clock, secretKey: Buffer.alloc(32, 7) });
    await expect(wrongKey.identity()).rejects.toThrow(/cannot be decrypted/);
    const answer = await owner.request({ method: 'GET', url: '/api/peers/identity' });
    expect(Object.keys(answer.json<object>()).sort()).toEqual(['fingerprint', 'publicKey']);
  });
});

describe("the admin API is the installation owner's alone", () => {
  it("refuses a workspace's owner who did not set the installation up, and any API key", async () => {
    const otherOwner = await createPerson(t, t.workspace.id, 'owner');
    for (const url of ['/api/peers', '/api/peers/identity'])
      expectProblem(await otherOwner.request({ method: 'GET', url }), 403, 'installation_owner_only');
    expectProblem(
      await otherOwner.request({
        method: 'POST',
        url: '/api/peers',
        payload: { url: standInUrl, publicKey: bKey, offer: OFFER },
      }),
      403,
      'installation_owner_only',
    );
    expectProblem(await t.workspace.request({ method: 'GET', url: '/api/peers' }), 403, 'forbidden');
    expect(await t.database.db.selectFrom('peers').selectAll().execute()).toEqual([]);
  });
});

describe('adding a peer', () => {
  it.each([
    ['plain http to a public host', { url: 'http://b.example' }, '/body/url'],
    ['a path', { url: 'https://b.example/warmup' }, '/body/url'],
    ['a user in the URL', { url: 'https://u:p@b.example' }, '/body/url'],
    ['a private network address', { url: 'https://10.0.0.7' }, '/body/url'],
    ['the metadata address', { url: 'https://169.254.169.254' }, '/body/url'],
    ['a key that is no key', { publicKey: 'A'.repeat(42) }, '/body/publicKey'],
    ['a domain with a wildcard', { offer: { ...OFFER, domains: ['%.test'] } }, '/body/offer/domains/0'],
  ])('refuses %s and stores nothing', async (_case, change, path) => {
    const res = await owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: 'https://b.example', publicKey: bKey, offer: OFFER, ...change },
    });
    expectProblem(res, 400, 'validation_error', path);
    expect(await t.database.db.selectFrom('peers').selectAll().execute()).toEqual([]);
  });

  it('refuses our own key', async () => {
    const { publicKey } = await t.services.peers.identity();
    const res = await owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: standInUrl, publicKey, offer: OFFER },
    });
    expectProblem(res, 400, 'validation_error', '/body/publicKey');
  });

  it('stores it pending and greets it with a hello signed by our key, which the peer can verify', async () => {
    const res = await owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: `${standInUrl}/`, publicKey: bKey, offer: OFFER },
    });
    expect(res.statusCode, res.body).toBe(201);
    peer = res.json<{ peer: Peer }>().peer;
    expect(peer).toMatchObject({
      url: standInUrl,
      publicKey: bKey,
      state: 'pending',
      offer: OFFER,
      handshakeAt: null,
      lastError: 'the peer answered 401 (unknown_key)',
    });

    expect(received).toHaveLength(1);
    const [sent] = received;
    expect(sent).toMatchObject({ method: 'POST', url: '/peer/v1/hello', body: JSON.stringify({ url: ORIGIN }) });
    expect(sent!.headers['content-digest']).toBe(contentDigest(sent!.body));
    const input = parseSignatureInput(String(sent!.headers['signature-input']));
    expect(input.components).toEqual(['@method', '@target-uri', 'content-digest']);
    const params = new Map(input.params);
    const { publicKey } = await t.services.peers.identity();
    expect(params.get('keyid')).toBe(publicKey);
    expect(params.get('alg')).toBe('ed25519');
    expect(Number(params.get('expires')) - Number(params.get('created'))).toBe(60);
    const verified = verifyMessage(
      {
        method: 'POST',
        targetUri: `${standInUrl}/peer/v1/hello`,
        headers: { 'content-digest': String(sent!.headers['content-digest']) },
      },
      input,
      parseSignature(String(sent!.headers.signature), input.label),
      publicKeyFromText(publicKey)!,
    );
    expect(verified).toBe(true);
  });

  it('refuses the same key twice', async () => {
    const res = await owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: standInUrl, publicKey: bKey, offer: OFFER },
    });
    expectProblem(res, 409, 'conflict', '/body/publicKey');
    expect(await t.database.db.selectFrom('peers').selectAll().execute()).toHaveLength(1);
  });
});

describe("the attacker's requests are refused and change nothing", () => {
  it('an unsigned request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/peer/v1/hello',
      headers: { 'content-type': 'application/json' },
      payload: hello(),
    });
    await expectUnchanged(res, 401, 'signature_required');
  });

  it('a request signed with a key nobody added', async () => {
    const stranger = generateKeyPairSync('ed25519');
    const res = await t.app.inject(
      signed({
        path: '/peer/v1/hello',
        body: hello(),
        privateKey: stranger.privateKey,
        keyId: rawPublicKey(stranger.publicKey).toString('base64url'),
      }),
    );
    await expectUnchanged(res, 401, 'unknown_key');
  });

  it("a forgery: the peer's key named, another key's signature", async () => {
    const forger = generateKeyPairSync('ed25519');
    const res = await t.app.inject(signed({ path: '/peer/v1/hello', body: hello(), privateKey: forger.privateKey }));
    await expectUnchanged(res, 401, 'signature_invalid');
  });

  it('a tampered body (its digest no longer matches)', async () => {
    const res = await t.app.inject(
      signed({ path: '/peer/v1/hello', body: hello('https://evil.example'), signedBody: hello() }),
    );
    await expectUnchanged(res, 401, 'signature_invalid');
  });

  it('a tampered body with a digest made for it (the signature covers the digest)', async () => {
    const request = signed({ path: '/peer/v1/hello', body: hello() });
    const tampered = hello('https://evil.example');
    request.headers['content-digest'] = contentDigest(tampered);
    const res = await t.app.inject({ ...request, payload: tampered });
    await expectUnchanged(res, 401, 'signature_invalid');
  });

  it('a tampered path', async () => {
    const res = await t.app.inject(
      signed({ path: '/peer/v1/hello', signedPath: '/peer/v1/hello?for=another', body: hello() }),
    );
    await expectUnchanged(res, 401, 'signature_invalid');
  });

  it('a signature that leaves out a required component', async () => {
    const res = await t.app.inject(
      signed({ path: '/peer/v1/hello', body: hello(), components: ['@method', '@target-uri'] }),
    );
    await expectUnchanged(res, 401, 'signature_malformed');
  });

  it('a signature without a nonce, or with another algorithm', async () => {
    const withoutNonce = signed({
      path: '/peer/v1/hello',
      body: hello(),
      params: (created) => [
        ['created', created],
        ['expires', created + 60],
        ['keyid', bKey],
        ['alg', 'ed25519'],
      ],
    });
    await expectUnchanged(await t.app.inject(withoutNonce), 401, 'signature_malformed');
    const otherAlg = signed({
      path: '/peer/v1/hello',
      body: hello(),
      params: (created) => [
        ['created', created],
        ['expires', created + 60],
        ['nonce', randomBytes(16).toString('base64url')],
        ['keyid', bKey],
        ['alg', 'rsa-pss-sha512'],
      ],
    });
    await expectUnchanged(await t.app.inject(otherAlg), 401, 'signature_malformed');
  });

  it('a signature made too long ago, one from the future, and one past its expiry', async () => {
    await expectUnchanged(
      await t.app.inject(signed({ path: '/peer/v1/hello', body: hello(), createdOffsetS: -301 })),
      401,
      'signature_expired',
    );
    await expectUnchanged(
      await t.app.inject(signed({ path: '/peer/v1/hello', body: hello(), createdOffsetS: 31 })),
      401,
      'signature_expired',
    );
    await expectUnchanged(
      await t.app.inject(signed({ path: '/peer/v1/hello', body: hello(), createdOffsetS: -61 })),
      401,
      'signature_expired',
    );
  });

  it('an oversized body, refused before it is read whole', async () => {
    const big = JSON.stringify({ url: standInUrl, padding: 'x'.repeat(17 * 1024) });
    await expectUnchanged(await t.app.inject(signed({ path: '/peer/v1/hello', body: big })), 413, 'payload_too_large');
  });

  it('a signed body that is not a hello', async () => {
    const odd = JSON.stringify({ url: standInUrl, state: 'active' });
    await expectUnchanged(await t.app.inject(signed({ path: '/peer/v1/hello', body: odd })), 400, 'validation_error');
  });

  it('a hello from the right key naming another URL', async () => {
    const res = await t.app.inject(signed({ path: '/peer/v1/hello', body: hello('https://b.example') }));
    await expectUnchanged(res, 403, 'peer_url_mismatch');
  });

  it('an offer asked for before the peering is active', async () => {
    const res = await t.app.inject(signed({ method: 'GET', path: '/peer/v1/offer' }));
    await expectUnchanged(res, 403, 'peer_pending');
  });
});

describe('the handshake and the offer', () => {
  it("activates the peer on B's signed hello, and refuses the same request replayed", async () => {
    const request = signed({ path: '/peer/v1/hello', body: hello() });
    const res = await t.app.inject(request);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ state: 'active' });
    const row = await peerRow();
    expect(row.state).toBe('active');
    expect(row.handshake_at).not.toBeNull();
    expect(row.last_error).toBeNull();
    await expectUnchanged(await t.app.inject(request), 401, 'signature_replayed');
  });

  it('offers only the active, proven mailboxes of the offered domains, up to the number offered, and nothing else', async () => {
    const warmup = (dailyLimit: number) =>
      JSON.stringify({
        dailyLimit,
        startVolume: 2,
        rampUpIncrement: 2,
        replyRate: 30,
        sendWindow: { start: '08:00', end: '17:00' },
        timezone: 'Europe/Berlin',
        weekdaysOnly: true,
        language: 'en',
      });
    const mailbox = (id: string, email: string, status: 'active' | 'paused', proven: boolean, dailyLimit = 40) => ({
      id,
      workspace_id: t.workspace.id,
      email,
      email_normalized: email.toLowerCase(),
      provider: 'custom' as const,
      connection_type: 'imap' as const,
      status,
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'v1:secret',
      warmup: warmup(dailyLimit),
      proven_at: proven ? '2026-01-01T00:00:00.000Z' : null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    await t.database.db
      .insertInto('mailboxes')
      .values([
        mailbox('mbx_p1', 'Ann@A.test', 'active', true, 25),
        mailbox('mbx_p2', 'bob@a.test', 'active', true),
        mailbox('mbx_p3', 'cy@a.test', 'active', true), // past the two offered
        mailbox('mbx_p4', 'aa@a.test', 'paused', true),
        mailbox('mbx_p5', 'ab@a.test', 'active', false),
        mailbox('mbx_p6', 'ac@other.test', 'active', true),
        mailbox('mbx_p7', 'ad@xa.test', 'active', true),
      ])
      .execute();
    const res = await t.app.inject(signed({ method: 'GET', path: '/peer/v1/offer' }));
    expect(res.statusCode, res.body).toBe(200);
    const window = { start: '08:00', end: '17:00' };
    expect(res.json()).toEqual({
      mailboxes: [
        { address: 'Ann@A.test', dailyVolume: 25, window, timezone: 'Europe/Berlin', weekdaysOnly: true },
        { address: 'bob@a.test', dailyVolume: 40, window, timezone: 'Europe/Berlin', weekdaysOnly: true },
      ],
      dailyCeiling: 30,
    });
    expect(res.body).not.toContain('secret');
  });
});

describe('pausing and removing', () => {
  it("refuses a paused peer's requests at once, and a resumed one asks again", async () => {
    const paused = await owner.request({ method: 'POST', url: `/api/peers/${peer.id}/pause` });
    expect(paused.statusCode, paused.body).toBe(200);
    expect(paused.json<{ peer: Peer }>().peer.state).toBe('paused');
    await expectUnchanged(await t.app.inject(signed({ method: 'GET', path: '/peer/v1/offer' })), 403, 'peer_paused');
    await expectUnchanged(await t.app.inject(signed({ path: '/peer/v1/hello', body: hello() })), 403, 'peer_paused');

    const before = received.length;
    const resumed = await owner.request({ method: 'POST', url: `/api/peers/${peer.id}/resume` });
    expect(resumed.json<{ peer: Peer }>().peer).toMatchObject({
      state: 'pending',
      lastError: 'the peer answered 401 (unknown_key)',
    });
    expect(received).toHaveLength(before + 1);
  });

  it("refuses a removed peer's requests at once and lists it no more; added again, it is pending", async () => {
    const removed = await owner.request({ method: 'DELETE', url: `/api/peers/${peer.id}` });
    expect(removed.statusCode, removed.body).toBe(204);
    await expectUnchanged(await t.app.inject(signed({ path: '/peer/v1/hello', body: hello() })), 403, 'peer_removed');
    expect((await owner.request({ method: 'GET', url: '/api/peers' })).json()).toEqual({ peers: [] });
    expectProblem(await owner.request({ method: 'POST', url: `/api/peers/${peer.id}/pause` }), 404, 'not_found');

    const again = await owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: standInUrl, publicKey: bKey, offer: OFFER },
    });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json<{ peer: Peer }>().peer).toMatchObject({ id: peer.id, state: 'pending' });
  });
});

describe('the door is rate limited per client address', () => {
  it('answers 429 past the limit, before reading the signature', async () => {
    const limited = await createTestApp({ oauth: { publicUrl: ORIGIN, providers: {} }, peerRequestsPerMinute: 3 });
    try {
      const ask = () => limited.app.inject({ method: 'GET', url: '/peer/v1/offer', remoteAddress: '203.0.113.9' });
      for (let i = 0; i < 3; i++) expectProblem(await ask(), 401, 'signature_required');
      expectProblem(await ask(), 429, 'rate_limited');
      // another address is not held up by the first
      expectProblem(
        await limited.app.inject({ method: 'GET', url: '/peer/v1/offer', remoteAddress: '198.51.100.4' }),
        401,
        'signature_required',
      );
    } finally {
      await limited.close();
    }
  });
});
