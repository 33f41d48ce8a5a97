/** Injected time source: the engine and services never call Date.now() directly, so tests can move time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(at: Date | string): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(at);
  return {
    now: () => new Date(current),
    set: (next) => {
      current = new Date(next);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
}

/**
 * The clock's time, never before `start` (a call's start, which a test may set ahead of the clock):
 * a call through thousands of senders or mailboxes runs for minutes, and what it does late in the
 * call is dated when it does it, not when the call began.
 */
export function nowSince(clock: Clock, start: Date): Date {
  return new Date(Math.max(start.getTime(), clock.now().getTime()));
}
