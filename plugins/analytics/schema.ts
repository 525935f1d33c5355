/**
 * Options of the `analytics` plugin.
 *
 *   - analytics:
 *       flush_ms: 1000               # how often rollups are added to LMDB
 *       minute_retention_days: 35    # minute buckets (short ranges, exact range edges)
 *       hour_retention_days: 400     # hour buckets (what long ranges read)
 *       max_metadata_sets: 500       # distinct metadata sets per workspace-minute kept as a dimension
 */

export interface AnalyticsOptions {
  flush_ms: number;
  minute_retention_days: number;
  hour_retention_days: number;
  max_metadata_sets: number;
}

export const analyticsOptionsSchema = {
  type: 'object',
  properties: {
    flush_ms: { type: 'integer', minimum: 10, maximum: 60_000, default: 1000, description: 'How often rollups are written (ms).' },
    minute_retention_days: { type: 'integer', minimum: 1, maximum: 3650, default: 35, description: 'Days minute buckets are kept.' },
    hour_retention_days: { type: 'integer', minimum: 1, maximum: 3650, default: 400, description: 'Days hour buckets are kept.' },
    // Metadata is caller-chosen: a request id in it would make a bucket per request. Past this
    // many sets in one workspace-minute, requests are counted without their metadata.
    max_metadata_sets: { type: 'integer', minimum: 1, maximum: 100_000, default: 500, description: 'Distinct metadata sets per workspace and minute.' },
  },
  additionalProperties: false,
};
