// The mail half of the peer protocol at one installation (A, at https://a.example), against a peer
// B whose key the test holds and whose server is a small HTTP stand-in on loopback. The attacker's
// requests come first: unsigned, forged, replayed, oversized or wrong announcements and evidence
// are refused and change nothing; then a peer that goes over the ceiling it was given, or reports
// on mail it was never sent, is paused with the reason; a removed peer's mail stops at once.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { signedPeerRequest, type SignOptions } from '../../test/helpers/signed-peer-request.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { fixedClock } from '../clock.js';
import { FOREIGN_EVIDENCE_BOUND, loadWeighedEvidence } from '../engine/evidence.js';
import { applyHealthGuard } from '../engine/health.js';
import { updateReputation } from '../engine/reputation.js';
import { findDueSenders } from '../engine/warmup-message-claims.repository.js';
import { testEngineDeps } from '../../test/helpers/engine.js';
import { rawPublicKey } from './http-signatures.js';
import type { AnnouncedMessage } from './peer-mail.schemas.js';
import type { Peer } from './peers.schemas.js';

const ORIGIN = 'https://a.example';
const NOW = '2026-05-04T10:00:00.000Z';
/** Mail a day A accepts from B. */
const CEILING = 3;

const b = generateKeyPairSync('ed25519');
const bKey = rawPublicKey(b.publicKey).toString('base64url');
const intruder = generateKeyPairSync('ed25519');
const clock = fixedClock(NOW);
/** The app's log, where an automatic pause is told to the operator. */
const logLines: string[] = [];

let t: TestApp;
let owner: TestPerson;
let bServer: http.Server;
let bUrl: string;
let peer: Peer;
/** What B's server offers A: its addresses, and a ceiling. `ann@a.test` is A's own. */
const bOffer = {
  mailboxes: ['ben@b.test', 'bea@b.test', 'ann@a.test'].map((address) => ({
    address,
    dailyVolume: 5,
    window: { start: '08:00', end: '18:00' },
    timezone: 'UTC',
    weekdaysOnly: false,
  })),
  dailyCeiling: 4,
};

function signed(options: SignOptions) {
  return signedPeerRequest(
    ORIGIN,
    { privateKey: b.privateKey, keyId: bKey },
    { ...options, nowS: Math.floor(clock.now().getTime() / 1000) },
  );
}

function announcement(overrides: Partial<AnnouncedMessage> = {}): AnnouncedMessage {
  return {
    messageId: `<${Math.random().toString(36).slice(2)}@b.test>`,
    from: 'ben@b.test',
    to: 'ann@a.test',
    dueAt: '2026-05-04T11:00:00.000Z',
    turn: 1,
    inReplyTo: null,
    ...overrides,
  };
}

const announce = (messages: AnnouncedMessage[]) =>
  t.app.inject(signed({ path: '/peer/v1/messages', body: JSON.stringify({ messages }) }));

async function expectedMail(): Promise<number> {
  const row = await t.database.db
    .selectFrom('warmup_messages')
    .select(sql<number>`cast(count(*) as integer)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function peerState() {
  return t.database.db
    .selectFrom('peers')
    .select(['state', 'paused_reason'])
    .where('id', '=', peer.id)
    .executeTakeFirstOrThrow();
}

async function resumeB(): Promise<void> {
  const res = await owner.request({ method: 'POST', url: `/api/peers/${peer.id}/resume` });
  expect(res.json<{ peer: Peer }>().peer).toMatchObject({ state: 'active', pausedReason: null });
  await t.services.peerMail.exchange();
}

beforeAll(async () => {
  bServer = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const answer =
        request.url === '/peer/v1/offer'
          ? bOffer
          : request.url === '/peer/v1/hello'
            ? { state: 'active' }
            : request.url === '/peer/v1/messages'
              ? { accepted: 1 }
              : { applied: 0 };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => bServer.listen(0, '127.0.0.1', resolve));
  bUrl = `http://127.0.0.1:${(bServer.address() as AddressInfo).port}`;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  t = await createTestApp({
    clock,
    oauth: { publicUrl: ORIGIN, providers: {} },
    peersOnLoopback: true,
    logger: pino({ level: 'info' }, sink),
  });
  owner = await createPerson(t, t.workspace.id, 'owner');
  await t.database.db
    .insertInto('mailboxes')
    .values({
      id: 'mbx_ann',
      workspace_id: t.workspace.id,
      email: 'ann@a.test',
      email_normalized: 'ann@a.test',
      provider: 'custom',
      connection_type: 'imap',
      status: 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'v1:never-leaves',
      warmup: JSON.stringify({ dailyLimit: 10, timezone: 'UTC' }),
      proven_at: '2026-01-01T00:00:00.000Z',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    })
    .execute();
  const res = await owner.request({
    method: 'POST',
    url: '/api/peers',
    payload: { url: bUrl, publicKey: bKey, offer: { domains: ['a.test'], mailboxes: 5, dailyCeiling: CEILING } },
  });
  peer = res.json<{ peer: Peer }>().peer;
  expect(peer.state).toBe('active');
  // A fetches B's offer: B's addresses become partners here
  await t.services.peerMail.exchange();
});

afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => bServer.close(() => resolve()));
});

describe('the door refuses, and nothing is expected', () => {
  it('an announcement unsigned, signed by a key A never added, or with a body other than the one signed', async () => {
    const body = JSON.stringify({ messages: [announcement()] });
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/peer/v1/messages',
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    expectProblem(unsigned, 401, 'signature_required');
    expectProblem(
      await t.app.inject(
        signed({
          path: '/peer/v1/messages',
          body,
          privateKey: intruder.privateKey,
          keyId: rawPublicKey(intruder.publicKey).toString('base64url'),
        }),
      ),
      401,
      'unknown_key',
    );
    // B's key named, the intruder's signature
    expectProblem(
      await t.app.inject(signed({ path: '/peer/v1/messages', body, privateKey: intruder.privateKey })),
      401,
      'signature_invalid',
    );
    const other = JSON.stringify({ messages: [announcement(), announcement()] });
    expectProblem(
      await t.app.inject(signed({ path: '/peer/v1/messages', body: other, signedBody: body })),
      401,
      'signature_invalid',
    );
    expectProblem(
      await t.app.inject(signed({ path: '/peer/v1/evidence', body, signedPath: '/peer/v1/messages' })),
      401,
      'signature_invalid',
    );
    expect(await expectedMail()).toBe(0);
  });

  it('a replayed announcement: the first is kept, the copy refused', async () => {
    const request = signed({ path: '/peer/v1/messages', body: JSON.stringify({ messages: [announcement()] }) });
    expect((await t.app.inject(request)).statusCode).toBe(200);
    expect(await expectedMail()).toBe(1);
    expectProblem(await t.app.inject(request), 401, 'signature_replayed');
    expect(await expectedMail()).toBe(1);
    await t.database.db.deleteFrom('warmup_messages').execute();
  });

  it('a body over 16 KiB, or one that breaks the schema', async () => {
    const huge = JSON.stringify({ messages: [announcement({ from: `${'x'.repeat(17_000)}@b.test` })] });
    expectProblem(await t.app.inject(signed({ path: '/peer/v1/messages', body: huge })), 413, 'payload_too_large');
    expectProblem(await announce([{ ...announcement(), extra: 'no' } as AnnouncedMessage]), 400, 'validation_error');
    expectProblem(await announce(Array.from({ length: 51 }, () => announcement())), 400, 'validation_error');
    expect(await expectedMail()).toBe(0);
  });

  it.each([
    ['from an address B did not offer', { from: 'eve@b.test' }, '/body/messages/1/from'],
    ['from an address of A that B named in its offer', { from: 'ann@a.test' }, '/body/messages/1/from'],
    ['to an address A does not offer B', { to: 'zoe@a.test' }, '/body/messages/1/to'],
    ['due a week ahead', { dueAt: '2026-05-11T10:00:00.000Z' }, '/body/messages/1/dueAt'],
    [
      'a reply outside any thread of the pair',
      { turn: 2, inReplyTo: '<nothing@a.test>' },
      '/body/messages/1/inReplyTo',
    ],
  ])('a batch with one announcement %s: 400 naming it, and none of the batch kept', async (_, wrong, path) => {
    expectProblem(await announce([announcement(), announcement(wrong)]), 400, 'validation_error', path);
    expect(await expectedMail()).toBe(0);
  });
});

describe('announcements and evidence from a peer in good standing', () => {
  it('an announced message is expected by its recipient once, announced again or not', async () => {
    const message = announcement({ from: 'BEA@b.test' });
    expect((await announce([message])).json()).toEqual({ accepted: 1 });
    expect((await announce([message])).json()).toEqual({ accepted: 1 });
    const rows = await t.database.db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
      .select(['w.message_id', 'w.status', 'w.recipient_mailbox_id', 's.email', 's.status as sender_status'])
      .execute();
    // the reader looks for it in ann's mailbox, by its Message-ID, as for local mail
    expect(rows).toEqual([
      {
        message_id: message.messageId,
        status: 'sent',
        recipient_mailbox_id: 'mbx_ann',
        email: 'bea@b.test',
        sender_status: 'peer',
      },
    ]);
    await t.database.db.deleteFrom('warmup_messages').execute();
  });

  it('our own address named in the peer’s offer is never a partner', async () => {
    const standIns = await t.database.db
      .selectFrom('mailboxes')
      .select('email')
      .where('peer_id', '=', peer.id)
      .orderBy('email')
      .execute();
    expect(standIns.map((row) => row.email)).toEqual(['bea@b.test', 'ben@b.test']);
  });
});

describe('a peer that breaks its terms is paused, with the reason', () => {
  it('over the ceiling of mail a day it was given: nothing of the request kept, and its requests refused', async () => {
    expect((await announce([announcement(), announcement()])).statusCode).toBe(200);
    const over = await announce([announcement(), announcement()]);
    expectProblem(over, 403, 'peer_over_ceiling');
    expect(await expectedMail()).toBe(2);
    expect(await peerState()).toEqual({
      state: 'paused',
      paused_reason: 'it announced 4 messages for 2026-05-04, over the ceiling of 3 a day it was given',
    });
    const warned = logLines.map(
      (line) => JSON.parse(line) as { level: number; code?: string; peerId?: string; msg: string },
    );
    expect(warned.filter((line) => line.code === 'peer_over_ceiling')).toEqual([
      expect.objectContaining({ level: 40, peerId: peer.id, msg: expect.stringMatching(/over the ceiling of 3/) }),
    ]);
    const listed = (await owner.request({ method: 'GET', url: '/api/peers' })).json<{ peers: Peer[] }>().peers;
    expect(listed[0]!.pausedReason).toMatch(/over the ceiling of 3/);
    expectProblem(await announce([announcement({ dueAt: '2026-05-05T09:00:00.000Z' })]), 403, 'peer_paused');
    // its addresses are nobody's partners while it is paused
    const partners = await t.database.db
      .selectFrom('mailboxes')
      .select('status')
      .where('peer_id', '=', peer.id)
      .distinct()
      .execute();
    expect(partners).toEqual([{ status: 'paused' }]);
    await t.database.db.deleteFrom('warmup_messages').execute();
    await resumeB();
  });

  it('reporting on mail A never sent it: 422, nothing applied, and paused', async () => {
    // one real message of A to B, sent
    await t.database.db
      .insertInto('warmup_messages')
      .values({
        id: 'wm_real',
        message_id: '<real@a.test>',
        thread_id: '<real@a.test>',
        sender_mailbox_id: 'mbx_ann',
        recipient_mailbox_id: (await standIn('ben@b.test')).id,
        kind: 'initial',
        turn: 1,
        plan_day: '2026-05-04',
        due_at: '2026-05-04T09:00:00.000Z',
        status: 'sent',
        sent_at: '2026-05-04T09:00:00.000Z',
        peer_announced_at: '2026-05-04T08:00:00.000Z',
        peer_day: '2026-05-04',
        created_at: '2026-05-04T08:00:00.000Z',
      })
      .execute();
    const report = (messageId: string, outcome = 'inbox', at = '2026-05-04T09:30:00.000Z') => ({
      messageId,
      outcome,
      at,
    });
    const evidence = (reports: unknown[]) =>
      t.app.inject(signed({ path: '/peer/v1/evidence', body: JSON.stringify({ reports }) }));

    // an honest report is applied once
    expect((await evidence([report('<real@a.test>')])).json()).toEqual({ applied: 1 });
    expect((await evidence([report('<real@a.test>')])).json()).toEqual({ applied: 0 });
    const found = async () =>
      t.database.db
        .selectFrom('daily_stats')
        .select(['inbox', 'spam'])
        .where('mailbox_id', '=', 'mbx_ann')
        .executeTakeFirstOrThrow();
    expect(await found()).toMatchObject({ inbox: 1, spam: 0 });

    await t.database.db.updateTable('warmup_messages').set({ found_at: null, placement: null }).execute();
    const junk = await evidence([report('<real@a.test>', 'spam'), report('<never-sent@a.test>', 'spam')]);
    expectProblem(junk, 422, 'junk_evidence', '/body/reports/1');
    expect(await peerState()).toEqual({
      state: 'paused',
      paused_reason: 'it reported on <never-sent@a.test>, which this installation never sent it',
    });
    // nothing of it applied: the real message's spam report went with the junk
    const row = await t.database.db
      .selectFrom('warmup_messages')
      .select(['found_at', 'placement'])
      .where('id', '=', 'wm_real')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ found_at: null, placement: null });
    expect(await found()).toMatchObject({ inbox: 1, spam: 0 });
    await resumeB();
  });

  it('a find dated in the future is junk too', async () => {
    const res = await t.app.inject(
      signed({
        path: '/peer/v1/evidence',
        body: JSON.stringify({
          reports: [{ messageId: '<real@a.test>', outcome: 'inbox', at: '2026-05-05T10:00:00.000Z' }],
        }),
      }),
    );
    expectProblem(res, 422, 'junk_evidence');
    expect((await peerState()).paused_reason).toMatch(/in the future/);
    await resumeB();
  });
});

async function standIn(email: string) {
  return t.database.db
    .selectFrom('mailboxes')
    .select(['id', 'status'])
    .where('email_normalized', '=', email)
    .where('peer_id', '=', peer.id)
    .executeTakeFirstOrThrow();
}

describe('a peer is one party', () => {
  it('its spam reports alone neither slow nor stop our mailbox, and move its score by a few points at most', async () => {
    const ben = (await standIn('ben@b.test')).id;
    const ids = Array.from({ length: 12 }, (_, i) => `<spam-${i}@a.test>`);
    await t.database.db
      .insertInto('warmup_messages')
      .values(
        ids.map((messageId, i) => ({
          id: `wm_spam_${i}`,
          message_id: messageId,
          thread_id: messageId,
          sender_mailbox_id: 'mbx_ann',
          recipient_mailbox_id: ben,
          kind: 'initial',
          turn: 1,
          plan_day: '2026-05-04',
          due_at: '2026-05-04T08:00:00.000Z',
          status: 'sent',
          sent_at: '2026-05-04T08:00:00.000Z',
          peer_announced_at: '2026-05-04T07:00:00.000Z',
          peer_day: '2026-05-04',
          created_at: '2026-05-04T07:00:00.000Z',
        })),
      )
      .execute();
    const deps = testEngineDeps(t);
    const reputation = async () => {
      await updateReputation(deps, clock.now(), { ignoreSchedule: true });
      const row = await t.database.db
        .selectFrom('mailboxes')
        .select('reputation')
        .where('id', '=', 'mbx_ann')
        .executeTakeFirstOrThrow();
      return Number(row.reputation);
    };
    const before = await reputation();
    const res = await t.app.inject(
      signed({
        path: '/peer/v1/evidence',
        body: JSON.stringify({
          reports: ids.map((messageId) => ({ messageId, outcome: 'spam', at: '2026-05-04T09:00:00.000Z' })),
        }),
      }),
    );
    expect(res.json()).toEqual({ applied: 12 });
    // the figures show what it said; the trusted evidence sets it aside
    const weighed = (await loadWeighedEvidence(t.database.db, new Date('2026-05-01'), clock.now(), ['mbx_ann'])).get(
      'mbx_ann',
    )!;
    expect(weighed.all.spam).toBe(12);
    expect(weighed.trusted.spam).toBe(0);
    const after = await reputation();
    expect(Math.abs(after - before)).toBeLessThanOrEqual(FOREIGN_EVIDENCE_BOUND);
    await applyHealthGuard(deps, clock.now(), { ignoreSchedule: true });
    const ann = await t.database.db
      .selectFrom('mailboxes')
      .select(['status', 'volume_factor'])
      .where('id', '=', 'mbx_ann')
      .executeTakeFirstOrThrow();
    expect({ status: ann.status, volumeFactor: Number(ann.volume_factor) }).toEqual({
      status: 'active',
      volumeFactor: 1,
    });
  });
});

describe('a removed peer', () => {
  it('stops our mail to it at once, and its requests are refused', async () => {
    await t.database.db
      .insertInto('warmup_messages')
      .values({
        id: 'wm_due',
        message_id: '<due@a.test>',
        thread_id: '<due@a.test>',
        sender_mailbox_id: 'mbx_ann',
        recipient_mailbox_id: (await standIn('bea@b.test')).id,
        kind: 'initial',
        turn: 1,
        plan_day: '2026-05-04',
        due_at: '2026-05-04T09:30:00.000Z',
        status: 'planned',
        peer_announced_at: '2026-05-04T08:00:00.000Z',
        peer_day: '2026-05-04',
        created_at: '2026-05-04T08:00:00.000Z',
      })
      .execute();
    const due = () =>
      findDueSenders(t.database.db, { dialect: t.database.dialect, now: clock.now(), exclude: [], scan: 10 });
    expect(await due()).toEqual(['mbx_ann']);
    expect((await owner.request({ method: 'DELETE', url: `/api/peers/${peer.id}` })).statusCode).toBe(204);
    expect(await due()).toEqual([]);
    expectProblem(await announce([announcement()]), 403, 'peer_removed');
  });

  it('mail to a partner of a peer that was never announced is never due', async () => {
    // its partners made partners again by hand: still nothing is due without the announcement
    await t.database.db.updateTable('mailboxes').set({ status: 'peer' }).where('peer_id', '=', peer.id).execute();
    await t.database.db
      .updateTable('warmup_messages')
      .set({ peer_announced_at: null })
      .where('id', '=', 'wm_due')
      .execute();
    expect(
      await findDueSenders(t.database.db, { dialect: t.database.dialect, now: clock.now(), exclude: [], scan: 10 }),
    ).toEqual([]);
  });
});
