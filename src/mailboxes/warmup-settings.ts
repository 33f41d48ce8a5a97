/*
 * The warmup settings a new mailbox starts with, and how a stored row reads back. No server-only
 * import here: the service, the engine and the dashboard's form all take the same defaults.
 */
import type { WarmupSettings } from './mailboxes.schemas.js';

export const DEFAULT_WARMUP: Readonly<WarmupSettings> = Object.freeze({
  startVolume: 2,
  rampUpIncrement: 2,
  dailyLimit: 40,
  replyRate: 30,
  sendWindow: { start: '08:00', end: '18:00' },
  timezone: 'UTC',
  weekdaysOnly: false,
  language: 'en',
});

/** The stored JSON merged over the defaults, so a row written by an older version still plans. */
export function parseWarmupSettings(json: string): WarmupSettings {
  const stored = JSON.parse(json) as Partial<WarmupSettings>;
  return {
    ...DEFAULT_WARMUP,
    ...stored,
    sendWindow: { ...DEFAULT_WARMUP.sendWindow, ...(stored.sendWindow ?? {}) },
  };
}
