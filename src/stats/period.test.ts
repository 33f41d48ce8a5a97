import { describe, expect, it } from 'vitest';
import { ValidationError } from '../http/errors.js';
import { addDays, dayToTime, daysBetween, eachDay } from '../calendar.js';
import { resolvePeriod } from './period.js';

function rejection(work: () => unknown): { path: string; message: string } {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).errors![0]!;
  }
  throw new Error('expected a ValidationError');
}

describe('calendar days', () => {
  it('accepts real days only', () => {
    expect(dayToTime('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    for (const day of [
      '2026-02-29',
      '2026-13-01',
      '2026-04-31',
      '2026-00-10',
      '2026-1-01',
      '20260101',
      '0099-01-01x',
      '',
    ]) {
      expect(dayToTime(day), day).toBeUndefined();
    }
  });

  it('counts across months, years and leap days', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
    expect(daysBetween('2025-01-01', '2026-01-01')).toBe(365);
    expect(eachDay({ startDate: '2026-02-27', endDate: '2026-03-02' })).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
  });
});

describe('resolvePeriod', () => {
  const today = '2026-03-15';

  it('defaults to the last 30 days ending today', () => {
    expect(resolvePeriod({}, today)).toEqual({ startDate: '2026-02-14', endDate: today });
    expect(resolvePeriod({ period: '7d' }, today)).toEqual({ startDate: '2026-03-09', endDate: today });
    expect(resolvePeriod({ period: '90d' }, today)).toEqual({ startDate: '2025-12-16', endDate: today });
  });

  it('lets startDate and endDate win over period', () => {
    expect(resolvePeriod({ period: '7d', startDate: '2026-01-01', endDate: '2026-01-01' }, today)).toEqual({
      startDate: '2026-01-01',
      endDate: '2026-01-01',
    });
  });

  it('allows endDate up to 366 days after startDate, not more', () => {
    expect(resolvePeriod({ startDate: '2024-01-01', endDate: '2025-01-01' }, today)).toEqual({
      startDate: '2024-01-01',
      endDate: '2025-01-01',
    });
    expect(rejection(() => resolvePeriod({ startDate: '2024-01-01', endDate: '2025-01-02' }, today)).path).toBe(
      '/query/endDate',
    );
  });

  it('names the parameter that is wrong', () => {
    expect(rejection(() => resolvePeriod({ startDate: '2026-03-01' }, today)).path).toBe('/query/endDate');
    expect(rejection(() => resolvePeriod({ endDate: '2026-03-01' }, today)).path).toBe('/query/startDate');
    expect(rejection(() => resolvePeriod({ startDate: '2026-02-30', endDate: '2026-03-01' }, today)).path).toBe(
      '/query/startDate',
    );
    expect(rejection(() => resolvePeriod({ startDate: '2026-03-01', endDate: '2026-02-31' }, today)).path).toBe(
      '/query/endDate',
    );
    expect(rejection(() => resolvePeriod({ startDate: '2026-03-02', endDate: '2026-03-01' }, today))).toEqual({
      path: '/query/startDate',
      message: 'must be on or before endDate',
    });
  });
});
