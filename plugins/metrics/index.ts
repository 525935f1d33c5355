/**
 * The `metrics` plugin: `GET /metrics` in the Prometheus text format (0.0.4).
 *
 *   every request ── onDone ── buildLogRecord ── counters and histograms (instruments.ts)
 *   each scrape   ── breaker states, log-queue drops, token-pool queue (live-gauges.ts)
 *                 ── process metrics: event-loop delay, heap, GC (process-metrics.ts)
 *
 * Public by default (scrapers rarely carry API keys; the numbers hold no secrets, only volumes);
 * `require_key: true` makes it a keyed route needing the scope `analytics.view` (with `auth` in
 * the pipeline; without it the route is closed). Its place in the pipeline does not change what
 * it counts: `onDone` runs for every plugin, whichever one answered.
 *
 * Per process: in cluster mode each worker has its own counters, and a scrape reaches one of
 * them (label the target per worker, or run one worker, to see all).
 */
import {
  optionalService, authorize, AdminErrors, buildLogRecord, definePlugin, reply, type RouteDefinition } from '../../core/index.js';
import { metricsOptionsSchema, type MetricsOptions } from './schema.js';
import { createRequestMetrics } from './instruments.js';
import { registerLiveGauges } from './live-gauges.js';
import { processRegistry } from './process-metrics.js';
import { renderExposition } from './exposition.js';

export default definePlugin<MetricsOptions>({
  name: 'metrics',
  configSchema: metricsOptionsSchema,
  setup(app, options) {
    const metrics = createRequestMetrics(options.max_label_sets);
    const { tokenQueue } = registerLiveGauges(app, metrics.registry, options.max_label_sets);
    if (!tokenQueue) app.log.debug('the token counter shows no pool stats: no gateway_token_queue_depth');
    const processMetrics = processRegistry();

    const pricer = optionalService(app, 'pricing', 'costs are counted as 0');

    const route: RouteDefinition = {
      method: 'GET',
      path: '/metrics',
      body: 'none',
      meta: options.require_key ? {} : { public: true },
      async handler(ctx) {
        if (options.require_key) {
          const principal = ctx.get('principal');
          if (principal === undefined) throw AdminErrors.unauthenticated();
          authorize(principal, { level: 'workspace', scope: 'analytics.view' });
        }
        const text = await renderExposition([processMetrics, metrics.registry]);
        return reply(200, text, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
      },
    };

    return {
      meterUsage: true,
      onDone: function recordMetrics(ctx, outcome) {
        metrics.record(buildLogRecord(ctx, outcome, pricer()));
      },
      routes: [route],
    };
  },
});
