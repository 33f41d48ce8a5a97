const RETRY_BASE_MS = 5 * 60_000;
const RETRY_MAX_MS = 4 * 60 * 60_000;

/** Backoff before attempt n+1 after n failed attempts: 5 min, 10, 20, … capped at 4 h. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}
