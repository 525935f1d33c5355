/**
 * The `usage-limits` plugin: cost and token budgets on live traffic.
 *
 * Budgets come from usage-limits policies (conditions, group_by) and from the `usage_limits` of
 * API keys, virtual keys, workspaces and providers. `credit_limit` is in tokens for `tokens`
 * budgets and in USD for `cost` budgets (priced with the pricing table, cached tokens at their
 * own price). Every request a budget applies to is metered, streams included (`ctx.meterUsage`);
 * a request no budget applies to is not metered for this plugin.
 *
 *   before the call   each applicable budget reserves the request's estimated amount (its prompt,
 *                     plus `max_tokens` or `default_max_tokens`, capped at `reservation_cap` × the
 *                     limit; reserve.ts); when settled + reserved in flight + this reservation would
 *                     pass the limit → 429 `usage_limit_exceeded` (Retry-After when it resets); a
 *                     budget that ran out marks its entity `exhausted` until it is reset
 *   after the answer  settle: the reservation is given back and the real tokens or cost charged
 *                     (also after an error or a cancelled call, which release what they held);
 *                     crossing `alert_threshold` records an alert (GET /v1/admin/usage-alerts)
 *
 * So a budget never overshoots by more than what is in flight: its final spend is at most
 * `limit + Σ max(0, real − reserved)` over the requests in flight together (local.ts states the
 * bound with `server.workers` > 1).
 *
 * Resets: weekly (Monday 00:00 UTC), monthly (the 1st, UTC) or never; an admin's `reset_usage`
 * (API keys) or the policy entity reset routes start over at once.
 *
 * The mode is chosen once, at setup: embedded, the reservations are held in this process's memory
 * (local.ts); distributed, in Valkey, in the same single script as the rate limits (shared.ts).
 * A request with no applicable budget pays for neither.
 */
import {
  optionalService,
  actingWorkspace,
  defineAdminRoute,
  adminRoutes,
  definePlugin,
  listPage,
  mcpCallOf,
  PASS,
  S,
  type AnyAdminRoute,
  type GatewayContext,
  type Records,
} from '../../core/index.js';
import { entityBudgets, policyBudgets, workspaceFacts, type Budget } from './budgets.js';
import { createLedger } from './ledger.js';
import { createLocalBudgets } from './local.js';
import { createReservations } from './reserve.js';
import { createSharedBudgets } from './shared.js';

const NO_BUDGETS: Budget[] = [];

interface Options {
  flush_ms: number;
  reservation_cap: number;
  default_max_tokens: number;
}

export default definePlugin<Options>({
  name: 'usage-limits',
  configSchema: {
    type: 'object',
    properties: {
      flush_ms: { type: 'integer', minimum: 10, maximum: 60_000, default: 250, description: 'How often charges are written (ms).' },
      reservation_cap: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 1,
        default: 0.1,
        description: 'The most one request reserves from a budget before its call, as a share of the budget.',
      },
      default_max_tokens: {
        type: 'integer',
        minimum: 0,
        default: 1024,
        description: 'Answer tokens reserved when a request names no max_tokens.',
      },
    },
    additionalProperties: false,
  },
  setup(app, options) {
    const store = app.store;
    const ledger = createLedger(store, options.flush_ms, (a) => app.log.warn(a.kind === 'exhausted' ? 'usage budget exhausted' : 'usage budget alert threshold crossed', { budget: a.budget, value_key: a.value_key, usage: a.usage, limit: a.limit }));
    const pricer = optionalService(app, 'pricing', 'costs are counted as 0');
    const reservations = createReservations(pricer, options);
    let policies: Records.UsageLimitPolicy[] = [];
    let policiesVersion = -1;
    const activePolicies = (): Records.UsageLimitPolicy[] => {
      const v = store.c.usageLimitPolicies.version();
      if (v !== policiesVersion) {
        policies = store.c.usageLimitPolicies.list({ filter: (p) => p.status === 'active' }).items;
        policiesVersion = v;
      }
      return policies;
    };

    /** GET /v1/admin/usage-alerts (the same in both modes). */
    function alertsRoute(): AnyAdminRoute {
      return defineAdminRoute<never, { current_page: number; page_size: number }>({
        method: 'GET',
        path: '/v1/admin/usage-alerts',
        summary: 'Usage budget alerts (thresholds crossed, budgets exhausted), newest first',
        resource: 'usage_alert',
        action: 'list',
        scope: 'policies.read',
        level: 'workspace',
        workspaceDefault: 'all',
        query: { properties: { workspace_id: S.workspaceRef, ...S.pagination } },
        response: S.listOf(
          S.record({ id: S.str, created_at: S.str, kind: S.str, budget: S.str, value_key: S.str, workspace_id: S.strOrNull, type: S.str, limit: S.num, usage: S.num }),
        ),
        handler({ query, workspace }) {
          return listPage(store.c.usageAlerts, query, { filter: (a) => workspace === null || a.workspace_id === workspace.id, view: (a) => a });
        },
      });
    }

    const routes = adminRoutes(app, [alertsRoute()]);
    /** Every budget that applies to the request; undefined on routes that are never budgeted. */
    function collectBudgets(ctx: GatewayContext): Budget[] | undefined {
      if (ctx.route.kind !== 'model' && ctx.route.kind !== 'passthrough') {
        // An MCP call has no budget (no cost, no tokens), but rate-limit may limit it: in
        // distributed mode this seat still submits (nothing), so the shared script runs the claims.
        return ctx.route.kind === 'plugin' && mcpCallOf(ctx) !== undefined ? NO_BUDGETS : undefined;
      }
      // The date only when some budget has a period to find (most requests have none; it was a fifth of this hook in a profile).
      let at: Date | undefined;
      const now = (): Date => (at ??= new Date());
      const ws = workspaceFacts(store, actingWorkspace(app, ctx));
      const list = activePolicies();
      const entities = entityBudgets(store, ctx, ws, now);
      return list.length > 0 ? [...policyBudgets(list, ctx, ws, now()), ...entities] : entities;
    }
    const local = createLocalBudgets(ledger, reservations);
    if (app.store.distributed !== undefined) {
      const shared = createSharedBudgets(app, ledger, reservations, local);
      return {
        onRequestBody(ctx) {
          const budgets = collectBudgets(ctx);
          if (budgets === undefined) return;
          if (budgets.length === 0) return shared.none(ctx);
          ctx.meterUsage = true;
          return shared.check(ctx, budgets);
        },
        onDone(ctx) {
          shared.settle(ctx);
        },
        routes,
        async close() {
          await shared.flush();
          ledger.close();
        },
      };
    }

    return {
      onRequestBody(ctx) {
        const budgets = collectBudgets(ctx);
        // No budget applies: nothing is held, so nothing to settle after.
        if (budgets === undefined || budgets.length === 0) return PASS;
        ctx.meterUsage = true;
        local.check(ctx, budgets);
      },
      onDone(ctx) {
        local.settle(ctx);
      },
      routes,
      close() {
        ledger.close();
      },
    };
  },
});
