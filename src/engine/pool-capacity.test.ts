import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INBOUND_SLACK, PAIR_THREADS_PER_DAY } from './partners.js';
import {
  capacityMember,
  liftsOf,
  mailboxesToLift,
  pairCapacity,
  poolCapacity,
  poolOutlook,
  type CapacityMember,
} from './pool-capacity.js';

const memberArb = (i: number) =>
  fc.record({
    domain: fc.constantFrom('a.test', 'b.test', 'c.test', `own${i}.test`),
    wants: fc.nat(40),
    receives: fc.boolean(),
    windowMinutes: fc.integer({ min: 30, max: 720 }),
  });
const poolArb = fc
  .integer({ min: 1, max: 30 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => memberArb(i))))
  .map((specs) =>
    specs.map((spec, i) =>
      capacityMember(
        `m${String(i).padStart(2, '0')}`,
        spec.domain,
        spec.wants,
        spec.windowMinutes,
        spec.receives || i % 4 !== 0,
      ),
    ),
  );

/** Each on a domain of its own, all wanting `wants`, in a working day's window. */
function uniformPool(size: number, wants: number): CapacityMember[] {
  return Array.from({ length: size }, (_, i) => capacityMember(`m${i}`, `d${i}.test`, wants, 480));
}

describe('poolCapacity: what the pool carries', () => {
  it('never carries more for a sender than its pairs allow, nor takes in more than a receiver’s cap', () => {
    fc.assert(
      fc.property(poolArb, (pool) => {
        const capacity = poolCapacity(pool);
        for (const sender of pool) {
          const pairs = pool.reduce((sum, receiver) => sum + pairCapacity(sender, receiver, pool.length >= 3), 0);
          expect(capacity.get(sender.id)!.send).toBeLessThanOrEqual(pairs);
          expect(capacity.get(sender.id)!.receive).toBe(sender.inboundCap);
        }
      }),
    );
  });

  it('what it carries for the senders it holds back is never above the sum of the receivers’ caps', () => {
    fc.assert(
      fc.property(poolArb, (pool) => {
        const capacity = poolCapacity(pool);
        const carried = pool.reduce((sum, m) => sum + Math.min(m.wants, capacity.get(m.id)!.send), 0);
        expect(carried).toBeLessThanOrEqual(pool.reduce((sum, m) => sum + m.inboundCap, 0));
      }),
    );
  });

  it('a pair carries at most PAIR_THREADS_PER_DAY a day, and a window too short for the spacing carries one', () => {
    const [a, b, c] = uniformPool(3, 20);
    expect(pairCapacity(a, b, true)).toBe(PAIR_THREADS_PER_DAY);
    expect(pairCapacity({ ...a, windowMinutes: 60 }, b, true)).toBe(1);
    expect(pairCapacity(a, a, true)).toBe(0);
    // a young receiver (1 a day: cap 3) takes one thread from each sender
    expect(pairCapacity(a, capacityMember('young', 'y.test', 1, 480), true)).toBe(1);
    expect(poolCapacity([a, b, c]).get(a.id)!.send).toBe(2 * PAIR_THREADS_PER_DAY);
  });

  it('a ramp that outgrows its pool plateaus: more wanted never lowers what the pool carries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 1, max: 60 }), fc.nat(30), (size, wants, more) => {
        const low = poolCapacity(uniformPool(size, wants));
        const high = poolCapacity(uniformPool(size, wants + more));
        for (const id of low.keys())
          expect(Math.min(wants + more, high.get(id)!.send)).toBeGreaterThanOrEqual(Math.min(wants, low.get(id)!.send));
      }),
    );
  });

  // from three members on: in a pool of two the receiver share does not apply (there is no other sender)
  it('is monotone in the pool’s size: another mailbox on another domain never lowers anyone’s capacity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 20 }), fc.integer({ min: 1, max: 40 }), (size, wants) => {
        const before = poolCapacity(uniformPool(size, wants));
        const after = poolCapacity(uniformPool(size + 1, wants));
        // what it carries of what each wants (the headroom above it is shared with the newcomer)
        for (const [id, capacity] of before)
          expect(Math.min(wants, after.get(id)!.send)).toBeGreaterThanOrEqual(Math.min(wants, capacity.send));
      }),
    );
  });

  it('carries every ramp of a large enough pool whole', () => {
    const capacity = poolCapacity(uniformPool(12, 20));
    for (const c of capacity.values()) expect(c.send).toBeGreaterThanOrEqual(20);
  });
});

describe('what would lift it', () => {
  it('counts the mailboxes on new domains the model needs, not one per missing email', () => {
    // three mailboxes wanting 18 a day carry 6 each (2 partners × 3 threads)
    const pool = uniformPool(3, 18);
    expect(poolCapacity(pool).get('m0')!.send).toBe(6);
    const k = mailboxesToLift(pool, 'm0')!;
    // with k more, m0 has k + 2 partners, each carrying 3: 3 × (k + 2) ≥ 18
    expect(k).toBe(4);
    expect(
      poolCapacity([...pool, ...uniformPool(k, 18).map((m, i) => ({ ...m, id: `x${i}`, domain: `x${i}.test` }))]).get(
        'm0',
      )!.send,
    ).toBeGreaterThanOrEqual(18);
    expect(mailboxesToLift(uniformPool(12, 18), 'm0')).toBe(0);
  });

  it('states the workspace’s pool in one line of data', () => {
    const pool = [...uniformPool(3, 17), capacityMember('m3', 'd3.test', 19, 480)];
    expect(poolOutlook(pool)).toEqual({ members: 4, carries: 9, wants: { min: 17, max: 19 }, held: 4, moreDomains: 4 });
    expect(poolOutlook(uniformPool(12, 10))).toMatchObject({ carries: 10, held: 0, moreDomains: 0 });
  });

  it('finds in one pass what lifts each held member, as mailboxesToLift finds it for that member alone', () => {
    fc.assert(
      fc.property(poolArb, (pool) => {
        const capacity = poolCapacity(pool);
        const lifts = liftsOf(pool, capacity);
        for (const member of pool) {
          const held = member.wants > 0 && capacity.get(member.id)!.send < member.wants;
          expect(lifts.has(member.id)).toBe(held);
          if (held) expect(lifts.get(member.id)).toBe(mailboxesToLift(pool, member.id) ?? null);
        }
      }),
      { numRuns: 15 },
    );
    // the three mailboxes wanting 18 of the example above: each needs 4 more
    expect(liftsOf(uniformPool(3, 18))).toEqual(
      new Map([
        ['m0', 4],
        ['m1', 4],
        ['m2', 4],
      ]),
    );
    expect(liftsOf(uniformPool(12, 18)).size).toBe(0);
  });

  it('knows a receiver that takes no mail adds no capacity', () => {
    const pool = [...uniformPool(2, 10), capacityMember('auto', 'auto.test', 10, 480, false)];
    expect(poolCapacity(pool).get('m0')!.send).toBe(poolCapacity(uniformPool(2, 10)).get('m0')!.send);
    expect(poolCapacity(pool).get('auto')!.receive).toBe(0);
    expect(poolCapacity(uniformPool(2, 10)).get('m0')!.receive).toBe(10 + INBOUND_SLACK);
  });
});
