/**
 * Options of the `logging` plugin.
 *
 *   - logging:
 *       queue_max: 10000          # records waiting for the next write; past it new ones are dropped (counted)
 *       flush_ms: 200             # how often the queue is written, as one batch
 *       retention_days: 30        # older records are swept
 *       max_records: 1000000      # past it the oldest records are swept
 *       bodies:
 *         enabled: false          # keep request and response bodies of model and pass-through calls
 *         max_bytes: 16384        # each body is cut to this many bytes
 *         redact: ['sk-[A-Za-z0-9]+']   # regular expressions; matches become [redacted]
 *
 * In distributed mode (PostgreSQL) the queue's bound is `store.postgres.log_queue` instead of
 * `queue_max` (it also holds the records of an outage), and retention is by age only: daily
 * partitions older than `retention_days` are dropped whole; `max_records` bounds LMDB only.
 */

export interface BodyOptions {
  enabled: boolean;
  max_bytes: number;
  redact: string[];
}

export interface LoggingOptions {
  queue_max: number;
  flush_ms: number;
  retention_days: number;
  max_records: number;
  bodies: BodyOptions;
}

export const loggingOptionsSchema = {
  type: 'object',
  properties: {
    queue_max: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 10_000 },
    flush_ms: { type: 'integer', minimum: 10, maximum: 60_000, default: 200 },
    retention_days: { type: 'integer', minimum: 1, maximum: 36_500, default: 30 },
    max_records: { type: 'integer', minimum: 1, default: 1_000_000 },
    bodies: {
      type: 'object',
      default: {},
      properties: {
        enabled: { type: 'boolean', default: false },
        // Bounded: the queue holds up to queue_max × 2 bodies in memory before a write.
        max_bytes: { type: 'integer', minimum: 1, maximum: 1_048_576, default: 16_384 },
        redact: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 1024 }, maxItems: 100, default: [] },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};
