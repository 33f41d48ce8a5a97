// Parallel planning, proven with real processes on one PostgreSQL schema: three planner processes
// plan the same pool at once, each bucket under its own lease, and together keep every rule that
// one planner keeps: every mailbox planned once, never itself, never its own domain, never the same
// partner twice a day, and no recipient over its inbound cap although senders in every bucket write
// to it. Then one planner is killed (SIGKILL) halfway through its bucket: what it committed stays,
// and the next planner to find its lease expired finishes the bucket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/calendar.js';
import { planBucketOf, planBucketsFor } from '../../src/engine/planner.js';
import { INBOUND_SLACK } from '../../src/engine/partners.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../helpers/test-database.js';
import { sleep } from './cluster.js';
import { brokenRules, seedPool, startPlanner, type PlannerProcess } from './planners.js';

const POOL = 3_000;
const MONDAY = '2025-03-03';
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];
const LEASE_MS = 60_000;
/**
 * A third of the pool is young (1 a day, so it may receive 1 + INBOUND_SLACK), the rest send 8 a day:
 * the young ones' caps are reached every day, by senders of every bucket at once.
 */
const isYoung = (i: number) => i % 3 === 0;

describe.skipIf(testDialect !== 'postgres')(
  `parallel planning: three planner processes on one PostgreSQL database${testDialect !== 'postgres' ? ' (skipped: runs on PostgreSQL only, WARMUP_TEST_DB=postgres; SQLite has one writer)' : ''}`,
  () => {
    let database: TestDatabase;
    let zoneOf: Map<string, string>;

    beforeAll(async () => {
      database = await createTestDatabase();
      const now = `${MONDAY}T00:00:00.000Z`;
      await database.db.insertInto('workspaces').values({ id: 'ws_pool', name: 'pool', created_at: now }).execute();
      ({ zoneOf } = await seedPool(database.db, {
        workspaceId: 'ws_pool',
        count: POOL,
        perDomain: 4,
        zones: ZONES,
        warmup: (i) =>
          isYoung(i)
            ? { startVolume: 1, rampUpIncrement: 0, dailyLimit: 1 }
            : { startVolume: 8, rampUpIncrement: 0, dailyLimit: 8 },
        warmupDay: () => 0,
        now,
      }));
    }, 120_000);

    afterAll(async () => {
      await database?.close();
    });

    async function plansOf(day: string) {
      return database.db.selectFrom('mailbox_plans').select(['mailbox_id', 'planned']).where('day', '=', day).execute();
    }

    it('three planners at once plan every mailbox once and together keep every rule', async () => {
      // Monday 05:00 UTC: Monday in every zone (New York's has just begun, Tokyo's window is open)
      const at = new Date(`${MONDAY}T05:00:00Z`);
      const planners = await Promise.all(
        [1, 2, 3].map((n) =>
          startPlanner(database.env, { workerId: `planner-${n}`, at, seed: n, leaseMs: LEASE_MS, batchSize: 100 }),
        ),
      );
      for (const planner of planners) planner.go();
      const reports = await Promise.all(planners.map((p) => p.done));

      // each planned a share of the buckets, and between them the whole pool, each mailbox once
      for (const report of reports) expect(report.mailboxes, report.workerId).toBeGreaterThan(0);
      expect(reports.reduce((sum, r) => sum + r.mailboxes, 0)).toBe(POOL);
      const plans = await plansOf(MONDAY);
      expect(plans).toHaveLength(POOL);
      expect(await brokenRules(database.db, zoneOf)).toEqual([]);

      // the caps were really shared: young mailboxes filled to their cap by senders of several buckets
      const buckets = planBucketsFor(POOL);
      const full = await database.db
        .selectFrom('warmup_messages')
        .select(['recipient_mailbox_id as id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('kind', '=', 'initial')
        .where('plan_day', '=', MONDAY)
        .groupBy('recipient_mailbox_id')
        .execute();
      const atCap = full.filter((r) => isYoung(Number(r.id.slice(3))) && Number(r.n) === 1 + INBOUND_SLACK);
      expect(atCap.length).toBeGreaterThan(POOL / 10);
      const senderBuckets = await database.db
        .selectFrom('warmup_messages')
        .select(['sender_mailbox_id', 'recipient_mailbox_id'])
        .where(
          'recipient_mailbox_id',
          'in',
          atCap.slice(0, 50).map((r) => r.id),
        )
        .where('plan_day', '=', MONDAY)
        .execute();
      const bucketsPerRecipient = new Map<string, Set<number>>();
      for (const row of senderBuckets) {
        const seen = bucketsPerRecipient.get(row.recipient_mailbox_id) ?? new Set<number>();
        seen.add(planBucketOf(row.sender_mailbox_id, buckets));
        bucketsPerRecipient.set(row.recipient_mailbox_id, seen);
      }
      expect([...bucketsPerRecipient.values()].some((b) => b.size > 1)).toBe(true);
    }, 180_000);

    it('a planner killed halfway through its bucket leaves it to the next one, which finishes it', async () => {
      const tuesday = addDays(MONDAY, 1);
      const at = new Date(`${tuesday}T05:00:00Z`);
      const buckets = planBucketsFor(POOL);
      const bucketSize = new Map<number, number>();
      for (const id of zoneOf.keys()) {
        const bucket = planBucketOf(id, buckets);
        bucketSize.set(bucket, (bucketSize.get(bucket) ?? 0) + 1);
      }
      const options = { at, leaseMs: LEASE_MS, batchSize: 25, ignoreSchedule: true };
      const planners: PlannerProcess[] = await Promise.all(
        [1, 2, 3].map((n) => startPlanner(database.env, { ...options, workerId: `tuesday-${n}`, seed: 10 + n })),
      );
      const victim = planners[1];
      for (const planner of planners) planner.go();

      // the victim holds a bucket and has committed part of it: killed there
      let killed: { bucket: number; planned: number } | undefined;
      for (let attempt = 0; attempt < 3_000 && !killed; attempt++) {
        const lease = await database.db
          .selectFrom('leases')
          .select('key')
          .where('owner', '=', 'tuesday-2')
          .where('key', 'like', 'plan:%')
          .executeTakeFirst();
        if (lease) {
          const bucket = Number(lease.key.slice('plan:'.length));
          const planned = (await plansOf(tuesday)).filter((p) => planBucketOf(p.mailbox_id, buckets) === bucket).length;
          if (planned > 0 && planned < bucketSize.get(bucket)! / 2) {
            victim.child.kill('SIGKILL');
            killed = { bucket, planned };
          }
        }
        if (!killed) await sleep(5);
      }
      expect(killed, 'the victim was caught halfway through a bucket').toBeDefined();
      expect((await victim.exited).signal).toBe('SIGKILL');
      const survivors = await Promise.all([planners[0].done, planners[2].done]);
      const { bucket } = killed!;

      // nobody touched the dead planner's bucket while its lease held; what it committed stayed
      const lease = await database.db
        .selectFrom('leases')
        .selectAll()
        .where('key', '=', `plan:${bucket}`)
        .executeTakeFirstOrThrow();
      expect(lease.owner).toBe('tuesday-2');
      const left = (await plansOf(tuesday)).filter((p) => planBucketOf(p.mailbox_id, buckets) === bucket);
      expect(left.length).toBeGreaterThanOrEqual(killed!.planned);
      expect(left.length).toBeLessThan(bucketSize.get(bucket)!);
      expect((await plansOf(tuesday)).length).toBe(POOL - bucketSize.get(bucket)! + left.length);
      for (const survivor of survivors) expect(survivor.ran, survivor.workerId).toBe(true);

      // once the lease has expired, the next planner takes the bucket over and finishes it
      const next = await startPlanner(database.env, {
        ...options,
        at: new Date(at.getTime() + LEASE_MS + 1_000),
        workerId: 'tuesday-4',
        seed: 14,
      });
      next.go();
      const report = await next.done;
      expect(report.mailboxes).toBe(bucketSize.get(bucket)! - left.length);

      const plans = await plansOf(tuesday);
      expect(plans).toHaveLength(POOL);
      expect(new Set(plans.map((p) => p.mailbox_id)).size).toBe(POOL);
      // over both days and all seven planners
      expect(await brokenRules(database.db, zoneOf)).toEqual([]);
    }, 240_000);
  },
);
