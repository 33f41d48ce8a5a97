import { describe, expect, it } from 'vitest';
import { describeOutlook, type OutlookInput } from './mailbox-outlook.js';
import { DEFAULT_WARMUP } from './warmup-settings.js';

const NOW = new Date('2026-11-26T05:30:00.000Z'); // a Thursday, 06:30 in Berlin

function input(overrides: Partial<OutlookInput> = {}): OutlookInput {
  return {
    status: 'active',
    warmup: { ...DEFAULT_WARMUP, timezone: 'Europe/Berlin' },
    reputation: 50,
    warmupDay: 1,
    dailyTarget: 2,
    rampTarget: 2,
    limitedBy: null,
    lastError: null,
    inPool: true,
    poolReason: null,
    slowedByGuard: false,
    nextSendAt: null,
    lastPlanDay: null,
    week: { sent: 0, found: 0, spam: 0, bounced: 0 },
    ...overrides,
  };
}

describe('describeOutlook', () => {
  it('says when the next send is, in the mailbox time zone', () => {
    const outlook = describeOutlook(input({ nextSendAt: '2026-11-26T08:12:00.000Z' }), NOW);
    expect(outlook.summary).toBe('Next send at 09:12 Europe/Berlin (2 sends planned for the day).');
    expect(outlook.attention).toEqual([]);
  });

  it('before the window opens, says when it opens', () => {
    expect(describeOutlook(input(), NOW).summary).toBe(
      'Next sends from 08:00 Europe/Berlin, when its send window opens.',
    );
    // planned today and nothing left: tomorrow's window
    const done = describeOutlook(input({ lastPlanDay: '2026-11-26' }), new Date('2026-11-26T12:00:00.000Z'));
    expect(done.summary).toBe('Next sends from Fri 08:00 Europe/Berlin, when its send window opens.');
  });

  it('a mailbox that answers automatically needs attention, with why it receives no warmup mail, and is not ready', () => {
    const reason = 'This mailbox answers warmup mail automatically (out of office or vacation) …';
    const outlook = describeOutlook(input({ autoReplyReason: reason }), NOW);
    expect(outlook.attention).toEqual([{ kind: 'auto_reply', message: reason }]);
    expect(outlook.readyForCampaigns).toBe(false);
  });

  it('a pool too small for the ramp says how many mailboxes to add, and needs attention', () => {
    const outlook = describeOutlook(input({ dailyTarget: 1, rampTarget: 3, limitedBy: 'pool_too_small' }), NOW);
    expect(outlook.limitedBy).toBe('pool_too_small');
    expect(outlook.limitReason).toBe(
      'The pool is too small for its ramp: 1 of 3 emails planned on its last day. Add 2 mailboxes on other domains.',
    );
    expect(outlook.attention.map((a) => a.kind)).toEqual(['pool_too_small']);
  });

  it('lists every threshold crossed: spam rate over 10 % of 5 or more found, any bounce, the guard', () => {
    const junked = describeOutlook(
      input({ slowedByGuard: true, week: { sent: 10, found: 5, spam: 3, bounced: 1 } }),
      NOW,
    );
    expect(junked.attention.map((a) => a.kind)).toEqual(['slowed_by_guard', 'spam_rate', 'bounces']);
    expect(junked.attention[1]!.message).toMatch(/^60 % of its emails landed in spam .*\(3 of 5 found\)/);
    expect(junked.attention[2]!.message).toMatch(/^1 email bounced/);
    // 4 found is too few to judge a rate
    expect(describeOutlook(input({ week: { sent: 4, found: 4, spam: 4, bounced: 0 } }), NOW).attention).toEqual([]);
  });

  it('a mailbox the guard stopped is told apart from one stopped by a login failure', () => {
    const guard = describeOutlook(input({ status: 'error', lastError: 'Warmup stopped: 45% of …' }), NOW);
    expect(guard.attention.map((a) => a.kind)).toEqual(['stopped_by_guard']);
    const login = describeOutlook(input({ status: 'error', lastError: 'IMAP login refused: …' }), NOW);
    expect(login.attention.map((a) => a.kind)).toEqual(['stopped']);
    expect(login.summary).toMatch(/^Stopped/);
  });

  it('ready for campaigns only by the documented rule, and says what is missing', () => {
    const young = describeOutlook(input({ warmupDay: 3, reputation: 55 }), NOW);
    expect(young.readyForCampaigns).toBe(false);
    expect(young.readiness).toMatch(/14 warmup days \(now 3\).*reputation of 80 \(now 55\)/);
    const warmed = describeOutlook(
      input({ warmupDay: 20, reputation: 92, week: { sent: 60, found: 58, spam: 2, bounced: 0 } }),
      NOW,
    );
    expect(warmed.readyForCampaigns).toBe(true);
    expect(warmed.readiness).toMatch(/^Ready for campaigns/);
  });
});
