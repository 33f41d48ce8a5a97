import { describe, expect, it } from 'vitest';
import { createFailedAuthLimiter } from './auth.js';

describe('createFailedAuthLimiter', () => {
  it('blocks an address after maxFailures in a window, says how long, and lets it try again after', () => {
    let now = 1_000_000;
    const limiter = createFailedAuthLimiter({ maxFailures: 3, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 2; i++) limiter.recordFailure('192.0.2.1');
    expect(limiter.retryAfter('192.0.2.1')).toBe(0);
    limiter.recordFailure('192.0.2.1');
    expect(limiter.retryAfter('192.0.2.1')).toBe(60);
    expect(limiter.retryAfter('192.0.2.2')).toBe(0);

    now += 45_500;
    expect(limiter.retryAfter('192.0.2.1')).toBe(15);
    now += 14_500;
    expect(limiter.retryAfter('192.0.2.1')).toBe(0);
    limiter.recordFailure('192.0.2.1');
    expect(limiter.retryAfter('192.0.2.1')).toBe(0);
  });
});
