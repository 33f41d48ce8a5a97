import type { Logger } from 'pino';

const MAX_START_DELAY_MS = 5_000;

export interface SchedulerOptions {
  /** Names the loop in its log lines (`<name> cycle failed`). */
  name: string;
  /** Pause between the end of one cycle and the start of the next. */
  intervalMs: number;
  /** ± this fraction of the interval, so workers started together drift apart. */
  jitter: number;
  random: () => number;
  logger: Logger;
  cycle: () => Promise<unknown>;
}

export interface Scheduler {
  start(): void;
  /** Stops the loop: cancels the wait, lets a running cycle finish, resolves when it has. */
  stop(): Promise<void>;
  readonly running: boolean;
}

/**
 * A timer loop that never overlaps cycles: the next wait starts only after a cycle ends, however
 * long it took. A failing cycle is logged and the loop goes on. Timing is wall-clock on purpose:
 * it paces the process, while the cycles themselves take business time from the injected clock.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { name, intervalMs, jitter, random, logger, cycle } = options;
  let running = false;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;

  function delay(base: number): number {
    return Math.max(0, Math.round(base * (1 - jitter + 2 * jitter * random())));
  }

  async function sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    wake = undefined;
  }

  async function run(): Promise<void> {
    // A short random start delay (at most 5 s): workers started together do not hit the database together.
    await sleep(Math.round(Math.min(MAX_START_DELAY_MS, intervalMs * jitter) * random()));
    while (running) {
      try {
        await cycle();
      } catch (error) {
        logger.error({ err: error }, `${name} cycle failed`);
      }
      if (!running) break;
      await sleep(delay(intervalMs));
    }
  }

  return {
    get running() {
      return running;
    },
    start() {
      if (loop) return;
      running = true;
      loop = run();
    },
    async stop() {
      if (!loop) return;
      running = false;
      wake?.();
      await loop;
      loop = undefined;
    },
  };
}
