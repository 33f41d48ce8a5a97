// `warmup peer`: the operator's peering commands against a real database, as a headless
// installation runs them. The peer named here is unreachable (a .invalid host never resolves),
// so it stays pending with the reason; the refusals print one line and store nothing.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawPublicKey } from '../../src/peers/http-signatures.js';
import { runWarmup } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let database: TestDatabase;
let env: Record<string, string>;
const peerKey = rawPublicKey(generateKeyPairSync('ed25519').publicKey).toString('base64url');

beforeAll(async () => {
  database = await createTestDatabase();
  env = { ...database.env, WARMUP_SECRET_KEY: 'b'.repeat(64), WARMUP_PUBLIC_URL: 'https://a.example' };
});

afterAll(async () => {
  await database?.close();
});

async function warmup(...args: string[]) {
  const result = await runWarmup(['peer', ...args], env);
  return { ...result, json: result.code === 0 ? JSON.parse(result.stdout) : undefined };
}

it('prints the same public key every time, made once and stored encrypted', async () => {
  const first = await warmup('key');
  expect(first.code, first.stderr).toBe(0);
  expect(first.json).toEqual({
    publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    fingerprint: expect.any(String),
  });
  expect((await warmup('key')).json).toEqual(first.json);
  const row = await database.db.selectFrom('peer_identity').selectAll().executeTakeFirstOrThrow();
  expect(row.private_key).toMatch(/^v1:/);
});

it('refuses a bad peer in one line on stderr and stores nothing', async () => {
  const badKey = await warmup(
    'add',
    'https://peer.invalid',
    'not-a-key',
    '--domain',
    'a.test',
    '--mailboxes',
    '2',
    '--daily-ceiling',
    '10',
  );
  expect(badKey.code).toBe(2);
  expect(badKey.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^warmup: \/publicKey: /)]);
  const plainHttp = await warmup(
    'add',
    'http://peer.invalid',
    peerKey,
    '--domain',
    'a.test',
    '--mailboxes',
    '2',
    '--daily-ceiling',
    '10',
  );
  expect(plainHttp.code).toBe(2);
  expect(plainHttp.stderr).toMatch(/^warmup: url: must use https/);
  expect(await database.db.selectFrom('peers').selectAll().execute()).toEqual([]);
});

it('adds, lists, pauses, resumes and removes a peer', async () => {
  const added = await warmup(
    'add',
    'https://peer.invalid',
    peerKey,
    '--domain',
    'a.test',
    '--domain',
    'b.test',
    '--mailboxes',
    '3',
    '--daily-ceiling',
    '25',
  );
  expect(added.code, added.stderr).toBe(0);
  const { peer } = added.json;
  expect(peer).toMatchObject({
    url: 'https://peer.invalid',
    publicKey: peerKey,
    state: 'pending',
    offer: { domains: ['a.test', 'b.test'], mailboxes: 3, dailyCeiling: 25 },
    lastError: 'could not connect to the peer',
  });
  expect((await warmup('list')).json.peers.map((p: { id: string }) => p.id)).toEqual([peer.id]);
  expect((await warmup('pause', peer.id)).json.peer.state).toBe('paused');
  expect((await warmup('resume', peer.id)).json.peer.state).toBe('pending');
  expect((await warmup('remove', peer.id)).json).toEqual({ removed: peer.id });
  expect((await warmup('list')).json).toEqual({ peers: [] });
  const again = await warmup('pause', peer.id);
  expect(again.code).toBe(2);
  expect(again.stderr).toBe(`warmup: no peer ${peer.id}\n`);
});
