/**
 * The `analytics` plugin: per-minute rollups of finished requests, and the analytics API that
 * reads them (admin-api.md §16).
 *
 *   onUpstreamRequest   remembers the first target tried (to tell a fallback from a load balance)
 *   onDone              builds the log record and adds it to its bucket in memory (rollup.ts)
 *   every flush_ms      buckets are added to analytics_minutes and analytics_hours in LMDB
 *   GET /v1/analytics/… folds the buckets of the range, the stored ones and this process's
 *                       buckets not flushed yet (live.ts): a read right after a request counts it;
 *                       request logs are never scanned
 *
 * In distributed mode the buckets live in PostgreSQL instead (pg-store.ts): each host adds its
 * flushes with additive upserts and reads the sums over every host. The driver is chosen once.
 *
 * Put it first in the pipeline: response hooks run in reverse, so the first plugin sees the final
 * outcome of everything after it. Only model calls, pass-through calls and MCP calls are counted
 * (the admin API, health checks and MCP protocol messages are not traffic); MCP calls go to buckets
 * of their own (provider `mcp:<server>`, model `<method> <tool>`), read by `/groups/mcp` only.
 * `meterUsage` makes the core measure tokens.
 */
import {
  optionalService, adminRoutes, buildLogRecord, definePlugin, mcpCallOf, type GatewayContext, type Outcome } from '../../core/index.js';
import { analyticsOptionsSchema, type AnalyticsOptions } from './schema.js';
import { createRollupWith } from './rollup.js';
import { analyticsRoutes } from './routes.js';
import { oldestMinute } from './retention.js';
import { openLmdbStore, type AnalyticsStore } from './store.js';
import { openPgStore } from './pg-store.js';
import { withUnflushed } from './live.js';
import { mcpDimensions } from './bucket.js';

declare module '../../core/context.js' {
  interface ContextVars {
    /** The option path of the first upstream attempt (`config.targets[0]`, …). */
    analyticsFirstOption: string;
  }
}

export default definePlugin<AnalyticsOptions>({
  name: 'analytics',
  configSchema: analyticsOptionsSchema,
  async setup(app, options) {
    const oldest = (): number => oldestMinute(options.minute_retention_days);
    const distributed = app.store.distributed;
    const store: AnalyticsStore = distributed ? await openPgStore(distributed, options, oldest, app.log) : openLmdbStore(app.store.root, options, oldest, app.log);
    const rollup = createRollupWith(store.write, options, app.log);
    const stopRetention = store.startRetention();

    const pricer = optionalService(app, 'pricing', 'costs are counted as 0');

    return {
      meterUsage: true,
      onUpstreamRequest(ctx, attempt) {
        if (attempt.number === 0) ctx.set('analyticsFirstOption', attempt.target.path ?? 'config');
      },
      onDone(ctx: GatewayContext, outcome: Outcome) {
        if (ctx.route.kind !== 'model' && ctx.route.kind !== 'passthrough') {
          const call = mcpCallOf(ctx);
          if (call === undefined) return;
          const record = buildLogRecord(ctx, outcome, pricer());
          rollup.add(record, { error: record.mcp?.outcome !== 'ok', fallback: false, at: ctx.get('logRecordAt'), ...mcpDimensions({ server: call.server, method: call.method!, tool: call.tool }) });
          return;
        }
        const record = buildLogRecord(ctx, outcome, pricer());
        const first = ctx.get('analyticsFirstOption');
        rollup.add(record, {
          error: record.status >= 400 || outcome.streamError !== undefined,
          // A success from another target than the first one tried. (A load balancer choosing
          // `targets[1]` is its first try, so it is not a rescue.)
          fallback: record.is_success && first !== undefined && first !== record.last_used_option_index,
          at: ctx.get('logRecordAt'),
        });
      },
      routes: adminRoutes(app, analyticsRoutes({ store: withUnflushed(store, rollup, oldest), oldestMinute: oldest })),
      async close() {
        stopRetention();
        await rollup.close();
      },
    };
  },
});
