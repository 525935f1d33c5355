/**
 * Counters of the log writer, read by the metrics plugin through the `log-stats` service.
 *
 * `dropped` is process-wide and only grows, across reloads too (a reload starts a new writer),
 * as a Prometheus counter must; `queued` is the current writer's backlog, a gauge.
 */

/** Why a record was lost (distributed mode labels the metric with it). */
export type DropReason = 'queue_full' | 'write_failed' | 'build_failed' | 'closed';

/**
 * Records lost: refused by a full queue, or in a batch whose write failed. `byReason` is kept by
 * the PostgreSQL writer only: the embedded metric stays one unlabelled series, as it always was.
 */
export const logStats = { dropped: 0, byReason: {} as Partial<Record<DropReason, number>> };

/** Counts `n` records lost for `reason` (the PostgreSQL writer's path). */
export function countDropped(reason: DropReason, n = 1): void {
  logStats.dropped += n;
  logStats.byReason[reason] = (logStats.byReason[reason] ?? 0) + n;
}

export interface LogStatsService {
  /** Records lost since the process started. */
  dropped(): number;
  /** Records waiting for the next batch write. */
  queued(): number;
  /** Distributed mode: the drops by reason (their sum is `dropped`). */
  droppedByReason?(): Partial<Record<DropReason, number>>;
}

declare module '../../core/plugin.js' {
  interface AppServices {
    'log-stats': LogStatsService;
  }
}
