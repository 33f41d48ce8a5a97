import { describe, expect, it } from 'vitest';
import { htmlToText, pickSeeds } from './placement-tests.service.js';

describe('pickSeeds', () => {
  const pool = [
    { id: 'g1', provider: 'gmail' },
    { id: 'g2', provider: 'gmail' },
    { id: 'g3', provider: 'gmail' },
    { id: 'o1', provider: 'outlook' },
    { id: 'y1', provider: 'yahoo' },
  ];

  it('takes one of each provider before a second of any', () => {
    for (let run = 0; run < 20; run++) {
      const picked = pickSeeds(pool, 3);
      expect(picked.map((seed) => seed.provider).sort()).toEqual(['gmail', 'outlook', 'yahoo']);
    }
    const four = pickSeeds(pool, 4);
    expect(four.filter((seed) => seed.provider === 'gmail')).toHaveLength(2);
  });

  it('never picks more than the limit nor a seed twice, and stops when the pool is used up', () => {
    const all = pickSeeds(pool, 10);
    expect(all).toHaveLength(pool.length);
    expect(new Set(all.map((seed) => seed.id)).size).toBe(pool.length);
    expect(pickSeeds(pool, 1)).toHaveLength(1);
    expect(pickSeeds([], 10)).toEqual([]);
  });
});

describe('htmlToText', () => {
  it('keeps the words and line breaks of an HTML body, without its tags', () => {
    expect(htmlToText('<p>Hello &amp; welcome,</p><p>see <a href="https://x.test">our offer</a><br>Bye</p>')).toBe(
      'Hello & welcome,\nsee our offer\nBye',
    );
  });

  it('runs in linear time on hostile input', () => {
    const started = performance.now();
    htmlToText('<'.repeat(100_000) + '<p'.repeat(50_000));
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
