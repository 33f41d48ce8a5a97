/*
 * The warmup settings a new mailbox starts with, and the one way a stored row reads back. No
 * server-only import here: the service, the engine and the dashboard's form all take the same
 * defaults.
 */
import { Value } from '@sinclair/typebox/value';
import { WarmupSettings } from './mailboxes.schemas.js';

export const DEFAULT_WARMUP: Readonly<WarmupSettings> = Object.freeze({
  startVolume: 2,
  rampUpIncrement: 2,
  dailyLimit: 40,
  replyRate: 30,
  sendWindow: Object.freeze({ start: '08:00', end: '18:00' }),
  timezone: 'UTC',
  weekdaysOnly: false,
  language: 'en',
});

function defaults(): WarmupSettings {
  return { ...DEFAULT_WARMUP, sendWindow: { ...DEFAULT_WARMUP.sendWindow } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const FIELDS = Object.keys(DEFAULT_WARMUP) as Array<keyof WarmupSettings>;

/**
 * The stored JSON of a mailbox's settings, never throwing: a field a row written by an older
 * version lacks takes its default silently; a field that breaks the schema (or a text that is not
 * an object at all) takes its default too, and `onProblem` hears of it, so a caller that must not
 * act on a guess (the planner) can leave the mailbox alone and say why.
 */
export function parseWarmupSettings(text: string, onProblem?: (problem: string) => void): WarmupSettings {
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch {
    stored = undefined;
  }
  const settings = defaults();
  if (!isRecord(stored)) {
    onProblem?.('the stored warmup settings are not a JSON object; the defaults stand in');
    return settings;
  }
  const bad: string[] = [];
  const chosen: Record<string, unknown> = settings;
  for (const field of FIELDS) {
    let value = stored[field];
    if (value === undefined) continue;
    if (field === 'sendWindow' && isRecord(value)) value = { ...DEFAULT_WARMUP.sendWindow, ...value };
    if (Value.Check(WarmupSettings.properties[field], value)) chosen[field] = value;
    else bad.push(field);
  }
  if (settings.startVolume > settings.dailyLimit) {
    bad.push('startVolume');
    settings.startVolume = Math.min(DEFAULT_WARMUP.startVolume, settings.dailyLimit);
  }
  if (settings.sendWindow.start >= settings.sendWindow.end) {
    bad.push('sendWindow');
    settings.sendWindow = { ...DEFAULT_WARMUP.sendWindow };
  }
  if (bad.length > 0) onProblem?.(`stored warmup settings out of bounds (${bad.join(', ')}); their defaults stand in`);
  return settings;
}
