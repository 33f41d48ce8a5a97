import { describe, expect, it } from 'vitest';
import { DEFAULT_WARMUP, parseWarmupSettings } from './warmup-settings.js';

function parse(text: string): { settings: ReturnType<typeof parseWarmupSettings>; problems: string[] } {
  const problems: string[] = [];
  const settings = parseWarmupSettings(text, (problem) => problems.push(problem));
  return { settings, problems };
}

describe('parseWarmupSettings', () => {
  it('reads stored settings over the defaults, silently for fields an older row lacks', () => {
    const { settings, problems } = parse('{"dailyLimit":10,"sendWindow":{"end":"12:00"}}');
    expect(settings).toEqual({ ...DEFAULT_WARMUP, dailyLimit: 10, sendWindow: { start: '08:00', end: '12:00' } });
    expect(problems).toEqual([]);
  });

  it.each([
    ['not JSON', '{"dailyLimit":'],
    ['JSON null', 'null'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"daily"'],
    ['empty text', ''],
  ])('falls back to the defaults for %s and reports it', (_case, text) => {
    const { settings, problems } = parse(text);
    expect(settings).toEqual(DEFAULT_WARMUP);
    expect(problems).toEqual([expect.stringMatching(/not a JSON object/)]);
  });

  it.each([
    ['dailyLimit', { dailyLimit: 'forty' }],
    ['dailyLimit', { dailyLimit: 501 }],
    ['startVolume', { startVolume: 0 }],
    ['replyRate', { replyRate: -1 }],
    ['timezone', { timezone: '' }],
    ['language', { language: 'EN' }],
    ['weekdaysOnly', { weekdaysOnly: 'yes' }],
    ['sendWindow', { sendWindow: { start: '8am' } }],
    ['sendWindow', { sendWindow: 'all day' }],
  ])('replaces a %s that breaks the schema by its default, keeps the rest, and reports the field', (field, bad) => {
    const { settings, problems } = parse(JSON.stringify({ replyRate: 55, ...bad }));
    const key = field as keyof typeof DEFAULT_WARMUP;
    expect(settings[key]).toEqual(DEFAULT_WARMUP[key]);
    if (field !== 'replyRate') expect(settings.replyRate).toBe(55);
    expect(problems).toEqual([expect.stringContaining(`(${field})`)]);
  });

  it('never returns a start above the limit or a window that ends before it starts', () => {
    const { settings, problems } = parse(
      JSON.stringify({ startVolume: 30, dailyLimit: 20, sendWindow: { start: '18:00', end: '09:00' } }),
    );
    expect(settings.startVolume).toBeLessThanOrEqual(settings.dailyLimit);
    expect(settings.sendWindow).toEqual(DEFAULT_WARMUP.sendWindow);
    expect(problems).toEqual([expect.stringContaining('(startVolume, sendWindow)')]);
  });

  it('hands out a fresh object each time, so one reader cannot change the defaults of another', () => {
    const first = parseWarmupSettings('{}');
    first.sendWindow.start = '00:00';
    expect(parseWarmupSettings('{}').sendWindow.start).toBe('08:00');
    expect(DEFAULT_WARMUP.sendWindow.start).toBe('08:00');
  });
});
