import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { acquireLease, releaseLease, withLease } from './leases.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.close());

const t0 = new Date('2026-03-02T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

describe('leases', () => {
  it('lets one owner hold a key until the lease expires, then another takes it over', async () => {
    expect(await acquireLease(database.db, 'sync:mb1', 'w1', 60_000, t0)).toBe(true);
    expect(await acquireLease(database.db, 'sync:mb1', 'w2', 60_000, later(30_000))).toBe(false);
    expect(await acquireLease(database.db, 'sync:mb1', 'w1', 60_000, later(30_000))).toBe(true);
    expect(await acquireLease(database.db, 'sync:mb1', 'w2', 60_000, later(89_000))).toBe(false);
    expect(await acquireLease(database.db, 'sync:mb1', 'w2', 60_000, later(90_000))).toBe(true);
  });

  it('gives exactly one winner when many claim at once', async () => {
    const owners = Array.from({ length: 8 }, (_, i) => `w${i}`);
    const results = await Promise.all(owners.map((o) => acquireLease(database.db, 'plan:2026-03-02', o, 60_000, t0)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('is free again after release, and withLease skips work while someone else holds it', async () => {
    expect(await acquireLease(database.db, 'k', 'a', 60_000, t0)).toBe(true);
    expect(await withLease(database.db, 'k', 'b', 60_000, t0, async () => 1)).toEqual({ ran: false });
    await releaseLease(database.db, 'k', 'a');
    expect(await withLease(database.db, 'k', 'b', 60_000, t0, async () => 1)).toEqual({ ran: true, result: 1 });
    expect(await acquireLease(database.db, 'k', 'c', 60_000, t0)).toBe(true);
  });
});
