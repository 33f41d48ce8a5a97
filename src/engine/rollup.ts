// The engine's rollup step: the statistics' finished days folded into the workspace rollup, then
// the raw rows past the retention removed. One worker at a time (the job list's lease on it).
import { foldFinishedDays, type FoldSummary } from '../interactions/workspace-rollup.js';
import type { EngineDeps } from './engine-deps.js';
import { removeExpiredHistory, type RetentionSummary } from './retention.js';

/** The lease the rollup step runs under. */
export const FOLD_LEASE_KEY = 'stats-fold';

export type RollupSummary = FoldSummary & { retention: RetentionSummary };

export async function foldStatistics(
  deps: Pick<EngineDeps, 'db' | 'dialect' | 'settings'>,
  now: Date,
): Promise<RollupSummary> {
  const fold = await foldFinishedDays(deps.db, now);
  // after the fold, so the days whose raw rows go are in the rollup already
  const retention = await removeExpiredHistory(deps.db, deps.dialect, now, {
    retentionDays: deps.settings.retentionDays,
  });
  return { ...fold, retention };
}
