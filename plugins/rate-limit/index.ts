/**
 * The `rate-limit` plugin: enforces rate-limit policies (`/v1/policies/rate-limits`) and the
 * `rate_limits` of API keys, workspaces, virtual keys and providers, on every model route and on
 * pass-through, exactly and across processes; and the policies that name an MCP key (`mcp_server`,
 * `mcp_tool`, `mcp_method`) on MCP calls (tools/call, resources/read, prompts/get: never on
 * protocol messages), refused in JSON-RPC (mcp.ts). Entity limits are for model traffic only.
 *
 *   onRequestBody (after auth and config-strategy: principal and plan known)
 *     collect the limits that apply ── none ─▶ go on (no counters transaction, env not even opened)
 *       └─ estimate tokens if a token limit applies ─▶ one transaction takes every counter or none
 *            ├─ refused ─▶ 429 rate_limit_exceeded, retry-after, x-ratelimit-*
 *            └─ passed  ─▶ x-ratelimit-* of the tightest limits on the response
 *   onDone: token limits trade the estimate for the real usage (ctx.usage.total_tokens)
 *
 * The plugin turns usage metering on itself for a request a token limit applies to
 * (`ctx.meterUsage`), so token limits reconcile in a pipeline with no other plugin reading usage.
 * A request no token limit applies to is not metered for this plugin: its answer is not parsed.
 *
 * Counting is GCRA (core/store/counters.ts): a limit of `value` per unit admits a burst of `value`
 * and refills continuously, one unit every `unit / value`. The counters live in
 * `<data dir>/counters.mdb`, shared by every process and worker on that data dir; in distributed
 * mode they live in Valkey, shared by every host (shared.ts), and the LMDB env only serves while
 * Valkey is unreachable under `fail_open`. The mode is chosen once, here at setup.
 */
import { dirname } from 'node:path';
import { actingWorkspace, definePlugin, mcpCallOf, openCounters, PASS, type Counters, type GatewayContext } from '../../core/index.js';
import { rateLimitSchema, type RateLimitOptions } from './schema.js';
import { createPolicyIndex } from './policies.js';
import { createEntityLimits } from './entities.js';
import { createEstimator } from './estimate.js';
import { enforce } from './enforce.js';
import type { AppliedLimit } from './limits.js';
import { createSharedRateLimits, type SharedRateLimits } from './shared.js';
import { mcpRefusal } from './mcp.js';

/** How often a process sweeps full (expired) counters, and how many it looks at each time. */
const SWEEP_INTERVAL_MS = 10_000;
const SWEEP_BATCH = 2_000;

export default definePlugin<RateLimitOptions>({
  name: 'rate-limit',
  configSchema: rateLimitSchema,
  setup(app, options) {
    const policies = createPolicyIndex(app.store.c.rateLimitPolicies);
    const entities = createEntityLimits(app.store);
    const estimateTokens = createEstimator(app, options.default_max_tokens);
    let counters: Counters | undefined;
    let sweeper: NodeJS.Timeout | undefined;

    /** Opened at the first limited request: a pipeline with no limits never creates the file. */
    function openShared(): Counters {
      if (counters === undefined) {
        counters = openCounters(dirname(app.store.path));
        sweeper = setInterval(sweepCounters, SWEEP_INTERVAL_MS).unref();
      }
      return counters;
    }

    function sweepCounters(): void {
      try {
        counters?.sweep(Date.now(), SWEEP_BATCH);
      } catch (err) {
        app.log.warn('rate-limit counter sweep failed', { err });
      }
    }

    /** Every limit that applies to the request; undefined on routes that are never limited. */
    function collectLimits(ctx: GatewayContext): AppliedLimit[] | undefined {
      const kind = ctx.route.kind;
      if (kind !== 'model' && kind !== 'passthrough') {
        // An MCP call: the MCP policies only (never token limits, never entity limits).
        if (kind !== 'plugin' || mcpCallOf(ctx) === undefined) return undefined;
        const applied: AppliedLimit[] = [];
        policies.collect(ctx, entities.workspace(actingWorkspace(app, ctx)), applied, true);
        return applied;
      }
      const ws = entities.workspace(actingWorkspace(app, ctx));
      const applied: AppliedLimit[] = [];
      policies.collect(ctx, ws, applied, false);
      entities.collect(ctx, ws, applied);
      return applied;
    }

    if (app.store.distributed !== undefined) {
      const shared = createSharedRateLimits(app, openShared);
      return {
        onRequestBody(ctx) {
          const applied = collectLimits(ctx);
          if (applied === undefined) return;
          if (applied.length === 0) return shared.none(ctx);
          if (!applied.some((a) => a.limit.type === 'tokens')) return shared.check(ctx, applied, 0);
          ctx.meterUsage = true;
          const tokens = estimateTokens(ctx);
          if (typeof tokens === 'number') return shared.check(ctx, applied, tokens);
          return tokens.then((n) => shared.check(ctx, applied, n));
        },
        onResponseHeaders: mcpRefusal,
        onDone(ctx) {
          reconcileTokens(ctx, counters, shared);
        },
        async close() {
          await shared.flush();
          clearInterval(sweeper);
          const open = counters;
          counters = undefined;
          await open?.close();
        },
      };
    }

    return {
      onRequestBody(ctx) {
        const applied = collectLimits(ctx);
        // Nothing limits this request: nothing to refuse on its head, nothing to reconcile after.
        if (applied === undefined || applied.length === 0) return PASS;
        if (!applied.some((a) => a.limit.type === 'tokens')) return enforce(ctx, { applied, tokens: 0, counters: openShared() });
        ctx.meterUsage = true;
        const tokens = estimateTokens(ctx);
        if (typeof tokens === 'number') return enforce(ctx, { applied, tokens, counters: openShared() });
        return tokens.then((n) => enforce(ctx, { applied, tokens: n, counters: openShared() }));
      },
      onResponseHeaders: mcpRefusal,

      onDone(ctx) {
        reconcileTokens(ctx, counters);
      },

      async close() {
        clearInterval(sweeper);
        const open = counters;
        counters = undefined;
        await open?.close();
      },
    };
  },
});

/**
 * Replaces a token reservation by the real usage. Without a reported usage the estimate stands,
 * unless the request never reached an upstream (refused or answered by a later plugin): then
 * nothing was spent and the reservation is given back.
 */
function reconcileTokens(ctx: GatewayContext, counters: Counters | undefined, shared?: SharedRateLimits): void {
  const reserved = ctx.get('rateLimitTokens');
  if (reserved === undefined || (counters === undefined && reserved.shared === undefined)) return;
  let actual = ctx.usage?.total_tokens;
  if (actual === undefined) {
    if (ctx.timings.upstreamStart !== 0) return;
    actual = 0;
  }
  const delta = actual - reserved.estimate;
  if (delta === 0) return;
  if (reserved.shared) return shared?.adjust(reserved.cells, delta);
  counters!.adjust(
    reserved.cells.map((c) => ({ key: c.key, delta, emissionMs: c.emissionMs })),
    Date.now(),
  );
}
