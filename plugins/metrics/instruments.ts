/**
 * The gateway's request metrics, one set per pipeline, in the plugin's own registry (never
 * prom-client's global one: two gateways in one process, or a reload, must not share counters).
 *
 * Everything is recorded from the one log record (`buildLogRecord`), so `/metrics`, the logs and
 * the analytics agree on route, status, provider, model, latency, tokens and cost.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { LogRecord } from '../../core/index.js';
import { LabelSets } from './label-sets.js';

/**
 * Seconds. The low end is for the gateway's own overhead (tens of µs); the high end for long
 * generations and streams.
 */
export const DURATION_BUCKETS: ReadonlyArray<number> = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Error codes that mean "refused by a limit", by the `reason` label they count under. */
const REJECTIONS: ReadonlyMap<string, string> = new Map([
  ['rate_limit_exceeded', 'rate_limit'],
  ['usage_limit_exceeded', 'usage_limit'],
]);

export interface RequestMetrics {
  readonly registry: Registry;
  /** Records one finished request. Synchronous and allocation-light: it runs in every `onDone`. */
  record(rec: LogRecord): void;
}

export function createRequestMetrics(maxLabelSets: number): RequestMetrics {
  const registry = new Registry();
  const registers = [registry];
  const buckets = [...DURATION_BUCKETS];

  const requests = new Counter({ name: 'gateway_requests_total', help: 'Requests answered, by route, status and provider.', labelNames: ['route', 'status', 'provider'] as const, registers });
  const duration = new Histogram({ name: 'gateway_request_duration_seconds', help: 'Total time from request to last byte.', labelNames: ['route'] as const, buckets, registers });
  const upstream = new Histogram({ name: 'gateway_upstream_duration_seconds', help: 'Time spent waiting on upstreams (all attempts), for requests that called one.', labelNames: ['route'] as const, buckets, registers });
  const overhead = new Histogram({ name: 'gateway_overhead_duration_seconds', help: "The gateway's own time: total minus upstream (streams: time to first byte minus upstream).", labelNames: ['route'] as const, buckets, registers });
  const ttfb = new Histogram({ name: 'gateway_time_to_first_byte_seconds', help: 'Time to the first byte of a streamed answer (time to first token).', labelNames: ['route'] as const, buckets, registers });
  const tokens = new Counter({ name: 'gateway_tokens_total', help: 'Tokens metered, by type (prompt, completion), provider and model.', labelNames: ['type', 'provider', 'model'] as const, registers });
  const cost = new Counter({ name: 'gateway_cost_cents_total', help: 'Cost of metered usage in USD cents, priced with the pricing table.', labelNames: ['provider', 'model'] as const, registers });
  const cache = new Counter({ name: 'gateway_cache_requests_total', help: 'Requests that consulted the cache, by cache status.', labelNames: ['status'] as const, registers });
  const invalid = new Counter({
    name: 'gateway_upstream_invalid_responses_total',
    help: 'Upstream answers the gateway could not read (a 2xx model answer that is not JSON, or one no dialect could translate), by provider.',
    labelNames: ['provider'] as const,
    registers,
  });
  const rejections = new Counter({ name: 'gateway_rejections_total', help: 'Requests refused by a limit (rate_limit, usage_limit).', labelNames: ['reason'] as const, registers });

  // One cap per metric that takes traffic-derived labels (route and status are bounded by the core).
  // Both reasons exist from the first scrape, so `rate()` and alerts see a 0 rather than no series.
  for (const reason of REJECTIONS.values()) rejections.inc({ reason }, 0);

  const requestSets = new LabelSets(maxLabelSets);
  const tokenSets = new LabelSets(maxLabelSets);
  const costSets = new LabelSets(maxLabelSets);
  const cacheSets = new LabelSets(maxLabelSets);
  const invalidSets = new LabelSets(maxLabelSets);

  return {
    registry,
    record(rec) {
      const route = rec.route;
      const provider = rec.provider ?? 'none';
      requests.inc(requestSets.admit({ route, status: String(rec.status), provider }, ['provider', 'status']));
      const l = rec.latency;
      duration.observe({ route }, l.total_ms / 1000);
      // The core's upstream time ends at the upstream's response head, so for a stream total −
      // upstream would count the whole generation as overhead; its gateway part is what came
      // before the first byte: time to first byte − upstream.
      const overheadMs = rec.stream && l.ttfb_ms !== null ? Math.max(0, l.ttfb_ms - l.upstream_ms) : l.gateway_ms;
      overhead.observe({ route }, overheadMs / 1000);
      if (l.upstream_ms > 0) upstream.observe({ route }, l.upstream_ms / 1000);
      if (rec.stream && l.ttfb_ms !== null) ttfb.observe({ route }, l.ttfb_ms / 1000);
      // Model labels only for metered answers: a model name a caller typed and that never reached
      // an upstream (a 400, a 401) must not mint a series.
      if (rec.usage !== null) {
        const model = rec.model ?? 'unknown';
        tokens.inc(tokenSets.admit({ type: 'prompt', provider, model }, ['provider', 'model']), rec.usage.prompt_tokens);
        tokens.inc(tokenSets.admit({ type: 'completion', provider, model }, ['provider', 'model']), rec.usage.completion_tokens);
        cost.inc(costSets.admit({ provider, model }, ['provider', 'model']), rec.cost_cents);
      }
      if (rec.cache_status !== 'DISABLED') cache.inc(cacheSets.admit({ status: rec.cache_status }, ['status']));
      if (rec.error_code === 'upstream_invalid_response') invalid.inc(invalidSets.admit({ provider }, ['provider']));
      const reason = rec.error_code === null ? undefined : REJECTIONS.get(rec.error_code);
      if (reason !== undefined) rejections.inc({ reason });
    },
  };
}
