import { AppError } from '../http/errors.js';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords.js';

export interface PasswordQueueSettings {
  /** Hashes computed at once (each takes 64 MiB and a thread of libuv's pool of 4). */
  concurrency: number;
  /** Hashes waiting for a turn; past it, 429. */
  maxQueued: number;
  /** Hashes one caller (a client address, a signed-in person) may have running or waiting. */
  perCaller: number;
}

export const DEFAULT_PASSWORD_QUEUE: PasswordQueueSettings = { concurrency: 2, maxQueued: 16, perCaller: 3 };

/**
 * Every password hash of the HTTP API goes through one bounded queue. A hash costs 64 MiB and tens
 * of milliseconds of a core; unbounded, one caller firing many at once (a wrong current password
 * needs no sign-in limit to pass) made everyone's sign-in wait seconds. Here a caller may hold a few
 * places, the queue a few more, and anything past that is answered 429 with Retry-After at once,
 * so the wait of any sign-in is bounded by the queue, not by what others send.
 */
export function createPasswordQueue(settings: Partial<PasswordQueueSettings> = {}) {
  const { concurrency, maxQueued, perCaller } = { ...DEFAULT_PASSWORD_QUEUE, ...settings };
  const waiting: Array<() => void> = [];
  const held = new Map<string, number>();
  let running = 0;
  // a moving average of one hash's time, for Retry-After
  let averageMs = 100;

  function busy(): AppError {
    const seconds = Math.max(1, Math.ceil((((waiting.length + running) / concurrency) * averageMs) / 1000));
    return new AppError(
      429,
      'rate_limited',
      `the server is busy checking passwords; retry in ${seconds} s`,
      undefined,
      {
        'Retry-After': String(seconds),
      },
    );
  }

  function release(caller: string): void {
    const left = (held.get(caller) ?? 1) - 1;
    if (left > 0) held.set(caller, left);
    else held.delete(caller);
  }

  function run<T>(caller: string, work: () => Promise<T>): Promise<T> {
    const mine = held.get(caller) ?? 0;
    if (mine >= perCaller || (running >= concurrency && waiting.length >= maxQueued)) return Promise.reject(busy());
    held.set(caller, mine + 1);
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        running += 1;
        const began = performance.now();
        work()
          .then(resolve, reject)
          .finally(() => {
            averageMs = averageMs * 0.8 + (performance.now() - began) * 0.2;
            running -= 1;
            release(caller);
            waiting.shift()?.();
          });
      };
      if (running < concurrency) start();
      else waiting.push(start);
    });
  }

  return {
    hash: (password: string, caller: string) => run(caller, () => hashPassword(password)),
    verify: (password: string, stored: string, caller: string) => run(caller, () => verifyPassword(password, stored)),
    /** An unknown email costs a hash like a wrong password, in the same queue. */
    verifyDecoy: (password: string, caller: string) => run(caller, () => verifyAgainstDecoy(password)),
    /** Hashes running and waiting now (for tests and metrics). */
    load: () => ({ running, waiting: waiting.length }),
  };
}

export type PasswordQueue = ReturnType<typeof createPasswordQueue>;
