/**
 * The `usage-limits` plugin: cost and token budgets on live traffic.
 *
 * Budgets come from usage-limits policies (conditions, group_by) and from the `usage_limits` of
 * API keys, virtual keys, workspaces and providers. `credit_limit` is in tokens for `tokens`
 * budgets and in USD for `cost` budgets (priced with the pricing table, cached tokens at their
 * own price). Every endpoint is metered, streams included (`meterUsage`).
 *
 *   before the call   any applicable budget used up → 429 `usage_limit_exceeded` (Retry-After when
 *                     it resets), and the entity's status is `exhausted` until it is reset
 *   after the answer  its tokens or cost are charged to every applicable budget; crossing
 *                     `alert_threshold` records an alert (GET /v1/admin/usage-alerts)
 *
 * Resets: weekly (Monday 00:00 UTC), monthly (the 1st, UTC) or never; an admin's `reset_usage`
 * (API keys) or the policy entity reset routes start over at once.
 *
 * Distributed mode (chosen once, at setup): the budgets are reserved before the call and settled
 * after it in Valkey, in the same single script as the rate limits (shared.ts).
 */
import {
  optionalService,
  actingWorkspace,
  costOf,
  defineAdminRoute,
  adminRoutes,
  definePlugin,
  listPage,
  S,
  type AnyAdminRoute,
  type GatewayContext,
  type Records,
} from '../../core/index.js';
import { entityBudgets, policyBudgets, workspaceFacts, type Budget } from './budgets.js';
import { createLedger } from './ledger.js';
import { UsageErrors } from './errors.js';
import { createSharedBudgets } from './shared.js';

interface Options {
  flush_ms: number;
  reservation_cap: number;
  default_max_tokens: number;
}

declare module '../../core/context.js' {
  interface ContextVars {
    budgets: Budget[];
  }
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
        description: 'Distributed mode: the most one request reserves from a budget before its call, as a share of the budget.',
      },
      default_max_tokens: {
        type: 'integer',
        minimum: 0,
        default: 1024,
        description: 'Distributed mode: answer tokens reserved when a request names no max_tokens.',
      },
    },
    additionalProperties: false,
  },
  setup(app, options) {
    const store = app.store;
    const ledger = createLedger(store, options.flush_ms, (a) => app.log.warn(a.kind === 'exhausted' ? 'usage budget exhausted' : 'usage budget alert threshold crossed', { budget: a.budget, value_key: a.value_key, usage: a.usage, limit: a.limit }));
    const pricer = optionalService(app, 'pricing', 'costs are counted as 0');
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

    function amountOf(ctx: GatewayContext, b: Budget): number {
      const usage = ctx.usage!;
      if (b.type === 'tokens') return usage.total_tokens;
      const model = String(ctx.target?.overrideParams?.model ?? ctx.body?.model ?? '').replace(/^@[^/]+\//, '');
      return costOf(usage, ctx.provider ?? 'openai', model, pricer()).cents / 100;
    }

    const routes = adminRoutes(app, [alertsRoute()]);
    /** Every budget that applies to the request; undefined on routes that are never budgeted. */
    function collectBudgets(ctx: GatewayContext): Budget[] | undefined {
      if (ctx.route.kind !== 'model' && ctx.route.kind !== 'passthrough') return undefined;
      const now = new Date();
      const ws = workspaceFacts(store, actingWorkspace(app, ctx));
      const list = activePolicies();
      return [...(list.length > 0 ? policyBudgets(list, ctx, ws, now) : []), ...entityBudgets(store, ctx, ws, now)];
    }
    if (app.store.distributed !== undefined) {
      const shared = createSharedBudgets(app, ledger, pricer, amountOf, options);
      return {
        meterUsage: true,
        onRequestBody(ctx) {
          const budgets = collectBudgets(ctx);
          if (budgets === undefined) return;
          if (budgets.length === 0) return shared.none(ctx);
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
      meterUsage: true,
      onRequestBody(ctx) {
        const budgets = collectBudgets(ctx);
        if (budgets === undefined || budgets.length === 0) return;
        for (const b of budgets) {
          if (!ledger.exhausted(b)) continue;
          const headers: Record<string, string> = {};
          if (b.resetsAt !== null) headers['retry-after'] = String(Math.max(1, Math.ceil((b.resetsAt - Date.now()) / 1000)));
          throw UsageErrors.exceeded(`A ${b.type} budget that applies to this request is used up (${b.limit}${b.type === 'cost' ? ' USD' : ' tokens'}).`, { headers });
        }
        ctx.set('budgets', budgets);
      },
      onResponseEnd(ctx) {
        const budgets = ctx.get('budgets');
        if (budgets === undefined || ctx.usage === undefined) return;
        for (const b of budgets) ledger.charge(b, amountOf(ctx, b));
      },
      routes,
      close() {
        ledger.close();
      },
    };
  },
});
