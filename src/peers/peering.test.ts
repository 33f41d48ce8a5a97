// Two installations on loopback, each its own app, database and key, listening on its own port:
// their owners add each other, the second addition's handshake turns both sides active at once,
// each reads what the other offers, and a pause or a removal on one side refuses the other's
// requests from that moment.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { closedPort } from '../../test/helpers/ports.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { testEngineDeps } from '../../test/helpers/engine.js';
import { createEngine, runOnce } from '../jobs/job-list.js';
import type { Peer } from './peers.schemas.js';

interface Installation {
  t: TestApp;
  url: string;
  owner: TestPerson;
  listen(): Promise<void>;
}

const installations: Installation[] = [];

async function startInstallation({ listening = true } = {}): Promise<Installation> {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  const t = await createTestApp({ oauth: { publicUrl: url, providers: {} }, peersOnLoopback: true });
  const listen = async () => {
    await t.app.listen({ host: '127.0.0.1', port });
  };
  if (listening) await listen();
  const owner = await createPerson(t, t.workspace.id, 'owner');
  const installation = { t, url, owner, listen };
  installations.push(installation);
  return installation;
}

async function addMailbox(t: TestApp, id: string, email: string): Promise<void> {
  await t.database.db
    .insertInto('mailboxes')
    .values({
      id,
      workspace_id: t.workspace.id,
      email,
      email_normalized: email,
      provider: 'custom',
      connection_type: 'imap',
      status: 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'v1:never-leaves',
      warmup: JSON.stringify({
        dailyLimit: 20,
        sendWindow: { start: '09:00', end: '16:00' },
        timezone: 'UTC',
        weekdaysOnly: false,
      }),
      proven_at: '2026-01-01T00:00:00.000Z',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    })
    .execute();
}

async function add(from: Installation, to: Installation, domain: string): Promise<Peer> {
  const { publicKey } = await to.t.services.peers.identity();
  const res = await from.owner.request({
    method: 'POST',
    url: '/api/peers',
    payload: { url: to.url, publicKey, offer: { domains: [domain], mailboxes: 5, dailyCeiling: 40 } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ peer: Peer }>().peer;
}

async function peersOf(installation: Installation): Promise<Peer[]> {
  return (await installation.owner.request({ method: 'GET', url: '/api/peers' })).json<{ peers: Peer[] }>().peers;
}

let a: Installation;
let b: Installation;

beforeAll(async () => {
  a = await startInstallation();
  b = await startInstallation();
  await addMailbox(a.t, 'mbx_a', 'ann@a.test');
  await addMailbox(b.t, 'mbx_b', 'ben@b.test');
});

afterAll(async () => {
  for (const { t } of installations) await t.close();
});

it('two installations that add each other become active on both sides, and each reads the other offer', async () => {
  const bOnA = await add(a, b, 'a.test');
  // B has not added A yet: its door refuses A's key, so A waits
  expect(bOnA).toMatchObject({ state: 'pending', lastError: 'the peer answered 401 (unknown_key)' });

  const aOnB = await add(b, a, 'b.test');
  // B's hello reached A, which knew B's key: both sides turned active in that one exchange
  expect(aOnB).toMatchObject({ state: 'active', lastError: null });
  expect((await peersOf(a)).map((p) => [p.id, p.state, p.lastError])).toEqual([[bOnA.id, 'active', null]]);

  expect(await a.t.services.peers.fetchOffer(bOnA.id)).toEqual({
    mailboxes: [
      {
        address: 'ben@b.test',
        dailyVolume: 20,
        window: { start: '09:00', end: '16:00' },
        timezone: 'UTC',
        weekdaysOnly: false,
      },
    ],
    dailyCeiling: 40,
  });
  expect((await b.t.services.peers.fetchOffer(aOnB.id)).mailboxes.map((m) => m.address)).toEqual(['ann@a.test']);
});

it("one side's pause refuses the other's requests at once; resumed, both are active again", async () => {
  const [bOnA] = await peersOf(a);
  const [aOnB] = await peersOf(b);
  const paused = await a.owner.request({ method: 'POST', url: `/api/peers/${bOnA!.id}/pause` });
  expect(paused.json<{ peer: Peer }>().peer.state).toBe('paused');
  await expect(b.t.services.peers.fetchOffer(aOnB!.id)).rejects.toMatchObject({
    status: 502,
    code: 'peer_refused',
    message: 'the peer answered 403',
  });
  // and A, having paused, asks nothing of B
  await expect(a.t.services.peers.fetchOffer(bOnA!.id)).rejects.toMatchObject({ status: 409 });

  const resumed = await a.owner.request({ method: 'POST', url: `/api/peers/${bOnA!.id}/resume` });
  expect(resumed.json<{ peer: Peer }>().peer).toMatchObject({ state: 'active', lastError: null });
  expect((await b.t.services.peers.fetchOffer(aOnB!.id)).mailboxes).toHaveLength(1);
});

it("one side's removal refuses the other's requests at once", async () => {
  const [bOnA] = await peersOf(a);
  const [aOnB] = await peersOf(b);
  const removed = await a.owner.request({ method: 'DELETE', url: `/api/peers/${bOnA!.id}` });
  expect(removed.statusCode, removed.body).toBe(204);
  await expect(b.t.services.peers.fetchOffer(aOnB!.id)).rejects.toMatchObject({
    code: 'peer_refused',
    message: 'the peer answered 403',
  });
  expect(await peersOf(a)).toEqual([]);
});

it('a hello lost while the peer was down is sent again by the peerHandshakes job, and both turn active', async () => {
  const c = await startInstallation({ listening: false });
  // C adds A first: A does not know C yet
  const aOnC = await add(c, a, 'c.test');
  expect(aOnC.state).toBe('pending');
  // A adds C while C is down: A's hello, which would have made both active, is lost
  const cOnA = await add(a, c, 'a.test');
  expect(cOnA).toMatchObject({ state: 'pending', lastError: 'could not connect to the peer' });

  await c.listen();
  const summary = await runOnce(
    createEngine(testEngineDeps(a.t, { workerId: 'w-peers' }), { peers: a.t.services.peers }),
    {
      ignoreSchedule: false,
    },
  );
  expect(summary.peerHandshakes).toEqual({ greeted: 1, activated: 1 });
  expect((await peersOf(a)).find((p) => p.id === cOnA.id)).toMatchObject({ state: 'active', lastError: null });
  expect((await peersOf(c)).map((p) => p.state)).toEqual(['active']);
  // nothing pending: the next pass greets nobody
  const again = await runOnce(
    createEngine(testEngineDeps(a.t, { workerId: 'w-peers-2' }), { peers: a.t.services.peers }),
    {
      ignoreSchedule: false,
    },
  );
  expect(again.peerHandshakes).toEqual({ greeted: 0, activated: 0 });
});
