/**
 * Counters of the log writer, read by the metrics plugin through the `log-stats` service.
 *
 * `dropped` is process-wide and only grows, across reloads too (a reload starts a new writer),
 * as a Prometheus counter must; `queued` is the current writer's backlog, a gauge.
 */

/** Records lost: refused by a full queue, or in a batch whose write failed. */
export const logStats = { dropped: 0 };

export interface LogStatsService {
  /** Records lost since the process started. */
  dropped(): number;
  /** Records waiting for the next batch write. */
  queued(): number;
}

declare module '../../core/plugin.js' {
  interface AppServices {
    'log-stats': LogStatsService;
  }
}
