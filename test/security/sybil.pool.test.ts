// Sybil workspaces, end to end on the real mail stack: one person opens three workspaces and
// connects to each a receiver whose server files everything into spam, hoping to pass as the
// three independent workspaces whose word scores another workspace's mailboxes down. Then the same
// with three people whose receivers, on three domain names, all live on one mail server. Both
// times the victim's mailboxes must stay active, at full volume, scored on what their own workspace
// saw (give or take the documented bound). A third run, three people on three mail servers, is the
// control: there the junking counts, so the first two prove the rule and not a test that cannot fail.
//
// Three mail servers on one machine: the attackers' IMAP connections go through TLS forwarders on
// three loopback networks (127.1.0.1, 127.2.0.1, 127.3.0.1), each with a certificate for its address,
// to the stack's Dovecot. To the engine they are three servers, as they would be on three hosts.
// The attackers have been around long enough (their workspaces and proofs are dated a month back):
// the young-receiver rule is proved by the unit tests, these prove the party and server rules.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/schema.js';
import { runOnce } from '../../src/jobs/job-list.js';
import { FOREIGN_EVIDENCE_BOUND } from '../../src/engine/evidence.js';
import { seededRandom } from '../../src/engine/random.js';
import { reputationScore } from '../../src/engine/reputation.js';
import type { MailPolicy } from '../../src/mail/policy.js';
import { createEngineFor } from '../../src/main.js';
import { silentLogger } from '../helpers/engine.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { describeWithMailStack, requireMailStack, type MailStack } from '../mailstack/use-mail-stack.js';
import { JUNK_RECIPIENTS, MAIL_USERS, type MailUser } from '../mailstack/users.js';

const run = promisify(execFile);
const [sia, sol, ...junkers] = MAIL_USERS.sybil;
const FIRST_DAY = '2025-06-02';
const DAYS = 5;
const WARMUP = { startVolume: 2, rampUpIncrement: 1, dailyLimit: 3, replyRate: 30, timezone: 'UTC' };
const SERVER_ADDRESSES = ['127.1.0.1', '127.2.0.1', '127.3.0.1'];
const A_MONTH_AGO = new Date(`${addDays(FIRST_DAY, -30)}T10:00:00Z`).toISOString();

interface MailboxView {
  id: string;
  status: string;
  reputation: number;
  lastError: string | null;
  pool: { member: boolean };
}

interface Outcome {
  email: string;
  status: string;
  lastError: string | null;
  volumeFactor: number;
  reputation: number;
  /** The score on what the victim's own workspace saw. */
  own: number;
  /** What the attackers' receivers saw of its mail. */
  junked: number;
}

function dayAt(index: number): Date {
  return new Date(`${addDays(FIRST_DAY, index)}T10:00:00Z`);
}

/** A certificate authority and a certificate for the forwarders' addresses, made with openssl. */
async function forwarderCertificate(dir: string): Promise<{ ca: string; key: string; cert: string }> {
  const at = (name: string) => join(dir, name);
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-days', '30', '-subj', '/CN=sybil test CA', '-keyout', at('ca.key'), '-out', at('ca.pem')]); // prettier-ignore
  await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=sybil servers', '-keyout', at('server.key'), '-out', at('server.csr')]); // prettier-ignore
  writeFileSync(at('san.cnf'), `subjectAltName=${SERVER_ADDRESSES.map((a) => `IP:${a}`).join(',')}\n`);
  await run('openssl', ['x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'),
    '-CAcreateserial', '-days', '30', '-extfile', at('san.cnf'), '-out', at('server.pem')]); // prettier-ignore
  return {
    ca: readFileSync(at('ca.pem'), 'utf8'),
    key: readFileSync(at('server.key'), 'utf8'),
    cert: readFileSync(at('server.pem'), 'utf8'),
  };
}

/** A TLS forwarder on `address` to the stack's implicit-TLS IMAP port: one more "mail server". */
async function startForwarder(
  stack: MailStack,
  address: string,
  identity: { key: string; cert: string },
): Promise<{ port: number; server: tls.Server }> {
  const stackCa = readFileSync(stack.caCert, 'utf8');
  const server = tls.createServer({ key: identity.key, cert: identity.cert }, (client) => {
    const upstream = tls.connect({ host: stack.host, port: stack.imapsPort, ca: stackCa, servername: 'localhost' });
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('the forwarder has no port');
  return { port: bound.port, server };
}

describeWithMailStack('sybil workspaces', () => {
  let stack: MailStack;
  let certDir: string;
  let policy: MailPolicy;
  const forwarders: { port: number; server: tls.Server }[] = [];

  beforeAll(async () => {
    stack = requireMailStack();
    for (const junker of junkers) expect(JUNK_RECIPIENTS).toContain(junker.email);
    certDir = mkdtempSync(join(tmpdir(), 'sybil-'));
    const identity = await forwarderCertificate(certDir);
    for (const address of SERVER_ADDRESSES) forwarders.push(await startForwarder(stack, address, identity));
    policy = {
      allowedHosts: [stack.host, ...SERVER_ADDRESSES],
      plaintextHosts: [],
      ca: `${readFileSync(stack.caCert, 'utf8')}\n${identity.ca}`,
    };
  });

  afterAll(async () => {
    for (const { server } of forwarders) await new Promise((resolve) => server.close(resolve));
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  /**
   * The victim's two mailboxes and three junking receivers, each in a workspace of its own, run for
   * DAYS simulated days. `owners` names the person who owns each attacker workspace; `servers` says
   * whether each receiver lives on its own mail server or all three on the stack's.
   */
  async function attack(options: { owners: string[]; servers: 'three' | 'one' }): Promise<Outcome[]> {
    const clock = fixedClock(dayAt(0));
    const testApp: TestApp = await createTestApp({ clock, roundTripWaitMs: 2_000, mailPolicy: policy });
    try {
      const db: Kysely<Database> = testApp.database.db;
      const victim = testApp.workspace;

      const connect = async (request: TestApp['workspace']['request'], user: MailUser, imapAt?: number) => {
        const imap =
          imapAt === undefined
            ? { host: stack.host, port: stack.imapPort, secure: false }
            : { host: SERVER_ADDRESSES[imapAt], port: forwarders[imapAt].port, secure: true };
        const response = await request({
          method: 'POST',
          url: '/api/mailboxes',
          payload: {
            email: user.email,
            password: user.password,
            provider: 'custom',
            connectionType: 'imap',
            imap: { ...imap, username: user.email },
            smtp: { host: stack.host, port: stack.submissionPort, secure: false, username: user.email },
            warmup: WARMUP,
          },
        });
        expect(response.statusCode, response.body).toBe(201);
        const mailbox = (response.json() as { mailbox: MailboxView }).mailbox;
        expect(mailbox.pool.member, `${user.email} proves itself`).toBe(true);
        return mailbox.id;
      };

      const victims = [await connect(victim.request, sia), await connect(victim.request, sol)];
      const people = [...new Set(options.owners)];
      for (const person of people) {
        await db
          .insertInto('users')
          .values({
            id: `usr_${person}`,
            email: `${person}@people.test`,
            email_normalized: `${person}@people.test`,
            name: person,
            password_hash: 'not used',
            created_at: A_MONTH_AGO,
            updated_at: A_MONTH_AGO,
          })
          .execute();
      }
      const attackers: string[] = [];
      for (const [index, junker] of junkers.entries()) {
        const workspace = await testApp.createWorkspace(`sybil ${index + 1}`);
        attackers.push(workspace.id);
        await db
          .insertInto('memberships')
          .values({
            user_id: `usr_${options.owners[index]}`,
            workspace_id: workspace.id,
            role: 'owner',
            created_at: A_MONTH_AGO,
          })
          .execute();
        await connect(workspace.request, junker, options.servers === 'three' ? index : undefined);
      }
      // they have been around for a month: not young, so only the party and server rules stand in the way
      await db.updateTable('workspaces').set({ created_at: A_MONTH_AGO }).where('id', 'in', attackers).execute();
      await db
        .updateTable('mailboxes')
        .set({ proven_at: A_MONTH_AGO })
        .where('workspace_id', 'in', attackers)
        .execute();

      for (let index = 0; index < DAYS; index++) {
        const at = dayAt(index);
        clock.set(at);
        const engine = createEngineFor(
          { database: testApp.database, services: testApp.services, logger: silentLogger, clock },
          { random: seededRandom(9100 + index), workerId: `sybil-${index}` },
        );
        const summary = await runOnce(engine, { at, ignoreSchedule: true });
        expect(summary.errors, `day ${index}`).toEqual([]);
      }
      // A loaded machine may still be delivering the last days' mail when a cycle reads: read again
      // until all of it has arrived, so every receiver's word is in before the scores are taken (the
      // replies these reading passes send are not waited for).
      const settling = new Date(dayAt(DAYS - 1).getTime() + 10 * 60_000);
      const unread = async () =>
        Number(
          (
            await db
              .selectFrom('warmup_messages')
              .select(sql<number>`cast(count(*) as integer)`.as('n'))
              .where('sent_at', '<', settling.toISOString())
              .where('found_at', 'is', null)
              .where('status', 'not in', ['lost', 'bounced'])
              .executeTakeFirstOrThrow()
          ).n,
        );
      for (let attempt = 1; (await unread()) > 0 && attempt <= 10; attempt++) {
        const at = new Date(settling.getTime() + (attempt - 1) * 10 * 60_000);
        clock.set(at);
        const engine = createEngineFor(
          { database: testApp.database, services: testApp.services, logger: silentLogger, clock },
          { random: seededRandom(9200 + attempt), workerId: `sybil-read-${attempt}` },
        );
        expect((await runOnce(engine, { at, ignoreSchedule: true })).errors).toEqual([]);
      }
      expect(await unread(), 'mail still on its way').toBe(0);

      /** What one victim's mail met at the receivers of these workspaces, over the whole run. */
      const evidenceAt = async (senderId: string, workspaceIds: string[]) => {
        const row = await db
          .selectFrom('warmup_messages as w')
          .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
          .select([
            sql<number>`cast(count(w.sent_at) as integer)`.as('sent'),
            sql<number>`cast(count(w.found_at) as integer)`.as('found'),
            sql<number>`cast(sum(case when w.placement = 'spam' then 1 else 0 end) as integer)`.as('spam'),
            sql<number>`cast(sum(case when w.status = 'lost' then 1 else 0 end) as integer)`.as('lost'),
            sql<number>`cast(sum(case when w.status = 'bounced' then 1 else 0 end) as integer)`.as('bounced'),
          ])
          .where('w.sender_mailbox_id', '=', senderId)
          .where('r.workspace_id', 'in', workspaceIds)
          .executeTakeFirstOrThrow();
        return {
          sent: Number(row.sent),
          found: Number(row.found),
          spam: Number(row.spam ?? 0),
          lost: Number(row.lost ?? 0),
          bounced: Number(row.bounced ?? 0),
        };
      };

      // the receivers really were on the servers the run says
      const addresses = await db
        .selectFrom('mailboxes')
        .select('imap_address')
        .where('workspace_id', 'in', attackers)
        .orderBy('email_normalized')
        .execute();
      expect(new Set(addresses.map((row) => row.imap_address)).size).toBe(options.servers === 'three' ? 3 : 1);

      const outcomes: Outcome[] = [];
      for (const id of victims) {
        const response = await victim.request({ method: 'GET', url: `/api/mailboxes/${id}` });
        expect(response.statusCode, response.body).toBe(200);
        const mailbox = (response.json() as { mailbox: MailboxView & { email: string } }).mailbox;
        const { volume_factor } = await db
          .selectFrom('mailboxes')
          .select('volume_factor')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        outcomes.push({
          email: mailbox.email,
          status: mailbox.status,
          lastError: mailbox.lastError,
          volumeFactor: Number(volume_factor),
          reputation: mailbox.reputation,
          own: reputationScore(await evidenceAt(id, [victim.id])),
          junked: (await evidenceAt(id, attackers)).spam,
        });
      }
      return outcomes;
    } finally {
      await testApp.close();
    }
  }

  function expectUnmoved(outcomes: Outcome[]) {
    for (const outcome of outcomes) {
      // the attack happened: the junking receivers filed the victim's mail into spam
      expect(outcome.junked, `${outcome.email} was junked`).toBeGreaterThan(0);
      expect(outcome, outcome.email).toMatchObject({ status: 'active', lastError: null, volumeFactor: 1 });
      expect(outcome.reputation, `${outcome.email} reputation`).toBeGreaterThanOrEqual(
        outcome.own - FOREIGN_EVIDENCE_BOUND,
      );
      expect(outcome.reputation, `${outcome.email} reputation`).toBeLessThanOrEqual(
        outcome.own + FOREIGN_EVIDENCE_BOUND,
      );
    }
  }

  it(
    'one person with three workspaces on three mail servers is one voice: the victim is unmoved',
    { timeout: 300_000 },
    async () => {
      expectUnmoved(await attack({ owners: ['mallory', 'mallory', 'mallory'], servers: 'three' }));
    },
  );

  it(
    'three people whose receivers live on one mail server under three domain names are one voice: the victim is unmoved',
    { timeout: 300_000 },
    async () => {
      expectUnmoved(await attack({ owners: ['mallory', 'trudy', 'oscar'], servers: 'one' }));
    },
  );

  it(
    'three people on three mail servers are three voices: the same junking does count',
    { timeout: 300_000 },
    async () => {
      const outcomes = await attack({ owners: ['mallory', 'trudy', 'oscar'], servers: 'three' });
      for (const outcome of outcomes) {
        expect(outcome.junked, `${outcome.email} was junked`).toBeGreaterThan(0);
        expect(outcome.reputation, `${outcome.email} reputation`).toBeLessThan(outcome.own - FOREIGN_EVIDENCE_BOUND);
      }
    },
  );
});
