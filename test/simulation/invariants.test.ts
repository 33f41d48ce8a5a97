// The invariant checks themselves: a hand-written run that breaks each bound once is caught on
// every one of them, and a run that keeps them all passes. Without this a check that could never
// fire would make the simulation green for nothing.
import { describe, expect, it } from 'vitest';
import type { WorldSend } from './mail-world.js';
import type { DayPlan, MailboxHistory, PoolRun } from './harness.js';
import { checkInvariants, coverage, type InvariantName } from './invariants.js';
import type { SimMailbox, SimPool } from './scenario.js';

const START = new Date('2026-03-02T00:00:00.000Z'); // a Monday

function at(day: string, time: string): Date {
  return new Date(`${day}T${time}:00.000Z`);
}

function mailbox(email: string, overrides: Partial<SimMailbox['warmup']> = {}): SimMailbox {
  return {
    email,
    warmup: {
      startVolume: 2,
      rampUpIncrement: 1,
      dailyLimit: 3,
      replyRate: 0,
      sendWindow: { start: '09:00', end: '17:00' },
      timezone: 'UTC',
      weekdaysOnly: false,
      ...overrides,
    },
    spamRate: 0,
    createAt: START,
    pauses: [],
  };
}

let counter = 0;
function send(from: string, to: string, when: Date, extra: Partial<WorldSend> = {}): WorldSend {
  counter += 1;
  return { at: when, from, to, messageId: `m${counter}@sim`, subject: 's', placement: 'inbox', ...extra };
}

function runOf(
  specs: SimMailbox[],
  sends: WorldSend[],
  plans: Record<string, Record<string, DayPlan>>,
  extra: Partial<PoolRun> = {},
): PoolRun {
  const pool: SimPool = {
    seed: 0,
    size: specs.length,
    days: 14,
    stepMinutes: 5,
    start: START,
    end: new Date(START.getTime() + 14 * 86_400_000),
    mailboxes: specs,
    downtimes: [],
    workers: 1,
  };
  const mailboxes = new Map<string, MailboxHistory>();
  for (const spec of specs) {
    const history: MailboxHistory = { id: spec.email, spec, activeFrom: [spec.createAt], pausedAt: [] };
    for (const pause of spec.pauses) {
      history.pausedAt.push(pause.from);
      if (pause.to) history.activeFrom.push(pause.to);
    }
    mailboxes.set(spec.email, history);
  }
  const planMap = new Map(
    Object.entries(plans).map(([id, days]) => [id, new Map(Object.entries(days))] as [string, Map<string, DayPlan>]),
  );
  return {
    pool,
    sends,
    mailboxes,
    plans: planMap,
    plannedMessageIds: new Set(sends.map((s) => s.messageId)),
    plannedAt: new Map(),
    cycles: 1,
    cycleErrors: [],
    ...extra,
  };
}

function plan(warmupDay: number): DayPlan {
  return { warmupDay, target: 0, planned: 0, capacity: null, createdAt: START.toISOString() };
}

describe('the simulation invariants', () => {
  it('catch each bound broken once', () => {
    const a = mailbox('a@one.sim', { weekdaysOnly: true });
    a.pauses = [{ from: at('2026-03-04', '00:00'), to: at('2026-03-05', '13:00') }];
    const b = mailbox('b@two.sim', { startVolume: 1 });
    const c = mailbox('c@three.sim');
    const day1 = '2026-03-02';
    const sends = [
      // four new threads to b in 22 minutes: gap, dailyLimit 3, ramp target ≤ 2, b's inbound ≤ 1 + 2
      send(a.email, b.email, at(day1, '10:00')),
      send(a.email, b.email, at(day1, '10:02')),
      send(a.email, b.email, at(day1, '10:12')),
      send(a.email, b.email, at(day1, '10:22')),
      send(a.email, c.email, at(day1, '18:00')), // after the window
      send(a.email, c.email, at('2026-03-04', '10:00')), // while paused, and a day without a plan
      send(a.email, c.email, at('2026-03-05', '14:00')), // resumed at 13:00 of a 09–17 window: share ≤ 2 of 3
      send(a.email, c.email, at('2026-03-05', '15:00')),
      send(a.email, c.email, at('2026-03-05', '16:00')),
      send(a.email, c.email, at('2026-03-07', '10:00')), // a Saturday with weekdaysOnly
      send(b.email, c.email, at('2026-03-10', '10:00')), // b sends in week 2 and receives nothing
      send(c.email, b.email, at(day1, '12:00'), { inReplyTo: 'never-sent-by-b@sim' }),
    ];
    const duplicate = { ...sends[0], at: at('2026-03-03', '11:00') };
    const unplanned = send(c.email, a.email, at('2026-03-03', '12:00'));
    const run = runOf(
      [a, b, c],
      [...sends, duplicate, unplanned],
      {
        [a.email]: { [day1]: plan(1), '2026-03-05': plan(2), '2026-03-06': plan(5) },
        [b.email]: { '2026-03-10': plan(1) },
        [c.email]: { [day1]: plan(1), '2026-03-03': plan(2) },
      },
      { cycleErrors: [{ at: START.toISOString(), step: 'send', message: 'boom' }] },
    );
    run.plannedMessageIds.delete(unplanned.messageId);

    const found = new Set(checkInvariants(run).map((v) => v.invariant));
    const all: InvariantName[] = [
      'window',
      'weekend',
      'min-gap',
      'daily-limit',
      'ramp-target',
      'ramp-jump',
      'no-plan',
      'late-start',
      'while-paused',
      'inbound',
      'reciprocity',
      'exactly-once',
      'engine-error',
    ];
    expect([...found].sort()).toEqual([...all].sort());
  });

  it('pass a run that keeps every bound', () => {
    const a = mailbox('a@one.sim');
    const b = mailbox('b@two.sim');
    const c = mailbox('c@three.sim');
    const first = send(a.email, b.email, at('2026-03-02', '10:00'));
    const sends = [
      first,
      send(b.email, a.email, at('2026-03-02', '11:00'), { inReplyTo: first.messageId }),
      send(c.email, a.email, at('2026-03-02', '12:00')),
      send(a.email, c.email, at('2026-03-02', '12:30')),
    ];
    const run = runOf([a, b, c], sends, {
      [a.email]: { '2026-03-02': plan(1) },
      [b.email]: { '2026-03-02': plan(1) },
      [c.email]: { '2026-03-02': plan(1) },
    });
    expect(checkInvariants(run)).toEqual([]);
  });

  it('count the mailbox-days they covered', () => {
    // 14 days from Monday 2 March, midnight UTC: a in UTC has 14 local days; b, created on the
    // third day in Tokyo (UTC+9), has its days from 4 March up to the 16th (the run ends at 09:00
    // there); c in Los Angeles (UTC−8) from 1 March, the local day the run begins in, to the 15th
    const a = mailbox('a@one.sim');
    const b = mailbox('b@two.sim', { timezone: 'Asia/Tokyo' });
    b.createAt = at('2026-03-03', '20:00');
    const c = mailbox('c@three.sim', { timezone: 'America/Los_Angeles' });
    const sends = [
      send(a.email, b.email, at('2026-03-05', '01:00')),
      send(a.email, c.email, at('2026-03-05', '02:00')),
      send(a.email, c.email, at('2026-03-06', '02:00')),
      send(c.email, a.email, at('2026-03-06', '02:00')), // 5 March in Los Angeles
      send(b.email, b.email, at('2026-03-06', '03:00')), // its round trip: not warmup mail
    ];
    const run = runOf([a, b, c], sends, {});
    expect(coverage(run)).toEqual({ mailboxDays: 14 + 13 + 15, sendingDays: 3, sendingMailboxes: 2 });
  });
});
