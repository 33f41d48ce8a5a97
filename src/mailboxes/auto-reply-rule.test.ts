import { describe, expect, it } from 'vitest';
import { answersAutomatically, AUTO_REPLY_QUIET_DAYS, receivesAgainAt } from './auto-reply-rule.js';

describe('the automatic-reply rule', () => {
  const seen = '2026-03-10T12:00:00.000Z';

  it(`holds for ${AUTO_REPLY_QUIET_DAYS} days after the last automatic reply, then ends by itself`, () => {
    expect(receivesAgainAt(seen).toISOString()).toBe('2026-03-13T12:00:00.000Z');
    expect(answersAutomatically(seen, new Date('2026-03-10T12:00:00.000Z'))).toBe(true);
    expect(answersAutomatically(seen, new Date('2026-03-13T11:59:59.999Z'))).toBe(true);
    expect(answersAutomatically(seen, new Date('2026-03-13T12:00:00.000Z'))).toBe(false);
  });

  it('does not hold for a mailbox that never answered automatically', () => {
    expect(answersAutomatically(null, new Date(seen))).toBe(false);
  });
});
