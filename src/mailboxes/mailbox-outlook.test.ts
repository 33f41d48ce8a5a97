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

  it('a pool too small for the ramp says what the capacity model found would lift it, and needs attention', () => {
    const held = { dailyTarget: 6, rampTarget: 18, limitedBy: 'pool_too_small', planCapacity: 6, planLift: 4 };
    const outlook = describeOutlook(input(held), NOW);
    expect(outlook.limitedBy).toBe('pool_too_small');
    // the model's 4 more domains, not one mailbox per missing email (12)
    expect(outlook.limitReason).toBe(
      'The pool carries 6 of the 18 emails a day its ramp wants: connect mailboxes on 4 more domains, or lower its daily limit to 6.',
    );
    expect(outlook.attention.map((a) => a.kind)).toEqual(['pool_too_small']);
    expect(outlook.state).toMatchObject({
      kind: 'held_by_pool',
      tone: 'warn',
      reason: outlook.limitReason,
      pool: { carries: 6, wants: 18, moreDomains: 4 },
    });
    // beyond the model's reach
    expect(describeOutlook(input({ ...held, planLift: null }), NOW).state.reason).toMatch(/on many more domains/);
  });

  describe('its state: one definition, the first that applies', () => {
    it('on track, or waiting for its window; neither is held', () => {
      const sending = describeOutlook(input({ nextSendAt: '2026-11-26T08:12:00.000Z' }), NOW).state;
      expect(sending).toMatchObject({ kind: 'on_track', tone: 'good', label: 'Warming up', since: null, pool: null });
      // 06:30 in Berlin, its window opens at 08:00
      const early = describeOutlook(input(), NOW).state;
      expect(early).toMatchObject({
        kind: 'waiting',
        reason: 'Next sends from 08:00 Europe/Berlin, when its send window opens.',
      });
      // a Saturday with weekdaysOnly: Monday
      const weekend = describeOutlook(
        input({ warmup: { ...DEFAULT_WARMUP, timezone: 'Europe/Berlin', weekdaysOnly: true } }),
        new Date('2026-11-28T11:00:00.000Z'),
      ).state;
      expect(weekend).toMatchObject({ kind: 'waiting', reason: expect.stringMatching(/^Next sends from Mon 08:00/) });
    });

    it('held by spam when the guard slowed it or its spam rate is over the line, before any pool hold', () => {
      const pool = { rampTarget: 18, dailyTarget: 6, limitedBy: 'pool_too_small', planCapacity: 6, planLift: 4 };
      const slowed = describeOutlook(
        input({ ...pool, slowedByGuard: true, week: { sent: 9, found: 2, spam: 2, bounced: 0 } }),
        NOW,
      );
      expect(slowed.state).toMatchObject({ kind: 'held_by_spam', tone: 'bad' });
      expect(slowed.state.reason).toMatch(/^The health guard halved its volume/);
      const junked = describeOutlook(input({ week: { sent: 31, found: 31, spam: 31, bounced: 0 } }), NOW);
      expect(junked.state).toMatchObject({
        kind: 'held_by_spam',
        reason: expect.stringMatching(/^100 % of its emails landed in spam/),
      });
    });

    it('stopped since when and why; paused by its owner or the DNS rule; joining before its proof', () => {
      const stoppedAt = '2026-11-25T14:03:00.000Z';
      const stopped = describeOutlook(
        input({ status: 'error', lastError: 'Warmup stopped: 31 of 31 found in spam', stoppedAt }),
        NOW,
      ).state;
      expect(stopped).toEqual({
        kind: 'stopped',
        label: 'Stopped',
        tone: 'bad',
        reason: 'Warmup stopped: 31 of 31 found in spam',
        since: stoppedAt,
        pool: null,
      });
      const dns = describeOutlook(input({ status: 'paused', pausedFor: 'dns', lastError: 'SPF fails' }), NOW).state;
      expect(dns).toMatchObject({ kind: 'paused', tone: 'neutral', reason: 'SPF fails' });
      expect(describeOutlook(input({ status: 'paused' }), NOW).state.reason).toMatch(
        /^Paused: it sends and reads nothing/,
      );
      const joining = describeOutlook(input({ inPool: false, poolReason: 'not proven yet' }), NOW).state;
      expect(joining).toMatchObject({ kind: 'joining', reason: 'Waiting to join the warmup pool: not proven yet.' });
    });
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

  it('a receiver found filing most senders into spam is named with the fix', () => {
    const outlook = describeOutlook(input({ filtering: { junkedSenders: 4, senders: 4 } }), NOW);
    expect(outlook.attention.map((a) => a.kind)).toEqual(['receiver_filtering']);
    expect(outlook.attention[0]!.message).toMatch(
      /^Its filter files warmup mail from 4 of 4 senders into spam while other receivers find it in the inbox.*allow rule for the pool's addresses/,
    );
    expect(outlook.readyForCampaigns).toBe(false);
    // What is missing is said as what to do, never as "needs … nothing needing attention".
    expect(outlook.readiness).toMatch(/, the point under Needs attention fixed\.$/);
    expect(outlook.readiness).not.toMatch(/nothing needing attention/);
    const two = describeOutlook(input({ week: { sent: 10, found: 10, spam: 5, bounced: 1 } }), NOW);
    expect(two.readiness).toMatch(/the 2 points under Needs attention fixed\.$/);
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
