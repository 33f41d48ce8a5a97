/*
 * Runs one simulated pool on the real engine: a real (temporary SQLite) database, the real
 * mailboxes service for create/pause/resume, the real engine cycle (prove → plan → send → sync →
 * reputation → health) at seeded, jittered intervals, with an injected clock and seeded random.
 * Only the network is fake: the mail world (mail-world.ts) stands behind SMTP and IMAP.
 *
 * What happened is handed back for the invariants: every send as the world saw it, each day's
 * plan as the engine recorded it, and when each mailbox was active, paused or the engine down.
 */
import { sql, type Kysely } from 'kysely';
import { addDays, canonicalTimeZone, localTimeToUtc, validTimeZone } from '../../src/calendar.js';
import { newId } from '../../src/db/ids.js';
import type { Database, MailboxRow } from '../../src/db/schema.js';
import { encryptSecret, loadSecretKey } from '../../src/secrets/secrets.js';
import { pino } from 'pino';
import { fixedClock } from '../../src/clock.js';
import { createEngineDeps } from '../../src/engine/engine-deps.js';
import { createEngine, type CycleSummary, type Engine } from '../../src/jobs/job-list.js';
import { seededRandom } from '../../src/engine/random.js';
import { createServices } from '../../src/services.js';
import { TEST_SECRET_KEY } from '../helpers/test-app.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { createMailWorld, type WorldSend } from './mail-world.js';
import { reseedRandomBytes } from './seeded-bytes.js';
import type { SimMailbox, SimPool } from './scenario.js';

export interface MailboxHistory {
  id: string;
  spec: SimMailbox;
  /** When it was created and each resume: it is active from each of these… */
  activeFrom: Date[];
  /** …until the next of these (pauses), or the end of the run. */
  pausedAt: Date[];
}

export interface DayPlan {
  warmupDay: number;
  target: number;
  planned: number;
  /** New threads the pool carried for it that day, up to its target (the capacity model); null when not kept. */
  capacity: number | null;
  createdAt: string;
}

export interface PoolRun {
  pool: SimPool;
  sends: readonly WorldSend[];
  mailboxes: Map<string, MailboxHistory>;
  /** By mailbox id, then local day. */
  plans: Map<string, Map<string, DayPlan>>;
  /** Message-IDs the engine planned (any status), normalised. */
  plannedMessageIds: Set<string>;
  /**
   * When each new thread was due as planned, by normalised Message-ID: the sender may move it later
   * (behind other due mail, or spread again when overdue), and the pair spacing is a rule of the plan.
   */
  plannedAt: Map<string, Date>;
  cycles: number;
  /** Steps of a cycle that threw. */
  cycleErrors: Array<{ at: string; step: string; message: string }>;
}

const silent = pino({ level: 'silent' });

type Event =
  | { at: Date; kind: 'create'; mailbox: SimMailbox }
  | { at: Date; kind: 'pause'; mailbox: SimMailbox }
  | { at: Date; kind: 'resume'; mailbox: SimMailbox };

function eventsOf(pool: SimPool): Event[] {
  const events: Event[] = [];
  for (const mailbox of pool.mailboxes) {
    events.push({ at: mailbox.createAt, kind: 'create', mailbox });
    for (const pause of mailbox.pauses) {
      events.push({ at: pause.from, kind: 'pause', mailbox });
      if (pause.to) events.push({ at: pause.to, kind: 'resume', mailbox });
    }
  }
  return events.filter((e) => e.at < pool.end).sort((a, b) => a.at.getTime() - b.at.getTime());
}

/*
 * Idle cycles are skipped, so weeks of a large pool run in seconds. A cycle at a moment when
 * nothing is due — no planned send due, no mail to find or act on, no proof due, no local midnight
 * or send-window opening of any mailbox since the last cycle, no create/pause/resume — changes nothing
 * but sync bookkeeping, so the cycles that do run are the ones a real worker would run at those
 * moments, on the same grid of jittered intervals. Likewise a mailbox with nothing to find or act
 * on is left out of a cycle's sync (its `next_sync_at` and `sync_due_at` parked far ahead, and put
 * back as they were when it has mail): such a sync only notes that it happened. At least one cycle runs every
 * three hours.
 * `WARMUP_SIM_EVERY_CYCLE=1` turns both shortcuts off.
 */
const PARKED = '9999-12-31T00:00:00.000Z';
const MAX_IDLE_MS = 3 * 60 * 60_000;

/*
 * Pools of this many mailboxes or more are created in bulk, and proven at once. Through the
 * service, each creation reads the workspace's mailboxes (the limit's count, the outlook's week of
 * stats): quadratic over a pool created one by one, a quarter of a 10,000-mailbox run. And the
 * engine proves 20 new mailboxes a cycle, so in a run of days most of such a pool would wait for its
 * round trip and never plan or send. What a large pool tests is the volume bounds and partner rules
 * with every mailbox planning, sending and receiving; the proof round trip is covered by the small
 * pools and the engine's own tests. So the first mailbox is created through the service (the row a
 * real creation writes), and the others as copies of it written straight into the table, each with
 * its own address, id, settings, password (encrypted for its id) and creation time; all are marked
 * proven as they are created. Smaller pools go through the service and the engine's round trip, as
 * before: their seeds replay the same.
 */
export const BULK_POOL_SIZE = 1_000;
const BULK_CHUNK = 250;
const SIM_PASSWORD = 'simulated-password';

/** Local midnights and send-window openings of every mailbox over the run, sorted. */
function calendarEdges(pool: SimPool): number[] {
  const edges = new Set<number>();
  const seen = new Set<string>();
  const days = Math.ceil((pool.end.getTime() - pool.start.getTime()) / 86_400_000) + 2;
  const firstDay = addDays(pool.start.toISOString().slice(0, 10), -1);
  for (const mailbox of pool.mailboxes) {
    const tz = validTimeZone(mailbox.warmup.timezone);
    const key = `${tz} ${mailbox.warmup.sendWindow.start} ${mailbox.warmup.sendWindow.end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    for (let i = 0; i <= days; i++) {
      const day = addDays(firstDay, i);
      for (const time of ['00:00', mailbox.warmup.sendWindow.start]) {
        edges.add(localTimeToUtc(day, time, tz).getTime());
      }
    }
  }
  return [...edges].sort((a, b) => a - b);
}

/** Active mailboxes with mail to find, or found mail whose time to act on it has come. */
async function mailboxesWithMail(db: Kysely<Database>, at: Date): Promise<Set<string>> {
  const rows = await db
    .selectFrom('warmup_messages')
    .select('recipient_mailbox_id as id')
    .distinct()
    .where('status', '=', 'sent')
    .where((eb) =>
      eb.or([
        eb('found_at', 'is', null),
        eb.and([eb('engaged_at', 'is', null), eb('engage_after', '<=', at.toISOString())]),
      ]),
    )
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Whether the engine has work at `at` beyond the calendar and the scripted events. */
async function workDue(db: Kysely<Database>, at: Date, withMail: Set<string>): Promise<boolean> {
  const iso = at.toISOString();
  if (withMail.size > 0) return true;
  const send = await db
    .selectFrom('warmup_messages as w')
    .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
    .select('w.id')
    .where('w.status', '=', 'planned')
    .where('w.due_at', '<=', iso)
    .where('s.status', '=', 'active')
    .limit(1)
    .executeTakeFirst();
  if (send) return true;
  const proof = await db
    .selectFrom('mailboxes')
    .select('id')
    .where('status', '=', 'active')
    .where('proven_at', 'is', null)
    .where((eb) => eb.or([eb('next_proof_at', 'is', null), eb('next_proof_at', '<=', iso)]))
    .limit(1)
    .executeTakeFirst();
  return proof !== undefined;
}

/** What a parked mailbox's sync times were, to be put back when it has mail again. */
interface ParkedSync {
  nextSyncAt: string | null;
  syncDueAt: string;
}

/** Mailboxes parked or put back in one statement. */
const PARK_CHUNK = 500;

/**
 * Parks the syncs of active mailboxes without mail, and puts back those that have mail again.
 * Parked means both times far ahead: `next_sync_at`, which keeps the claim from taking the mailbox,
 * and `sync_due_at`, by which the claim reads the due mailboxes from its index, so it never walks
 * over the parked ones (with thousands of them, every claim would). Mail sent to a parked mailbox,
 * or a resume, pulls its `sync_due_at` earlier as usual; putting it back keeps the earlier of that
 * and the time it had.
 */
async function parkIdleSyncs(
  db: Kysely<Database>,
  withMail: Set<string>,
  parked: Map<string, ParkedSync>,
): Promise<void> {
  const active = await db
    .selectFrom('mailboxes')
    .select(['id', 'next_sync_at', 'sync_due_at'])
    .where('status', '=', 'active')
    .execute();
  const toPark = new Map<string, ParkedSync>();
  for (const mailbox of active) {
    const saved = parked.get(mailbox.id);
    // parked by us, and not moved by the engine since (a failed sync's backoff sets its own time)
    const isParked = saved !== undefined && mailbox.next_sync_at === PARKED;
    if (saved !== undefined && (!isParked || withMail.has(mailbox.id))) {
      const syncDueAt = mailbox.sync_due_at < saved.syncDueAt ? mailbox.sync_due_at : saved.syncDueAt;
      await db
        .updateTable('mailboxes')
        .set({ next_sync_at: isParked ? saved.nextSyncAt : mailbox.next_sync_at, sync_due_at: syncDueAt })
        .where('id', '=', mailbox.id)
        .execute();
      parked.delete(mailbox.id);
      if (!withMail.has(mailbox.id)) {
        toPark.set(mailbox.id, { nextSyncAt: isParked ? saved.nextSyncAt : mailbox.next_sync_at, syncDueAt });
      }
    } else if (saved === undefined && !withMail.has(mailbox.id)) {
      toPark.set(mailbox.id, { nextSyncAt: mailbox.next_sync_at, syncDueAt: mailbox.sync_due_at });
    }
  }
  const ids = [...toPark.keys()];
  for (let i = 0; i < ids.length; i += PARK_CHUNK) {
    await db
      .updateTable('mailboxes')
      .set({ next_sync_at: PARKED, sync_due_at: PARKED })
      .where('id', 'in', ids.slice(i, i + PARK_CHUNK))
      .execute();
  }
  for (const [id, times] of toPark) parked.set(id, times);
}

function normalizeId(id: string): string {
  return id.replace(/^<+/, '').replace(/>+$/, '');
}

export async function runPool(pool: SimPool): Promise<PoolRun> {
  const database = await createTestDatabase();
  reseedRandomBytes(pool.seed ^ 0x1d5);
  try {
    if (database.dialect === 'sqlite') {
      // a throwaway file: durability buys nothing here, and the run is mostly small writes
      await sql`PRAGMA synchronous = OFF`.execute(database.db);
      await sql`PRAGMA journal_mode = MEMORY`.execute(database.db);
    }
    const clock = fixedClock(pool.start);
    // One stream of chance per concern, all from the pool's seed: the engine's draws do not shift
    // the world's spam placement, or the cycle times, when the engine changes.
    const world = createMailWorld(clock, seededRandom(pool.seed ^ 0x5eed));
    const engineRandom = seededRandom(pool.seed ^ 0xe1e1);
    const cadence = seededRandom(pool.seed ^ 0xcade);
    const services = createServices({
      db: database.db,
      clock,
      dataDir: database.dataDir,
      secretKey: TEST_SECRET_KEY,
      limits: { maxMailboxes: 1_000_000 },
      roundTripWaitMs: 0,
      mailClients: world.clients,
    });
    const { workspace } = await services.workspaces.createWorkspace('simulation');

    let generation = 0;
    function newEngine(): Engine {
      generation += 1;
      return createEngine(
        createEngineDeps({
          db: database.db,
          dialect: database.dialect,
          clock,
          logger: silent,
          mailboxes: services.mailboxes,
          templates: services.templates,
          random: engineRandom,
          workerId: `sim-worker-${generation}`,
          smtp: world.clients.smtp,
          imap: world.clients.imap,
          settings: { proofWaitMs: 0 },
        }),
      );
    }

    const histories = new Map<string, MailboxHistory>();
    const byEmail = new Map<string, MailboxHistory>();
    const run: PoolRun = {
      pool,
      sends: world.sends,
      mailboxes: histories,
      plans: new Map(),
      plannedMessageIds: new Set(),
      plannedAt: new Map(),
      cycles: 0,
      cycleErrors: [],
    };

    const bulk = pool.mailboxes.length >= BULK_POOL_SIZE;
    const secretKey = loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: database.dataDir });
    let template: MailboxRow | null = null;
    let pendingCreates: Event[] = [];

    /** The pending creations of a large pool: copies of the first created row, proven at once. */
    async function flushCreates(): Promise<void> {
      const creates = pendingCreates;
      pendingCreates = [];
      let rest = creates;
      if (template === null && creates.length > 0) {
        const first = creates[0];
        await apply(first, true);
        const firstId = byEmail.get(first.mailbox.email)?.id ?? '';
        await database.db
          .updateTable('mailboxes')
          .set({ proven_at: first.at.toISOString(), proof_note: null })
          .where('id', '=', firstId)
          .execute();
        template = await database.db
          .selectFrom('mailboxes')
          .selectAll()
          .where('id', '=', firstId)
          .executeTakeFirstOrThrow();
        rest = creates.slice(1);
      }
      if (template === null) return;
      for (const event of rest) world.addAccount(event.mailbox.email, event.mailbox.spamRate);
      const { id: _id, email: _email, email_normalized: _normalized, ...copied } = template;
      const templateWarmup = JSON.parse(template.warmup) as Record<string, unknown>;
      // the servers' login name is the address, as the service resolves it
      const server = (json: string, email: string) =>
        JSON.stringify({ ...(JSON.parse(json) as object), username: email });
      for (let i = 0; i < rest.length; i += BULK_CHUNK) {
        const values = rest.slice(i, i + BULK_CHUNK).map(({ at, mailbox }) => {
          const id = newId('mbx', at.getTime());
          const created = at.toISOString();
          const warmup = {
            ...templateWarmup,
            ...mailbox.warmup,
            timezone: canonicalTimeZone(mailbox.warmup.timezone) ?? mailbox.warmup.timezone,
          };
          const history: MailboxHistory = { id, spec: mailbox, activeFrom: [at], pausedAt: [] };
          histories.set(id, history);
          byEmail.set(mailbox.email, history);
          return {
            ...copied,
            id,
            email: mailbox.email,
            email_normalized: mailbox.email.toLowerCase(),
            imap: server(copied.imap, mailbox.email),
            smtp: server(copied.smtp, mailbox.email),
            password_encrypted: encryptSecret(secretKey, SIM_PASSWORD, id),
            warmup: JSON.stringify(warmup),
            created_at: created,
            updated_at: created,
            proven_at: created,
            proof_note: null,
          };
        });
        await database.db.insertInto('mailboxes').values(values).execute();
      }
    }

    async function apply(event: Event, direct = false): Promise<void> {
      if (bulk && !direct) {
        if (event.kind === 'create') {
          pendingCreates.push(event);
          return;
        }
        await flushCreates();
      }
      clock.set(event.at);
      const { mailbox } = event;
      if (event.kind === 'create') {
        world.addAccount(mailbox.email, mailbox.spamRate);
        const created = await services.mailboxes.create(workspace.id, {
          email: mailbox.email,
          password: SIM_PASSWORD,
          provider: 'custom',
          connectionType: 'imap',
          imap: { host: 'imap.mail.sim', port: 993, secure: true },
          smtp: { host: 'smtp.mail.sim', port: 465, secure: true },
          warmup: mailbox.warmup,
          // the engine's round trip proves it, through the mail world
          verify: false,
        });
        const history: MailboxHistory = { id: created.id, spec: mailbox, activeFrom: [event.at], pausedAt: [] };
        histories.set(created.id, history);
        byEmail.set(mailbox.email, history);
        return;
      }
      const history = byEmail.get(mailbox.email);
      if (!history) return;
      if (event.kind === 'pause') {
        await services.mailboxes.pause(workspace.id, history.id);
        history.pausedAt.push(event.at);
      } else {
        await services.mailboxes.resume(workspace.id, history.id);
        history.activeFrom.push(event.at);
      }
    }

    const events = eventsOf(pool);
    const edges = calendarEdges(pool);
    const parked = new Map<string, ParkedSync>();
    let next = 0;
    let edge = 0;
    let engines: Engine[] | null = null;
    let at = pool.start.getTime();
    let lastCycle = Number.NEGATIVE_INFINITY;
    let eventsSinceCycle = true;
    const stepMs = pool.stepMinutes * 60_000;
    while (at < pool.end.getTime()) {
      while (next < events.length && events[next].at.getTime() <= at) {
        await apply(events[next++]);
        eventsSinceCycle = true;
      }
      await flushCreates();
      let edgePassed = false;
      while (edge < edges.length && edges[edge] <= at) {
        edgePassed ||= edges[edge] > lastCycle;
        edge += 1;
      }
      const now = new Date(at);
      const down = pool.downtimes.find((d) => d.from <= now && now < d.to);
      if (down) {
        // the worker is gone: its leases run out on their own; a new one starts after the outage
        engines = null;
      } else {
        let due =
          pool.everyCycle || eventsSinceCycle || edgePassed || at - lastCycle >= MAX_IDLE_MS || engines === null;
        let withMail: Set<string> | undefined;
        if (!pool.everyCycle) {
          withMail = await mailboxesWithMail(database.db, now);
          due ||= await workDue(database.db, now, withMail);
        }
        if (due) {
          if (withMail) await parkIdleSyncs(database.db, withMail, parked);
          engines ??= Array.from({ length: pool.workers }, newEngine);
          clock.set(now);
          // several workers run their cycles at the same time, as separate processes would
          const summaries: CycleSummary[] = await Promise.all(engines.map((e) => e.runCycle({ at: now })));
          run.cycles += 1;
          lastCycle = at;
          eventsSinceCycle = false;
          if (summaries.some((summary) => (summary.plan?.messages ?? 0) > 0)) {
            // the threads planned in this cycle, read once, before the sender moves any
            const threads = await database.db
              .selectFrom('warmup_messages')
              .select(['message_id', 'due_at'])
              .where('kind', '=', 'initial')
              .where('created_at', '=', now.toISOString())
              .execute();
            for (const row of threads) run.plannedAt.set(normalizeId(row.message_id), new Date(row.due_at));
          }
          for (const error of summaries.flatMap((summary) => summary.errors)) {
            run.cycleErrors.push({ at: now.toISOString(), ...error });
          }
        }
      }
      at += Math.round(stepMs * (0.75 + 0.5 * cadence()));
    }

    const plans = await database.db.selectFrom('mailbox_plans').selectAll().execute();
    for (const plan of plans) {
      const perDay = run.plans.get(plan.mailbox_id) ?? new Map<string, DayPlan>();
      perDay.set(plan.day, {
        warmupDay: Number(plan.warmup_day),
        target: Number(plan.target),
        planned: Number(plan.planned),
        capacity: plan.capacity == null ? null : Number(plan.capacity),
        createdAt: plan.created_at,
      });
      run.plans.set(plan.mailbox_id, perDay);
    }
    const planned = await database.db.selectFrom('warmup_messages').select('message_id').execute();
    for (const row of planned) run.plannedMessageIds.add(normalizeId(row.message_id));
    return run;
  } finally {
    reseedRandomBytes(null);
    await database.close();
  }
}
