import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  candidatesFor,
  choosePartners,
  emailDomain,
  isEligible,
  PAIR_LIMIT_PER_WEEK,
  partnerWeight,
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

  it('never writes to a partner twice a day, nor more than 3 times in 7 days', () => {
    fc.assert(
      fc.property(choiceArb, ({ candidates, count, seed }) => {
        for (const partner of choose(candidates, count, seed)) {
          expect(partner.pairToday).toBe(0);
          expect(partner.pairWeek).toBeLessThan(PAIR_LIMIT_PER_WEEK);
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
      candidate('today', { pairToday: 1, pairWeek: 1 }),
      candidate('week', { pairWeek: PAIR_LIMIT_PER_WEEK }),
      candidate('free', { pairWeek: PAIR_LIMIT_PER_WEEK - 1 }),
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

  it('emailDomain is the lower-cased part after the @', () => {
    expect(emailDomain('Ann.Lee@Mail.Example.COM')).toBe('mail.example.com');
  });
});
