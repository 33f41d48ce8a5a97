// Three installations on loopback, each with its own database, key and mail-stack domain, peered
// pairwise: over simulated days each one's mailboxes warm with the others' through real SMTP and
// IMAP. Every hard bound holds across installations (a sender's day, the ceilings each side
// gives the others), evidence flows both ways, and each side counts the peers' findings once.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../calendar.js';
import { fixedClock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { seededRandom } from '../engine/random.js';
import { runOnce } from '../jobs/job-list.js';
import { createEngineFor } from '../main.js';
import { createPerson, type TestPerson } from '../../test/helpers/accounts.js';
import { createStackMailbox, silentLogger } from '../../test/helpers/engine.js';
import { closedPort } from '../../test/helpers/ports.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { describeWithMailStack, requireMailStack } from '../../test/mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../../test/mailstack/users.js';
import type { Peer } from './peers.schemas.js';

const FIRST_DAY = '2026-03-02';
const DAYS = 4;
/** The ceiling each installation gives each of its peers: mail a day it accepts from it. */
const CEILING = 3;
const WARMUP = {
  startVolume: 2,
  rampUpIncrement: 1,
  dailyLimit: 4,
  replyRate: 50,
  timezone: 'UTC',
  sendWindow: { start: '08:00', end: '18:00' },
};
const users = MAIL_USERS.peering;

interface Installation {
  name: string;
  domain: string;
  t: TestApp;
  db: Kysely<Database>;
  url: string;
  owner: TestPerson;
  seed: number;
  mailboxIds: string[];
  cycles: number;
}

describeWithMailStack('three peered installations warming each other', () => {
  const stack = requireMailStack();
  const clock = fixedClock(`${FIRST_DAY}T07:00:00Z`);
  const all: Installation[] = [];

  async function start(name: string, domain: string, seed: number): Promise<Installation> {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const t = await createTestApp({ clock, oauth: { publicUrl: url, providers: {} }, peersOnLoopback: true });
    await t.app.listen({ host: '127.0.0.1', port });
    const owner = await createPerson(t, t.workspace.id, 'owner');
    const mailboxIds: string[] = [];
    for (const user of users.filter((u) => u.email.endsWith(`@${domain}`)))
      mailboxIds.push(await createStackMailbox(t.workspace, stack, user, { warmup: WARMUP }));
    const installation = { name, domain, seed, t, db: t.database.db, url, owner, mailboxIds, cycles: 0 };
    all.push(installation);
    return installation;
  }

  async function add(from: Installation, to: Installation): Promise<Peer> {
    const { publicKey } = await to.t.services.peers.identity();
    const res = await from.owner.request({
      method: 'POST',
      url: '/api/peers',
      payload: { url: to.url, publicKey, offer: { domains: [from.domain], mailboxes: 10, dailyCeiling: CEILING } },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ peer: Peer }>().peer;
  }

  async function cycle(installation: Installation, at: Date): Promise<void> {
    clock.set(at);
    installation.cycles += 1;
    // a pass of `warmup run-once`: a fresh engine over the installation's database each time
    const engine = createEngineFor(
      { database: installation.t.database, services: installation.t.services, logger: silentLogger, clock },
      {
        random: seededRandom(installation.seed * 1000 + installation.cycles),
        workerId: `peer-${installation.name}-${installation.cycles}`,
        peerMail: installation.t.services.peerMail,
      },
    );
    const summary = await runOnce(engine, { at, ignoreSchedule: true });
    expect(summary.errors, `${installation.name}: ${JSON.stringify(summary.errors)}`).toEqual([]);
  }

  beforeAll(async () => {
    const a = await start('a', 'peer-alpha.test', 1);
    const b = await start('b', 'peer-bravo.test', 2);
    const c = await start('c', 'peer-charlie.test', 3);
    for (const [x, y] of [
      [a, b],
      [a, c],
      [b, c],
    ] as const) {
      await add(x, y);
      expect((await add(y, x)).state).toBe('active');
    }
    for (let day = 0; day < DAYS; day += 1) {
      // a few rounds a day: plans and offers, announcements, sends, finds and the evidence of them
      for (const [round, time] of ['09:00', '11:00', '13:00', '15:00', '17:00'].entries()) {
        for (const installation of all)
          await cycle(installation, new Date(`${addDays(FIRST_DAY, day)}T${time}:0${round}Z`));
      }
    }
    // two days on, what was never found is lost, and said so
    for (const installation of all) await cycle(installation, new Date(`${addDays(FIRST_DAY, DAYS + 2)}T07:00:00Z`));
    for (const installation of all) await cycle(installation, new Date(`${addDays(FIRST_DAY, DAYS + 2)}T07:30:00Z`));
    // what the last passes found is reported by the next exchange
    for (const installation of all) await installation.t.services.peerMail.exchange();
  }, 600_000);

  afterAll(async () => {
    for (const { t } of all) await t.close();
  });

  /** Mail between one installation's own mailboxes and one peer's stand-ins. */
  async function peerMail(installation: Installation, direction: 'out' | 'in') {
    const [mine, theirs] = direction === 'out' ? (['s', 'r'] as const) : (['r', 's'] as const);
    return installation.db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
      .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
      .select([
        'w.message_id',
        'w.status',
        'w.found_at',
        'w.placement',
        'w.due_at',
        'w.sent_at',
        'w.peer_announced_at',
        // the UTC day each side counts it on against the ceiling: announced for (out), expected on (in)
        direction === 'out' ? 'w.peer_day as ceiling_day' : 'w.plan_day as ceiling_day',
        `${theirs}.peer_id as peer_id`,
        `${mine}.id as mine`,
      ])
      .where(`${theirs}.peer_id`, 'is not', null)
      .where(`${mine}.peer_id`, 'is', null)
      .execute();
  }

  it("warms each installation's mailboxes with the other installations' mailboxes, both ways", async () => {
    for (const installation of all) {
      const out = await peerMail(installation, 'out');
      const sent = out.filter((row) => row.sent_at !== null);
      const peersWrittenTo = new Set(sent.map((row) => row.peer_id));
      expect(peersWrittenTo.size, `${installation.name} wrote to both peers`).toBe(2);
      for (const id of installation.mailboxIds)
        expect(
          sent.some((row) => row.mine === id),
          `${installation.name}'s ${id} wrote to a peer`,
        ).toBe(true);
      // nothing left without its announcement
      expect(sent.every((row) => row.peer_announced_at !== null)).toBe(true);
      const received = (await peerMail(installation, 'in')).filter((row) => row.found_at !== null);
      expect(new Set(received.map((row) => row.peer_id)).size, `${installation.name} found both peers' mail`).toBe(2);
    }
  });

  it('evidence flows both ways: what one side found of a message, the sender knows, and only that', async () => {
    const byId = new Map<string, { found_at: string | null; placement: string | null; status: string }>();
    for (const installation of all) for (const row of await peerMail(installation, 'in')) byId.set(row.message_id, row);
    let compared = 0;
    for (const installation of all) {
      for (const row of (await peerMail(installation, 'out')).filter((r) => r.sent_at !== null)) {
        const seen = byId.get(row.message_id);
        expect(seen, `${row.message_id} was expected by its receiver`).toBeDefined();
        // the sender's record is the receiver's finding: found where it was found, or lost
        expect(row.placement).toBe(seen!.placement);
        expect(row.found_at === null).toBe(seen!.found_at === null);
        if (seen!.status === 'lost') expect(row.status).toBe('lost');
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(10);
  });

  it('every hard bound holds across installations: each sender its day, each peer the ceiling it was given', async () => {
    // nobody went over: no peer was paused for it
    for (const installation of all)
      expect(await installation.db.selectFrom('peers').select(['state', 'paused_reason']).execute()).toEqual([
        { state: 'active', paused_reason: null },
        { state: 'active', paused_reason: null },
      ]);
    for (const installation of all) {
      // a sender's mail on each of its days never exceeds that day's target, peers' replies included
      const days = await installation.db
        .selectFrom('warmup_messages as w')
        .innerJoin('mailbox_plans as p', (join) =>
          join.onRef('p.mailbox_id', '=', 'w.sender_mailbox_id').onRef('p.day', '=', 'w.plan_day'),
        )
        .select(['w.sender_mailbox_id', 'w.plan_day', 'p.target', sql<number>`cast(count(*) as integer)`.as('n')])
        .where('w.sent_at', 'is not', null)
        .groupBy(['w.sender_mailbox_id', 'w.plan_day', 'p.target'])
        .execute();
      expect(days.length).toBeGreaterThan(0);
      for (const day of days) expect(Number(day.n)).toBeLessThanOrEqual(Number(day.target));

      // what it sent each peer a UTC day, and what each peer expected of it, within the ceiling
      for (const direction of ['out', 'in'] as const) {
        const perDay = new Map<string, number>();
        for (const row of await peerMail(installation, direction)) {
          if (direction === 'out' && row.peer_announced_at === null) continue;
          const key = `${row.peer_id} ${row.ceiling_day}`;
          perDay.set(key, (perDay.get(key) ?? 0) + 1);
        }
        expect(perDay.size).toBeGreaterThan(0);
        for (const [key, n] of perDay)
          expect(n, `${installation.name} ${direction} ${key}`).toBeLessThanOrEqual(CEILING);
      }
    }
  });

  it("each installation's owner sees what flowed each way with each peer, as the mail says", async () => {
    for (const installation of all) {
      // what GET /api/peers answers (the owner's session ran out over the simulated days)
      const peers = await installation.t.services.peers.list();
      for (const peer of peers) {
        const out = (await peerMail(installation, 'out')).filter((row) => row.peer_id === peer.id);
        const into = (await peerMail(installation, 'in')).filter((row) => row.peer_id === peer.id);
        // the simulated days are over a week before the page looks: it shows the last 7 days of the clock
        const recent = (rows: typeof out) => rows.filter((row) => row.due_at >= addDays(FIRST_DAY, DAYS + 2 - 7));
        const tally = (rows: typeof out) => ({
          found: recent(rows).filter((row) => row.found_at !== null).length,
          inbox: recent(rows).filter((row) => row.placement === 'inbox').length,
          spam: recent(rows).filter((row) => row.placement === 'spam').length,
          lost: recent(rows).filter((row) => row.status === 'lost').length,
        });
        expect(peer.flows.toPeer).toEqual({
          announced: recent(out).filter((row) => row.peer_announced_at !== null).length,
          ...tally(out),
        });
        expect(peer.flows.fromPeer).toEqual({ announced: recent(into).length, ...tally(into) });
        expect(peer.flows.toPeer.found).toBeGreaterThan(0);
        expect(peer.flows.fromPeer.found).toBeGreaterThan(0);
      }
    }
  });

  it("each side counts the peers' findings exactly once, even when they are reported again", async () => {
    const foundOf = async (installation: Installation) => {
      const rows = await installation.db
        .selectFrom('daily_stats')
        .select(sql<number>`cast(coalesce(sum(inbox + spam + promotions + other), 0) as integer)`.as('n'))
        .where('mailbox_id', 'in', installation.mailboxIds)
        .executeTakeFirst();
      return Number(rows?.n ?? 0);
    };
    const findsOf = async (installation: Installation) => {
      const row = await installation.db
        .selectFrom('warmup_messages')
        .select(sql<number>`cast(count(*) as integer)`.as('n'))
        .where('sender_mailbox_id', 'in', installation.mailboxIds)
        .where('found_at', 'is not', null)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    };
    for (const installation of all) expect(await foundOf(installation)).toBe(await findsOf(installation));
    const before = await Promise.all(all.map(foundOf));
    // every receiver forgets it reported, and reports everything again
    for (const installation of all) {
      await installation.db.updateTable('warmup_messages').set({ peer_reported: null }).execute();
      await installation.t.services.peerMail.exchange();
    }
    expect(await Promise.all(all.map(foundOf))).toEqual(before);
  });
});
