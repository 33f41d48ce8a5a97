import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  candidatesFor,
  choosePartners,
  emailDomain,
  isEligible,
  PAIR_SPACING_MS,
  PAIR_THREADS_PER_DAY,
  PAIR_TRUST_STEP,
  pairAllows,
  pairDayLimit,
  partnerWeight,
  receiverShareLimit,
  type PartnerCandidate,
} from './partners.js';
import { seededRandom } from './random.js';

const DOMAINS = ['alpha.test', 'beta.test', 'gamma.test'];
const SENDER_DOMAIN = 'alpha.test';

const candidateArb = fc.record({
  mailboxId: fc.string({ minLength: 1, maxLength: 8 }),
  domain: fc.constantFrom(...DOMAINS),
  inbound: fc.nat(30),
  outbound: fc.nat(30),
  pairWeek: fc.nat(5),
  pairToday: fc.nat(2),
  inboundToday: fc.nat(6),
  inboundCap: fc.integer({ min: 1, max: 6 }),
});
const poolArb = fc.uniqueArray(candidateArb, { selector: (c) => c.mailboxId, maxLength: 25 });
const choiceArb = fc.record({ candidates: poolArb, count: fc.nat(30), seed: fc.integer() });

function choose(candidates: PartnerCandidate[], count: number, seed: number): PartnerCandidate[] {
  return choosePartners({ senderDomain: SENDER_DOMAIN, candidates, count, random: seededRandom(seed) });
}

function candidate(mailboxId: string, overrides: Partial<PartnerCandidate> = {}): PartnerCandidate {
  return {
    mailboxId,
    domain: 'beta.test',
    inbound: 0,
    outbound: 0,
    pairWeek: 0,
    pairToday: 0,
    inboundToday: 0,
    inboundCap: Number.POSITIVE_INFINITY,
    ...overrides,
  };
}

describe('choosePartners: the rules hold for any pool', () => {
  it('never picks more than asked, nor anyone twice', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        const picked = choose(candidates, count, seed);
        expect(picked.length).toBeLessThanOrEqual(count);
        expect(new Set(picked.map((p) => p.mailboxId)).size).toBe(picked.length);
      }),
    );
  });

  it('never writes to a partner beyond the pair’s day limit, nor beyond its share of the receiver', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        for (const partner of choose(candidates, count, seed)) {
          expect(partner.pairToday).toBeLessThan(PAIR_THREADS_PER_DAY);
          expect(partner.pairToday).toBeLessThan(pairDayLimit(partner.pairWeek - partner.pairToday));
          expect(partner.pairToday).toBeLessThan(Math.max(1, Math.floor(partner.inboundCap / 2)));
        }
      }),
    );
  });

  it('never writes to a mailbox that already has its own day’s worth of new threads (+ slack)', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        for (const partner of choose(candidates, count, seed)) {
          expect(partner.inboundToday).toBeLessThan(partner.inboundCap);
        }
      }),
    );
  });

  it('sends as much as the rules allow: min(count, eligible partners)', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        const eligible = candidates.filter(isEligible).length;
        expect(choose(candidates, count, seed)).toHaveLength(Math.min(count, eligible));
      }),
    );
  });

  it('takes a partner on its own domain only when every eligible other domain is already taken', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        const picked = choose(candidates, count, seed);
        if (!picked.some((p) => p.domain === SENDER_DOMAIN)) return;
        const otherEligible = candidates.filter((c) => isEligible(c) && c.domain !== SENDER_DOMAIN);
        expect(picked.filter((p) => p.domain !== SENDER_DOMAIN)).toHaveLength(otherEligible.length);
      }),
    );
  });

  it('gives the same answer for the same seed, whatever order the pool came in', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        const forward = choose(candidates, count, seed).map((p) => p.mailboxId);
        const backward = choose([...candidates].reverse(), count, seed).map((p) => p.mailboxId);
        expect(backward).toEqual(forward);
      }),
    );
  });
});

describe('choosePartners: preferences', () => {
  function pickCounts(candidates: PartnerCandidate[], count: number, trials: number): Map<string, number> {
    const random = seededRandom(42);
    const counts = new Map<string, number>();
    for (let i = 0; i < trials; i++) {
      for (const p of choosePartners({ senderDomain: SENDER_DOMAIN, candidates, count, random })) {
        counts.set(p.mailboxId, (counts.get(p.mailboxId) ?? 0) + 1);
      }
    }
    return counts;
  }

  it('prefers the partner that received least lately', () => {
    const counts = pickCounts(
      [candidate('quiet', { inbound: 0, outbound: 10 }), candidate('busy', { inbound: 9, outbound: 10 })],
      1,
      2000,
    );
    // weights 1 : 1/10, so "quiet" wins about 91% of the draws
    expect(counts.get('quiet') ?? 0).toBeGreaterThan(1700);
    expect(counts.get('busy') ?? 0).toBeGreaterThan(50);
  });

  it('holds back a partner whose inbound already exceeds its outbound (reciprocity)', () => {
    const counts = pickCounts(
      [candidate('balanced', { inbound: 4, outbound: 4 }), candidate('swamped', { inbound: 4, outbound: 0 })],
      1,
      2000,
    );
    expect(counts.get('balanced') ?? 0).toBeGreaterThan(3 * (counts.get('swamped') ?? 0));
    expect(partnerWeight(candidate('x', { inbound: 4, outbound: 0 }))).toBeCloseTo(1 / 5 / 5);
  });

  it('picks another domain first even when it is busier', () => {
    const pool = [
      candidate('same', { domain: SENDER_DOMAIN }),
      candidate('other', { domain: 'beta.test', inbound: 20 }),
    ];
    for (let seed = 0; seed < 50; seed++) {
      expect(choose(pool, 1, seed).map((p) => p.mailboxId)).toEqual(['other']);
    }
    expect(choose(pool, 2, 1).map((p) => p.mailboxId)).toEqual(['other', 'same']);
  });

  it('sends fewer when the pool is too small, never to an excluded partner', () => {
    const pool = [
      // a new pair has written once today: its one thread of the day is spent
      candidate('today', { pairToday: 1, pairWeek: 1 }),
      // an old pair at the day limit
      candidate('full', { pairToday: PAIR_THREADS_PER_DAY, pairWeek: 20 }),
      // an old pair with room left today
      candidate('free', { pairToday: 1, pairWeek: 10 }),
    ];
    expect(choose(pool, 3, 7).map((p) => p.mailboxId)).toEqual(['free']);
  });
});

describe('candidatesFor', () => {
  it('leaves out the sender and the same address connected in another workspace, and fills in the counts', () => {
    const sender = { id: 'm1', emailNormalized: 'ann@alpha.test' };
    const pool = [
      sender,
      { id: 'm2', emailNormalized: 'ann@alpha.test' },
      { id: 'm3', emailNormalized: 'bob@Beta.test' },
    ];
    const candidates = candidatesFor(
      sender,
      pool,
      new Map([['m3', { inbound: 2, outbound: 5 }]]),
      new Map([['m3', { week: 2, today: 1 }]]),
      new Map([['m3', { today: 3, cap: 4 }]]),
    );
    expect(candidates).toEqual([
      {
        mailboxId: 'm3',
        domain: 'beta.test',
        inbound: 2,
        outbound: 5,
        pairWeek: 2,
        pairToday: 1,
        inboundToday: 3,
        inboundCap: 4,
      },
    ]);
  });

  it('leaves out a mailbox whose owner answers automatically', () => {
    const sender = { id: 'm1', emailNormalized: 'ann@alpha.test' };
    const pool = [
      sender,
      { id: 'm2', emailNormalized: 'bob@beta.test', answersAutomatically: true },
      { id: 'm3', emailNormalized: 'cat@gamma.test', answersAutomatically: false },
    ];
    expect(candidatesFor(sender, pool, new Map(), new Map()).map((c) => c.mailboxId)).toEqual(['m3']);
  });

  it('emailDomain is the lower-cased part after the @', () => {
    expect(emailDomain('Ann.Lee@Mail.Example.COM')).toBe('mail.example.com');
  });
});

describe('the pair and receiver rules', () => {
  it('a pair earns its daily threads: 1 a day between strangers, up to PAIR_THREADS_PER_DAY', () => {
    expect(pairDayLimit(0)).toBe(1);
    expect(pairDayLimit(PAIR_TRUST_STEP - 1)).toBe(1);
    expect(pairDayLimit(PAIR_TRUST_STEP)).toBe(2);
    expect(pairDayLimit(1000)).toBe(PAIR_THREADS_PER_DAY);
    fc.assert(
      fc.property(fc.nat(100), fc.nat(100), (a, b) => {
        expect(pairDayLimit(Math.min(a, b))).toBeLessThanOrEqual(pairDayLimit(Math.max(a, b)));
      }),
    );
  });

  it('no sender takes more than half a receiver’s day when the pool has others, at least one', () => {
    expect(receiverShareLimit(3, true)).toBe(1);
    expect(receiverShareLimit(10, true)).toBe(5);
    expect(receiverShareLimit(1, true)).toBe(1);
    // a pool of two: the only sender may fill the receiver's day
    expect(receiverShareLimit(10, false)).toBe(10);
  });

  it('two threads of one pair are PAIR_SPACING_MS apart', () => {
    const at = Date.parse('2026-03-02T10:00:00Z');
    const pair = { week: 20, today: 1, times: [at] };
    expect(pairAllows(pair, at + PAIR_SPACING_MS - 1000, 20, true)).toBe(false);
    expect(pairAllows(pair, at - PAIR_SPACING_MS + 1000, 20, true)).toBe(false);
    expect(pairAllows(pair, at + PAIR_SPACING_MS, 20, true)).toBe(true);
  });

  it('allows a pair several threads a day once it corresponds, where the old weekly cap allowed none', () => {
    const at = Date.parse('2026-03-02T10:00:00Z');
    // 6 threads over the last days, 2 already today: colleagues write a third time
    expect(pairAllows({ week: 8, today: 2, times: [at - 4 * 3_600_000, at - 2 * 3_600_000] }, at, 20, true)).toBe(true);
    expect(pairAllows({ week: 9, today: 3 }, at, 20, true)).toBe(false);
  });
});
