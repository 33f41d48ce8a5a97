import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './random.js';
import {
  judgeDueSends,
  lateShare,
  MIN_SEND_GAP_MS,
  nextDayOpening,
  nextSendSlot,
  nextWindowOpening,
  OVERDUE_GRACE_MS,
  REASON_DAY_OVER,
  REASON_NO_ROOM,
  restOfDayBudget,
  sendWindow,
  sendsThatFit,
  type ScheduleSettings,
  type SenderDay,
  type SendVerdict,
  type WaitingSend,
} from './send-budget.js';

const MINUTE = 60_000;
const UTC: ScheduleSettings = { sendWindow: { start: '09:00', end: '17:00' }, timezone: 'UTC', weekdaysOnly: false };
const MONDAY = '2025-03-03';
const at = (time: string, day = MONDAY) => new Date(`${day}T${time}:00Z`);

function today(overrides: Partial<SenderDay> = {}): SenderDay {
  return { settings: UTC, day: MONDAY, budget: 10, sent: 0, lastSentAt: null, ...overrides };
}

function row(id: string, dueAt: Date, overrides: Partial<WaitingSend> = {}): WaitingSend {
  return { id, kind: 'initial', dueAt, planDay: MONDAY, ...overrides };
}

function judge(input: Partial<Parameters<typeof judgeDueSends>[0]> & { rows: WaitingSend[]; now: Date }) {
  return judgeDueSends({
    today: today(),
    reservedLater: { replies: 0, threads: 0 },
    ignoreSchedule: false,
    random: seededRandom(1),
    ...input,
  });
}

function byAction(verdicts: SendVerdict[], action: SendVerdict['action']): string[] {
  return verdicts.filter((v) => v.action === action).map((v) => v.id);
}

describe('late share', () => {
  const window = sendWindow(UTC, MONDAY);

  it('is the whole target before the window, nothing after it, the rest-of-window share in between', () => {
    expect(lateShare(8, window, at('07:00'))).toBe(8);
    expect(lateShare(8, window, at('09:00'))).toBe(8);
    expect(lateShare(8, window, at('13:00'))).toBe(4);
    expect(lateShare(8, window, at('16:00'))).toBe(1);
    expect(lateShare(40, window, at('16:50'))).toBe(1);
    expect(lateShare(8, window, at('17:00'))).toBe(0);
  });

  it('never gives more than fits in the rest of the window at the minimum gap, nor more than the target', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 10 * 60 }), (target, minutes) => {
        const when = new Date(at('08:00').getTime() + minutes * MINUTE);
        const share = lateShare(target, window, when);
        expect(share).toBeLessThanOrEqual(target);
        const from = when > window.start ? when : window.start;
        expect(share).toBeLessThanOrEqual(sendsThatFit(from, window.end));
        const left = Math.max(0, window.end.getTime() - from.getTime()) / (8 * 60 * MINUTE);
        expect(share).toBeLessThanOrEqual(Math.round(target * left));
      }),
    );
  });
});

describe('rest of the day', () => {
  // window 09:00–17:00 UTC, budget 10
  it('is the budget less the sends when the mailbox was active all along and nothing is late', () => {
    expect(restOfDayBudget(today({ sent: 3 }), [row('a', at('12:00'))], at('12:10'))).toBe(7);
  });

  it('back inside the window of a day planned before: the late share from then on, even with nothing overdue', () => {
    // resumed at 13:00 (half the window left): 5, less the one sent since
    const restart = { at: at('13:00'), sentSince: 1 };
    expect(restOfDayBudget(today({ sent: 1 }), [row('a', at('14:00'))], at('14:05'), restart)).toBe(4);
    // sends before the pause count on the day's budget only
    expect(restOfDayBudget(today({ sent: 7 }), [], at('13:05'), { at: at('13:00'), sentSince: 0 })).toBe(3);
    // back before the window opened: the whole day
    expect(restOfDayBudget(today(), [], at('09:05'), { at: at('08:00'), sentSince: 0 })).toBe(10);
  });

  it('with mail overdue past the grace: the late share from now on', () => {
    expect(restOfDayBudget(today(), [row('a', at('10:00'))], at('13:00'))).toBe(5);
    expect(restOfDayBudget(today(), [row('a', at('12:50'))], at('13:00'))).toBe(10);
  });
});

describe('next send slot', () => {
  it('waits for the window, the gap and the budget', () => {
    expect(nextSendSlot(today(), at('07:00'))).toEqual(at('09:00'));
    expect(nextSendSlot(today({ lastSentAt: at('10:00') }), at('10:01'))).toEqual(at('10:04'));
    expect(nextSendSlot(today({ sent: 10 }), at('10:00'))).toBeNull();
    expect(nextSendSlot(today({ budget: 0 }), at('10:00'))).toBeNull();
    expect(nextSendSlot(today(), at('17:00'))).toBeNull();
    expect(nextSendSlot(today({ lastSentAt: at('16:57') }), at('16:58'))).toBeNull();
  });

  it('has none on a weekend with weekdaysOnly', () => {
    const weekdays = { ...UTC, weekdaysOnly: true };
    expect(nextSendSlot(today({ settings: weekdays, day: '2025-03-08' }), at('10:00', '2025-03-08'))).toBeNull();
    expect(nextWindowOpening(weekdays, at('10:00', '2025-03-08'))).toEqual({
      at: at('09:00', '2025-03-10'),
      day: '2025-03-10',
    });
  });

  it('the next window is in the mailbox’s own zone', () => {
    const ny = { ...UTC, timezone: 'America/New_York' };
    // 23:00 UTC is 18:00 in New York (EST): today's window is over
    expect(nextWindowOpening(ny, at('23:00'))).toEqual({ at: at('14:00', '2025-03-04'), day: '2025-03-04' });
    expect(nextDayOpening(ny, MONDAY)).toEqual({ at: at('14:00', '2025-03-04'), day: '2025-03-04' });
    expect(nextWindowOpening(ny, at('15:00'))).toEqual({ at: at('15:00'), day: MONDAY });
  });
});

describe('the gate', () => {
  it('lets one due row go and holds the next one for the gap', () => {
    const verdicts = judge({ now: at('10:00'), rows: [row('a', at('09:59')), row('b', at('09:58'))] });
    expect(byAction(verdicts, 'send')).toEqual(['b']);
    expect(verdicts.find((v) => v.id === 'a')).toEqual({
      id: 'a',
      action: 'move',
      dueAt: at('10:04'),
      planDay: MONDAY,
    });
  });

  it('sends a reply before a new thread', () => {
    const verdicts = judge({
      now: at('10:00'),
      today: today({ budget: 1 }),
      rows: [row('thread', at('09:50')), row('reply', at('09:59'), { kind: 'reply' })],
    });
    expect(byAction(verdicts, 'send')).toEqual(['reply']);
    expect(verdicts.find((v) => v.id === 'thread')).toMatchObject({ action: 'close', reason: REASON_NO_ROOM });
  });

  it('closes a new thread of a day that is over; a reply of that day waits for the next window', () => {
    const verdicts = judge({
      now: at('18:00'),
      rows: [row('thread', at('16:59')), row('reply', at('17:30'), { kind: 'reply' })],
    });
    expect(byAction(verdicts, 'send')).toEqual([]);
    expect(verdicts.find((v) => v.id === 'thread')).toMatchObject({ action: 'close', reason: REASON_NO_ROOM });
    expect(verdicts.find((v) => v.id === 'reply')).toEqual({
      id: 'reply',
      action: 'move',
      dueAt: at('09:00', '2025-03-04'),
      planDay: '2025-03-04',
    });
    const nextDay = judge({
      now: at('09:00', '2025-03-04'),
      today: today({ day: '2025-03-04' }),
      rows: [row('old', at('16:00'))],
    });
    expect(nextDay).toEqual([{ id: 'old', action: 'close', reason: REASON_DAY_OVER }]);
  });

  it('without a plan for the day sends nothing', () => {
    const verdicts = judge({ now: at('10:00'), today: today({ budget: 0 }), rows: [row('a', at('10:00'))] });
    expect(verdicts).toEqual([{ id: 'a', action: 'close', reason: REASON_NO_ROOM }]);
  });

  it('leaves room for the sends planned later today', () => {
    const verdicts = judge({
      now: at('10:00'),
      today: today({ budget: 3, sent: 1 }),
      reservedLater: { replies: 0, threads: 1 },
      rows: [row('a', at('09:59')), row('b', at('09:59'))],
    });
    expect(byAction(verdicts, 'send')).toHaveLength(1);
    expect(byAction(verdicts, 'close')).toHaveLength(1);
  });

  it('spreads mail overdue past the grace over the rest of the window, only its share of it', () => {
    // ten rows of a 09:00–17:00 window were due by 11:00; at 15:00 a quarter of the window is left
    const rows = Array.from({ length: 10 }, (_, i) => row(`r${i}`, new Date(at('09:00').getTime() + i * 12 * MINUTE)));
    const verdicts = judge({ now: at('15:00'), rows });
    expect(byAction(verdicts, 'send')).toEqual([]);
    const moved = verdicts.filter((v) => v.action === 'move');
    expect(moved).toHaveLength(Math.round(10 / 4));
    for (const m of moved) {
      expect(m.dueAt >= at('15:00') && m.dueAt < at('17:00')).toBe(true);
    }
    expect(byAction(verdicts, 'close')).toHaveLength(10 - moved.length);
  });

  it('with ignoreSchedule sends what the budget allows, whatever the time', () => {
    const verdicts = judge({
      now: at('22:00'),
      ignoreSchedule: true,
      today: today({ budget: 2 }),
      rows: [row('a', at('10:00')), row('b', at('10:00')), row('r', at('21:00'), { kind: 'reply' })],
    });
    expect(byAction(verdicts, 'send').sort()).toEqual(['a', 'r']);
    expect(verdicts.find((v) => v.id === 'b')).toMatchObject({ action: 'close' });
  });

  it('whatever is due and whenever it runs, the bounds hold over a whole day of cycles', () => {
    fc.assert(
      fc.property(
        fc.record({
          budget: fc.integer({ min: 0, max: 40 }),
          rows: fc.array(fc.record({ minute: fc.integer({ min: 0, max: 24 * 60 - 1 }), reply: fc.boolean() }), {
            maxLength: 60,
          }),
          // the engine runs in stretches with downtime between them
          downFrom: fc.integer({ min: 0, max: 24 * 60 }),
          downFor: fc.integer({ min: 0, max: 24 * 60 }),
          cycle: fc.integer({ min: 1, max: 10 }),
          seed: fc.integer(),
          start: fc.constantFrom('06:00', '09:00', '12:30', '16:45'),
          end: fc.constantFrom('09:30', '17:00', '23:00'),
        }),
        ({ budget, rows, downFrom, downFor, cycle, seed, start, end }) => {
          if (start >= end) return;
          const settings = { ...UTC, sendWindow: { start, end } };
          const window = sendWindow(settings, MONDAY);
          const random = seededRandom(seed);
          const pending = new Map(
            rows.map((r, i) => [
              `r${i}`,
              row(`r${i}`, new Date(at('00:00').getTime() + r.minute * MINUTE), {
                kind: r.reply ? 'reply' : 'initial',
              }),
            ]),
          );
          const sends: number[] = [];
          for (let minute = 0; minute < 24 * 60; minute += cycle) {
            if (minute >= downFrom && minute < downFrom + downFor) continue;
            const now = new Date(at('00:00').getTime() + minute * MINUTE);
            const due = [...pending.values()].filter((r) => r.dueAt <= now && r.planDay === MONDAY);
            if (due.length === 0) continue;
            const upcoming = [...pending.values()].filter((r) => r.dueAt > now && r.dueAt < window.end);
            const later = {
              replies: upcoming.filter((r) => r.kind === 'reply').length,
              threads: upcoming.filter((r) => r.kind !== 'reply').length,
            };
            const verdicts = judgeDueSends({
              today: {
                settings,
                day: MONDAY,
                budget,
                sent: sends.length,
                lastSentAt: sends.length ? new Date(sends[sends.length - 1]) : null,
              },
              now,
              rows: due,
              reservedLater: later,
              ignoreSchedule: false,
              random,
            });
            expect(verdicts.map((v) => v.id).sort()).toEqual(due.map((r) => r.id).sort());
            for (const verdict of verdicts) {
              const current = pending.get(verdict.id)!;
              if (verdict.action === 'send') {
                sends.push(now.getTime());
                pending.delete(verdict.id);
              } else if (verdict.action === 'close') {
                expect(current.kind).toBe('initial');
                pending.delete(verdict.id);
              } else {
                expect(verdict.dueAt.getTime()).toBeGreaterThan(now.getTime());
                pending.set(verdict.id, { ...current, dueAt: verdict.dueAt, planDay: verdict.planDay });
              }
            }
          }
          expect(sends.length).toBeLessThanOrEqual(budget);
          for (const t of sends) expect(t >= window.start.getTime() && t < window.end.getTime()).toBe(true);
          for (let i = 1; i < sends.length; i++)
            expect(sends[i] - sends[i - 1]).toBeGreaterThanOrEqual(MIN_SEND_GAP_MS);
          // nothing is lost silently: what is left waits for a later time or day
          for (const r of pending.values()) expect(r.planDay >= MONDAY).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('documents its grace', () => {
    expect(OVERDUE_GRACE_MS).toBe(30 * MINUTE);
    expect(MIN_SEND_GAP_MS).toBe(4 * MINUTE);
  });
});
