// The plan the reader draws for a message it found, as the engine's sync hands it over: every
// step the mailbox's habits say, or, with the benchmarks' `rescueOnly`, the rescue and the filing.
import { describe, expect, it } from 'vitest';
import { planFor } from './engagement.js';
import { seededRandom } from './random.js';
import type { SessionContext } from './sync-session.js';
import type { PendingMessageRow } from './warmup-messages.repository.js';
import { traitsOf } from './habits.js';

const FOUND = new Date('2026-03-12T09:00:00Z');
const row = { turn: 1 } as PendingMessageRow;

/** The parts of a sync that planFor reads: the deps' chance and option, the habits, the schedule. */
function contextWith(rescueOnly: boolean | undefined, seed: number): SessionContext {
  return {
    deps: { random: seededRandom(seed), rescueOnly },
    habits: {
      timezone: 'UTC',
      replyRate: 100,
      traits: { ...traitsOf('mbx_reader'), openRate: 1, flagRate: 1, replyFactor: 1 },
    },
    options: { now: FOUND, ignoreSchedule: true },
  } as unknown as SessionContext;
}

describe('the reader’s plan for a message found in spam', () => {
  it('rescues, opens, flags and answers it when the habits say so', () => {
    const plan = planFor(contextWith(undefined, 7), row, FOUND, true);
    expect(plan.rescueAt).not.toBeNull();
    expect(plan.openAt).not.toBeNull();
    expect(plan.flagAt).not.toBeNull();
    expect(plan.replyAt).not.toBeNull();
  });

  it('with rescueOnly, only rescues and files it: no open, flag or answer', () => {
    for (const seed of [1, 2, 3]) {
      const plan = planFor(contextWith(true, seed), row, FOUND, true);
      expect(plan).toEqual({ rescueAt: FOUND, openAt: null, flagAt: null, replyAt: null, fileAt: FOUND });
    }
  });

  it('with rescueOnly, files mail that arrived in the inbox without reading it', () => {
    const plan = planFor(contextWith(true, 4), row, FOUND, false);
    expect(plan).toEqual({ rescueAt: null, openAt: null, flagAt: null, replyAt: null, fileAt: FOUND });
  });
});
