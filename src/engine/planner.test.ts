import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { silentLogger, createMailbox, proveAll } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { addDays, localDay } from '../calendar.js';
import { planDay, type PlanDeps } from './planner.js';
import { dailyTarget, dayVariance } from './plan-volume.js';
import { DEFAULT_ENGINE_SETTINGS } from './engine-deps.js';
import { seededRandom } from './random.js';
import { MIN_SEND_GAP_MS } from './send-budget.js';
import { INBOUND_SLACK, PAIR_THREADS_PER_DAY } from './partners.js';
import { acquireLease } from '../jobs/leases.js';
import { clientProfileOf, messageIdHost } from './client-profile.js';

const HOUR = 3_600_000;

describe('planDay', () => {
  const MONDAY = '2025-03-03';
  let testApp: TestApp;
  let clock: ReturnType<typeof fixedClock>;
  const ids: Record<string, string> = {};
  const ramp = { startVolume: 2, rampUpIncrement: 1, dailyLimit: 4 };

  function deps(workerId = 'planner-test', seed = 1): PlanDeps {
    return {
      db: testApp.database.db,
      random: seededRandom(seed),
      logger: silentLogger,
      clock: testApp.clock,
      workerId,
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
  }

  async function getMailbox(id: string) {
    const response = await testApp.workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` });
    return (response.json() as { mailbox: { warmupDay: number; dailyTarget: number; status: string } }).mailbox;
  }

  function rowsOf(senderId: string, day: string) {
    return testApp.database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('sender_mailbox_id', '=', senderId)
      .where('plan_day', '=', day)
      .orderBy('due_at')
      .execute();
  }

  function planOf(mailboxId: string, day: string) {
    return testApp.database.db
      .selectFrom('mailbox_plans')
      .selectAll()
      .where('mailbox_id', '=', mailboxId)
      .where('day', '=', day)
      .executeTakeFirst();
  }

  beforeAll(async () => {
    clock = fixedClock(`${MONDAY}T06:00:00Z`);
    testApp = await createTestApp({ clock });
    const people = ['ann@alpha.test', 'amy@alpha.test', 'bob@beta.test', 'cid@gamma.test', 'dan@delta.test'];
    for (const email of people) ids[email] = await createMailbox(testApp.workspace, email, { warmup: ramp });
    // another workspace's mailboxes are part of the pool too
    const other = await testApp.createWorkspace('other');
    ids['eve@echo.test'] = await createMailbox(other, 'eve@echo.test', { warmup: ramp });
    await proveAll(testApp.database.db);
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('plans every active mailbox once for its day: target, partners and spread send times', async () => {
    const summary = await planDay(deps(), new Date(`${MONDAY}T06:00:00Z`));
    expect(summary.ran).toBe(true);
    expect(summary.mailboxes).toHaveLength(6);
    for (const [email, id] of Object.entries(ids)) {
      const target = dailyTarget({ settings: ramp, warmupDay: 1, mailboxId: id, day: MONDAY, volumeFactor: 1 });
      expect(await planOf(id, MONDAY)).toMatchObject({ warmup_day: 1, target, planned: target });
      const rows = await rowsOf(id, MONDAY);
      expect(rows).toHaveLength(target);
      const recipients = rows.map((r) => r.recipient_mailbox_id);
      expect(new Set(recipients).size).toBe(rows.length);
      expect(recipients).not.toContain(id);
      // the host its mail client gives Message-IDs: the sender's domain, or Google's for the Gmail app
      const row = await testApp.database.db
        .selectFrom('mailboxes')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const host = messageIdHost(clientProfileOf(row).name, email);
      rows.forEach((row, i) => {
        expect(row).toMatchObject({
          kind: 'initial',
          turn: 1,
          status: 'planned',
          parent_message_id: null,
          thread_id: row.message_id,
        });
        expect(row.message_id).toMatch(new RegExp(`^<[^@<>\\s]+@${host.replace(/\./g, '\\.')}>$`));
        expect(row.due_at >= `${MONDAY}T08:00:00.000Z` && row.due_at <= `${MONDAY}T18:00:00.000Z`).toBe(true);
        if (i > 0)
          expect(Date.parse(row.due_at) - Date.parse(rows[i - 1].due_at)).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
      });
      // a partner on another domain whenever one is free (the pool has five other domains)
      const domains = await testApp.database.db
        .selectFrom('mailboxes')
        .select('email')
        .where('id', 'in', recipients)
        .execute();
      expect(domains.every((m) => !m.email.endsWith(`@${email.split('@')[1]}`))).toBe(true);
    }
    const ann = await getMailbox(ids['ann@alpha.test']);
    expect(ann.warmupDay).toBe(1);
    expect(ann.dailyTarget).toBe((await rowsOf(ids['ann@alpha.test'], MONDAY)).length);
  });

  it('does not plan a day twice, whoever asks and however often', async () => {
    const before = await testApp.database.db.selectFrom('warmup_messages').select('id').execute();
    const [first, second] = await Promise.all([
      planDay(deps('worker-a'), new Date(`${MONDAY}T09:00:00Z`)),
      planDay(deps('worker-b'), new Date(`${MONDAY}T09:00:00Z`)),
    ]);
    expect(first.messages + second.messages).toBe(0);
    const after = await testApp.database.db.selectFrom('warmup_messages').select('id').execute();
    expect(after).toHaveLength(before.length);
  });

  it('lets only one worker plan at a time, and a plan row another worker wrote wins', async () => {
    const tuesday = addDays(MONDAY, 1);
    // another worker already planned ann's Tuesday (its plan row is there; its transaction committed)
    await testApp.database.db
      .insertInto('mailbox_plans')
      .values({
        mailbox_id: ids['ann@alpha.test'],
        day: tuesday,
        warmup_day: 2,
        target: 1,
        planned: 0,
        created_at: clock.now().toISOString(),
      })
      .execute();
    const at = new Date(`${tuesday}T07:00:00Z`);
    const [a, b] = await Promise.all([planDay(deps('worker-a'), at), planDay(deps('worker-b'), at)]);
    const plannedBy = [a, b].flatMap((s) => s.mailboxes.map((m) => m.mailboxId));
    expect(plannedBy.sort()).toEqual(
      Object.entries(ids)
        .filter(([email]) => email !== 'ann@alpha.test')
        .map(([, id]) => id)
        .sort(),
    );
    expect(await rowsOf(ids['ann@alpha.test'], tuesday)).toHaveLength(0);
    expect((await getMailbox(ids['bob@beta.test'])).warmupDay).toBe(2);
  });

  it('keeps the ramp where it is while paused and continues from it', async () => {
    const bob = ids['bob@beta.test'];
    const paused = await testApp.workspace.request({ method: 'POST', url: `/api/mailboxes/${bob}/pause` });
    expect(paused.statusCode).toBe(200);
    const wednesday = addDays(MONDAY, 2);
    const summary = await planDay(deps(), new Date(`${wednesday}T07:00:00Z`));
    expect(summary.mailboxes.map((m) => m.mailboxId)).not.toContain(bob);
    expect(await planOf(bob, wednesday)).toBeUndefined();
    // nobody writes to a paused mailbox either
    const toBob = await testApp.database.db
      .selectFrom('warmup_messages')
      .select('id')
      .where('recipient_mailbox_id', '=', bob)
      .where('plan_day', '=', wednesday)
      .execute();
    expect(toBob).toHaveLength(0);
    expect((await getMailbox(bob)).warmupDay).toBe(2);

    // resuming through the API logs in again, which these placeholder servers cannot do
    await testApp.database.db.updateTable('mailboxes').set({ status: 'active' }).where('id', '=', bob).execute();
    const thursday = addDays(MONDAY, 3);
    await planDay(deps(), new Date(`${thursday}T07:00:00Z`));
    expect(await planOf(bob, thursday)).toMatchObject({ warmup_day: 3 });
    expect((await getMailbox(bob)).warmupDay).toBe(3);
  });

  it('halves the target while the health guard says so', async () => {
    const dan = ids['dan@delta.test'];
    await testApp.database.db.updateTable('mailboxes').set({ volume_factor: 0.5 }).where('id', '=', dan).execute();
    const friday = addDays(MONDAY, 4);
    await planDay(deps(), new Date(`${friday}T07:00:00Z`));
    const plan = await planOf(dan, friday);
    expect(plan?.warmup_day).toBe(5);
    expect(plan?.target).toBe(
      dailyTarget({ settings: ramp, warmupDay: 5, mailboxId: dan, day: friday, volumeFactor: 0.5 }),
    );
    expect(plan?.target).toBe(Math.max(1, Math.round(4 * dayVariance(dan, friday) * 0.5)));
  });
});

describe('planDay: schedule and time zones', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock('2025-03-07T06:00:00Z') });
  });

  afterAll(async () => {
    await testApp.close();
  });

  function deps(): PlanDeps {
    return {
      db: testApp.database.db,
      random: seededRandom(9),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'tz-test',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
  }

  async function plans(mailboxId: string) {
    return testApp.database.db
      .selectFrom('mailbox_plans')
      .selectAll()
      .where('mailbox_id', '=', mailboxId)
      .orderBy('day')
      .execute();
  }

  it('plans the local day in the local send window', async () => {
    const tokyo = await createMailbox(testApp.workspace, 'kei@tokyo.test', {
      warmup: { timezone: 'Asia/Tokyo', sendWindow: { start: '09:00', end: '17:00' } },
    });
    await createMailbox(testApp.workspace, 'lou@paris.test', { warmup: { timezone: 'Europe/Paris' } });
    await proveAll(testApp.database.db);
    // Thursday 20:00 UTC is Friday 05:00 in Tokyo
    await planDay(deps(), new Date('2025-03-06T20:00:00Z'));
    const [plan] = await plans(tokyo);
    expect(plan).toMatchObject({ day: '2025-03-07', planned: 1 });
    const [row] = await testApp.database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('sender_mailbox_id', '=', tokyo)
      .execute();
    expect(row.plan_day).toBe('2025-03-07');
    expect(row.due_at >= '2025-03-07T00:00:00.000Z' && row.due_at <= '2025-03-07T08:00:00.000Z').toBe(true);
  });

  it('leaves a mailbox with unreadable stored settings unplanned, says why, and plans the others', async () => {
    const broken = await createMailbox(testApp.workspace, 'bea@broken.test');
    const fine = await createMailbox(testApp.workspace, 'fin@fine.test');
    await testApp.database.db
      .updateTable('mailboxes')
      .set({ warmup: '{"dailyLimit":"forty"}' })
      .where('id', '=', broken)
      .execute();
    await proveAll(testApp.database.db);
    const warnings: unknown[] = [];
    const logger = { ...silentLogger, warn: (details: unknown) => warnings.push(details) } as typeof silentLogger;
    const summary = await planDay({ ...deps(), logger }, new Date('2025-03-07T09:00:00Z'));
    expect(summary.mailboxes.map((m) => m.mailboxId)).toContain(fine);
    expect(await plans(broken)).toHaveLength(0);
    expect(warnings).toEqual([{ mailboxId: broken, problem: expect.stringContaining('(dailyLimit)') }]);
  });

  it('starts a mailbox whose window has closed tomorrow, unless the schedule is ignored', async () => {
    const late = await createMailbox(testApp.workspace, 'max@late.test');
    await proveAll(testApp.database.db);
    const evening = new Date('2025-03-07T19:00:00Z');
    const summary = await planDay(deps(), evening);
    expect(summary.mailboxes.map((m) => m.mailboxId)).not.toContain(late);
    expect(await plans(late)).toHaveLength(0);
    const ignoring = await planDay(deps(), evening, { ignoreSchedule: true });
    expect(ignoring.mailboxes.map((m) => m.mailboxId)).toContain(late);
    const [row] = await testApp.database.db
      .selectFrom('warmup_messages')
      .selectAll()
      .where('sender_mailbox_id', '=', late)
      .execute();
    expect(row.plan_day).toBe('2025-03-07');
  });

  it('looks at a planned mailbox again at its next local day, or at once when its time zone changes', async () => {
    const { db } = testApp.database;
    const tia = await createMailbox(testApp.workspace, 'tia@kiritimati.test');
    await proveAll(db);
    const dueAt = async () =>
      (await db.selectFrom('mailboxes').select('plan_due_at').where('id', '=', tia).executeTakeFirstOrThrow())
        .plan_due_at;
    await planDay(deps(), new Date('2025-03-07T09:00:00Z'));
    await planDay(deps(), new Date('2025-03-07T12:00:00Z'));
    expect(await dueAt()).toBe('2025-03-08T00:00:00.000Z');
    // 12:00 UTC is already 02:00 of the next day at UTC+14: that day is planned now, not 10 hours later
    const moved = await testApp.workspace.request({
      method: 'PATCH',
      url: `/api/mailboxes/${tia}`,
      payload: { warmup: { timezone: 'Pacific/Kiritimati' } },
    });
    expect(moved.statusCode).toBe(200);
    await planDay(deps(), new Date('2025-03-07T12:00:00Z'));
    expect((await plans(tia)).map((p) => p.day)).toEqual(['2025-03-07', '2025-03-08']);
  });

  it('plans no weekend day with weekdaysOnly, and Monday continues the count', async () => {
    const weekdays = await createMailbox(testApp.workspace, 'wes@weekdays.test', { warmup: { weekdaysOnly: true } });
    await proveAll(testApp.database.db);
    await planDay(deps(), new Date('2025-03-07T07:00:00Z'));
    await planDay(deps(), new Date('2025-03-08T07:00:00Z'));
    await planDay(deps(), new Date('2025-03-09T07:00:00Z'));
    await planDay(deps(), new Date('2025-03-10T07:00:00Z'));
    expect((await plans(weekdays)).map((p) => [p.day, p.warmup_day])).toEqual([
      ['2025-03-07', 1],
      ['2025-03-10', 2],
    ]);
  });
});

describe('planDay: a pool too small for the target', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock('2025-03-03T06:00:00Z') });
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('plateaus at what its one partner carries, and never collapses: the pair earns up to 3 threads a day', async () => {
    const warmup = { startVolume: 5, rampUpIncrement: 5, dailyLimit: 40 };
    const ann = await createMailbox(testApp.workspace, 'ann@alpha.test', { warmup });
    await createMailbox(testApp.workspace, 'bob@beta.test', { warmup });
    await proveAll(testApp.database.db);
    const deps: PlanDeps = {
      db: testApp.database.db,
      random: seededRandom(5),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'small',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
    for (let i = 0; i < 9; i++) await planDay(deps, new Date(`${addDays('2025-03-03', i)}T07:00:00Z`));
    const plans = await testApp.database.db
      .selectFrom('mailbox_plans')
      .selectAll()
      .where('mailbox_id', '=', ann)
      .orderBy('day')
      .execute();
    // 1 a day between strangers, then one more for every PAIR_TRUST_STEP threads, up to 3; never less again
    expect(plans.map((p) => p.planned)).toEqual([1, 1, 2, 3, 3, 3, 3, 3, 3]);
    // the capacity the planner used: one partner carries PAIR_THREADS_PER_DAY, below the ramp's target
    for (const plan of plans) {
      expect(plan.capacity).toBe(Math.min(PAIR_THREADS_PER_DAY, plan.target));
      expect(plan.planned).toBeLessThanOrEqual(plan.capacity!);
    }
    expect(plans.map((p) => p.warmup_day)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(plans[0].target).toBe(
      dailyTarget({ settings: warmup, warmupDay: 1, mailboxId: ann, day: '2025-03-03', volumeFactor: 1 }),
    );
  });
});

describe('planDay: a day the pool carries nothing', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock('2025-03-03T06:00:00Z') });
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('shows the warmup day it stays on beside that day’s target, not the next day’s', async () => {
    const warmup = { startVolume: 5, rampUpIncrement: 5, dailyLimit: 40 };
    const ann = await createMailbox(testApp.workspace, 'ann@alpha.test', { warmup });
    await proveAll(testApp.database.db);
    // on its fourth day of warmup, alone in the pool: capacity 0, nothing sent, the ramp stays on day 3
    await testApp.database.db.updateTable('mailboxes').set({ warmup_day: 3 }).where('id', '=', ann).execute();
    const deps: PlanDeps = {
      db: testApp.database.db,
      random: seededRandom(6),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'alone',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
    await planDay(deps, new Date('2025-03-03T07:00:00Z'));
    const plan = await testApp.database.db
      .selectFrom('mailbox_plans')
      .selectAll()
      .where('mailbox_id', '=', ann)
      .executeTakeFirstOrThrow();
    const onDay3 = dailyTarget({ settings: warmup, warmupDay: 3, mailboxId: ann, day: '2025-03-03', volumeFactor: 1 });
    expect(plan).toMatchObject({ warmup_day: 3, target: onDay3, planned: 0, capacity: 0 });
    const row = await testApp.database.db
      .selectFrom('mailboxes')
      .select(['warmup_day', 'ramp_target', 'plan_capacity', 'plan_limited_by'])
      .where('id', '=', ann)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ warmup_day: 3, ramp_target: onDay3, plan_capacity: 0, plan_limited_by: 'pool_too_small' });
  });
});

describe('planDay: only proven mailboxes take part', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock('2025-03-03T06:00:00Z') });
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('an active mailbox whose round trip has not succeeded neither sends nor is chosen as a partner', async () => {
    const warmup = { startVolume: 3, rampUpIncrement: 0, dailyLimit: 3 };
    const proven = [
      await createMailbox(testApp.workspace, 'ann@alpha.test', { warmup }),
      await createMailbox(testApp.workspace, 'bob@beta.test', { warmup }),
      await createMailbox(testApp.workspace, 'cid@gamma.test', { warmup }),
    ];
    await proveAll(testApp.database.db);
    const other = await testApp.createWorkspace('other');
    // stored with verify: false, so not proven
    const unproven = await createMailbox(other, 'dan@delta.test', { warmup });
    const deps: PlanDeps = {
      db: testApp.database.db,
      random: seededRandom(3),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'proof',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
    const summary = await planDay(deps, new Date('2025-03-03T07:00:00Z'));
    expect(summary.mailboxes.map((m) => m.mailboxId).sort()).toEqual([...proven].sort());
    const rows = await testApp.database.db
      .selectFrom('warmup_messages')
      .select(['sender_mailbox_id', 'recipient_mailbox_id'])
      .execute();
    // each proven mailbox writes to both others: the unproven one would have been a partner
    expect(rows).toHaveLength(6);
    for (const row of rows) expect([row.sender_mailbox_id, row.recipient_mailbox_id]).not.toContain(unproven);
  });
});

describe('planDay: what a mailbox receives follows its own ramp', () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock('2025-03-03T00:00:00Z') });
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('new threads to a mailbox per its own local day stay within its budget + 2, senders in any zone', async () => {
    const zones = ['UTC', 'America/New_York', 'Asia/Tokyo', 'Europe/Berlin'];
    const seasoned = { startVolume: 10, rampUpIncrement: 0, dailyLimit: 10 };
    const senders: string[] = [];
    for (let i = 0; i < 24; i += 1) {
      const warmup = { ...seasoned, timezone: zones[i % zones.length] };
      senders.push(await createMailbox(testApp.workspace, `s${i}@d${i % 6}.test`, { warmup }));
    }
    const young = await createMailbox(testApp.workspace, 'new@young.test', {
      warmup: { startVolume: 2, rampUpIncrement: 2, dailyLimit: 40, timezone: 'Pacific/Auckland' },
    });
    await proveAll(testApp.database.db);
    const deps: PlanDeps = {
      db: testApp.database.db,
      random: seededRandom(17),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'inbound',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 60_000 },
    };
    // planning every hour for three days: each mailbox plans its own day at its local midnight
    for (let h = 0; h < 72; h += 1) await planDay(deps, new Date(Date.parse('2025-03-03T00:00:00Z') + h * HOUR));
    const rows = await testApp.database.db
      .selectFrom('warmup_messages')
      .select(['recipient_mailbox_id', 'due_at'])
      .where('kind', '=', 'initial')
      .execute();
    const plans = await testApp.database.db.selectFrom('mailbox_plans').selectAll().execute();
    const budgetOf = new Map(plans.map((p) => [`${p.mailbox_id} ${p.day}`, p.target]));
    const zoneOf = new Map([
      [young, 'Pacific/Auckland'],
      ...senders.map((id, i) => [id, zones[i % zones.length]] as const),
    ]);
    const perDay = new Map<string, number>();
    for (const row of rows) {
      const key = `${row.recipient_mailbox_id} ${localDay(new Date(row.due_at), zoneOf.get(row.recipient_mailbox_id)!)}`;
      perDay.set(key, (perDay.get(key) ?? 0) + 1);
    }
    let youngDays = 0;
    for (const [key, n] of perDay) {
      // (a day the recipient has not planned yet is held to its ramp target: not checked here)
      if (!budgetOf.has(key)) continue;
      expect(n, key).toBeLessThanOrEqual(budgetOf.get(key)! + INBOUND_SLACK);
      if (key.startsWith(young)) youngDays += 1;
    }
    // the young mailbox got mail on its planned days, within its small budgets
    expect(youngDays).toBeGreaterThan(0);
  });
});

describe('planDay: the partner rules hold in a pool of 10,000 mailboxes', () => {
  const POOL = 10_000;
  /** 4 mailboxes a domain, so every sender has 3 same-domain peers it must not pick. */
  const PER_DOMAIN = 4;
  const MONDAY = '2025-03-03';
  let testApp: TestApp;
  const domainOf = new Map<string, string>();
  const zoneOf = new Map<string, string>();
  const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(`${MONDAY}T00:00:00Z`) });
    const now = `${MONDAY}T00:00:00.000Z`;
    const rows = [];
    for (let i = 0; i < POOL; i++) {
      const id = `mb_${String(i).padStart(6, '0')}`;
      const domain = `d${Math.floor(i / PER_DOMAIN)}.pool.test`;
      const email = `m${i}@${domain}`;
      const timezone = ZONES[i % ZONES.length];
      domainOf.set(id, domain);
      zoneOf.set(id, timezone);
      rows.push({
        id,
        workspace_id: testApp.workspace.id,
        email,
        email_normalized: email,
        name: null,
        provider: 'custom' as const,
        connection_type: 'imap' as const,
        status: 'active' as const,
        imap: '{}',
        smtp: '{}',
        password_encrypted: 'x',
        // small targets keep the test quick; the ramp spread makes them differ
        warmup: JSON.stringify({ startVolume: 1, rampUpIncrement: 1, dailyLimit: 3, timezone, weekdaysOnly: false }),
        warmup_day: i % 3,
        proven_at: now,
        created_at: now,
        updated_at: now,
      });
    }
    for (let start = 0; start < rows.length; start += 500)
      await testApp.database.db
        .insertInto('mailboxes')
        .values(rows.slice(start, start + 500))
        .execute();
  }, 120_000);

  afterAll(async () => {
    await testApp.close();
  });

  it('plans every target; never the same partner twice a day; always another domain; inbound within budget + 2', async () => {
    const deps: PlanDeps = {
      db: testApp.database.db,
      random: seededRandom(10_000),
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'large-pool',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: 600_000 },
    };
    // two days in a row, planned before every window opens
    for (const day of [MONDAY, addDays(MONDAY, 1)]) {
      const summary = await planDay(deps, new Date(`${addDays(day, -1)}T20:00:00Z`));
      // each zone's mailboxes plan the local day that is due at that instant
      expect(summary.mailboxes.length).toBeGreaterThanOrEqual(POOL / 2);
      // the pool is ample: everyone planned its whole target
      for (const plan of summary.mailboxes) expect(plan.planned).toBe(plan.target);
    }
    const plans = await testApp.database.db.selectFrom('mailbox_plans').selectAll().execute();
    const targetOf = new Map(plans.map((p) => [`${p.mailbox_id} ${p.day}`, Number(p.target)]));
    const rows = await testApp.database.db
      .selectFrom('warmup_messages')
      .select(['sender_mailbox_id', 'recipient_mailbox_id', 'plan_day', 'due_at'])
      .where('kind', '=', 'initial')
      .execute();
    expect(rows.length).toBe(plans.reduce((sum, p) => sum + Number(p.planned), 0));
    const pairsPerDay = new Map<string, number>();
    const inbound = new Map<string, number>();
    for (const row of rows) {
      const { sender_mailbox_id: sender, recipient_mailbox_id: recipient } = row;
      expect(recipient).not.toBe(sender);
      expect(domainOf.get(recipient)).not.toBe(domainOf.get(sender));
      const day = `${sender} ${recipient} ${row.plan_day}`;
      pairsPerDay.set(day, (pairsPerDay.get(day) ?? 0) + 1);
      const received = `${recipient} ${localDay(new Date(row.due_at), zoneOf.get(recipient)!)}`;
      inbound.set(received, (inbound.get(received) ?? 0) + 1);
    }
    // strangers write once a day
    expect(Math.max(...pairsPerDay.values())).toBe(1);
    // the capacity invariant: a plan never holds more than the pool carried for it, nor that more than its target
    for (const plan of plans) {
      expect(Number(plan.planned)).toBeLessThanOrEqual(Number(plan.capacity));
      expect(Number(plan.capacity)).toBeLessThanOrEqual(Number(plan.target));
    }
    for (const [key, count] of inbound) {
      // a recipient's own day it has a plan for: at most its budget + slack
      const target = targetOf.get(key);
      if (target !== undefined) expect(count, key).toBeLessThanOrEqual(target + INBOUND_SLACK);
    }
  }, 120_000);
});

describe('planDay: the lease of a bucket', () => {
  const MONDAY = '2025-03-03';
  const LEASE_MS = 60_000;
  let testApp: TestApp;
  let clock: ReturnType<typeof fixedClock>;

  beforeAll(async () => {
    clock = fixedClock(`${MONDAY}T06:00:00Z`);
    testApp = await createTestApp({ clock });
    for (const name of ['ann@alpha', 'bob@beta', 'cid@gamma', 'dan@delta', 'eve@echo', 'fay@foxtrot'])
      await createMailbox(testApp.workspace, `${name}.test`, {
        warmup: { startVolume: 2, rampUpIncrement: 1, dailyLimit: 4 },
      });
    await proveAll(testApp.database.db);
  });

  afterAll(async () => {
    await testApp.close();
  });

  it('runs from the moment it is taken, and a planner that lost it to another worker stops at its next batch', async () => {
    const { db } = testApp.database;
    // The cycle started at 06:00; its planning starts ten minutes later (a long step before it).
    const at = new Date(`${MONDAY}T06:00:00Z`);
    clock.set(`${MONDAY}T06:10:00Z`);
    const otherWorker: { takenAt1010?: boolean; takenAt1012?: boolean } = {};
    let looking: Promise<void> | undefined;
    const random = seededRandom(5);
    const deps: PlanDeps = {
      db,
      random: () => {
        // At each draw until the bucket is leased: is it? Once it is (the planner is in its first
        // batch), another worker reaches for it now, and again when this planner has stalled for two
        // leases' time.
        looking ??= db
          .selectFrom('leases')
          .select('key')
          .where('key', 'like', 'plan:%')
          .executeTakeFirst()
          .then(async (lease) => {
            if (lease === undefined) {
              looking = undefined;
              return;
            }
            otherWorker.takenAt1010 = await acquireLease(db, lease.key, 'other-worker', LEASE_MS, clock.now());
            clock.advance(2 * LEASE_MS);
            otherWorker.takenAt1012 = await acquireLease(db, lease.key, 'other-worker', LEASE_MS, clock.now());
          });
        return random();
      },
      logger: silentLogger,
      clock: testApp.clock,
      workerId: 'slow-planner',
      settings: { ...DEFAULT_ENGINE_SETTINGS, leaseMs: LEASE_MS },
    };

    const summary = await planDay(deps, at, { batchSize: 1 });
    await looking;

    // held at 06:10, a lease after it was taken (leased from 06:00, it had run out at 06:01); free
    // once the planner had stalled past it
    expect(otherWorker).toEqual({ takenAt1010: false, takenAt1012: true });
    // the first batch's mailbox was planned; the rest of the bucket is the other worker's now
    expect(summary.mailboxes).toHaveLength(1);
    expect(await db.selectFrom('mailbox_plans').select('mailbox_id').execute()).toHaveLength(1);
    // and the slow planner did not give back a lease that is no longer its own
    expect(await db.selectFrom('leases').select('owner').where('key', 'like', 'plan:%').execute()).toEqual([
      { owner: 'other-worker' },
    ]);
  });
});
