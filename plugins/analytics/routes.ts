/**
 * The analytics API (admin-api.md §16, our conventions): twelve graphs, the cache summary and
 * eight group lists (the reference's three; guardrail verdicts by check; traffic per provider,
 * per API key and per workspace; MCP calls per server and tool), all `GET`, scope
 * `analytics.view`, level workspace (a workspace
 * key reads its own workspace; an organisation key every workspace, or the one it names).
 *
 * Every route reads rollup buckets (see query.ts), never request logs. MCP calls have buckets of
 * their own that only `/groups/mcp` reads: the graphs, the cache summary and the other groups
 * count model and pass-through traffic only, as before.
 */
import { defineAdminRoute, PROMPT_METADATA_KEY, S, type AdminInput, type AnyAdminRoute } from '../../core/index.js';
import { cacheSummary, graphs, timestamp, type Graph } from './graphs.js';
import { sums } from './folds.js';
import { apiKeysGroup, groupSchemas, guardrailsGroup, mcpGroup, metadataGroup, modelsGroup, providersGroup, usersGroup, workspacesGroup, type Page } from './groups.js';
import { commonParams, hasDimensionFilters, queryOf, REQUIRED_PARAMS, type CommonParams } from './params.js';
import type { Query } from './query.js';
import type { AnalyticsStore } from './store.js';
import { AnalyticsErrors } from './errors.js';

export interface RouteDeps {
  /** The rollups and the feedback counts, from LMDB or PostgreSQL. */
  store: AnalyticsStore;
  /** Minute buckets before this minute are pruned. */
  oldestMinute(): number;
}

type Params = CommonParams & Partial<Page>;

const base = { method: 'GET', resource: 'analytics', action: 'read', scope: 'analytics.view', level: 'workspace', workspaceDefault: 'all' } as const;
// Open (`additionalProperties`): filters rollups cannot apply get `unsupported_filter` (params.ts), not the admin API's unknown-name 400.
const query = (extra: Record<string, S.JsonSchema> = {}): S.JsonSchema => ({ properties: { ...commonParams, ...extra }, required: REQUIRED_PARAMS, additionalProperties: true });

function graphResponse(summary: Record<string, S.JsonSchema>, point: Record<string, S.JsonSchema>): S.JsonSchema {
  return S.record({
    summary: S.record(summary),
    data_points: { type: 'array', items: S.record(point) },
    object: { type: 'string', const: 'analytics-graph' },
  });
}

export function analyticsRoutes(deps: RouteDeps): AnyAdminRoute[] {
  const { store } = deps;
  const queryFor = (input: AdminInput<never, Params>): Query => queryOf(input, deps.oldestMinute());

  const graphRoute = (g: Graph): AnyAdminRoute =>
    defineAdminRoute<never, Params>({
      ...base,
      path: `/v1/analytics/graphs/${g.path}`,
      summary: `Analytics graph: ${g.summary}`,
      query: query(),
      response: graphResponse(g.summaryFields, g.pointFields),
      async handler(input) {
        const q = queryFor(input);
        return { ...(await g.run(store, q)), object: 'analytics-graph' };
      },
    });

  const feedbacks = defineAdminRoute<never, Params>({
    ...base,
    path: '/v1/analytics/graphs/feedbacks',
    summary: 'Analytics graph: feedback received',
    query: query(),
    response: graphResponse({ total: S.int }, { timestamp: S.str, total: S.int }),
    async handler(input) {
      const q = queryFor(input);
      // Feedback is counted from its own records, which carry none of the rollup dimensions.
      if (hasDimensionFilters(q.filters)) throw AnalyticsErrors.unsupportedFilter('Feedback cannot be filtered by status, model, API key or metadata.');
      const s = await store.feedback(q);
      return { summary: s.total, data_points: s.points.map((p) => ({ timestamp: timestamp(p.minute), total: p.acc.total })), object: 'analytics-graph' };
    },
  });

  const cache = defineAdminRoute<never, Params>({
    ...base,
    path: '/v1/analytics/summary/cache',
    summary: 'Cache summary: hits, their mean latency, total requests, speedup over a miss (%)',
    query: query(),
    response: S.record({
      summary: S.record({ hits: S.int, avg_latency: S.num, total_requests: S.int, cache_speedup: S.num }),
      object: { type: 'string', const: 'analytics-summary' },
    }),
    async handler(input) {
      const total = sums.fresh();
      (await store.buckets(queryFor(input)))((bucket, key) => sums.add(total, bucket, key));
      return { summary: cacheSummary(total), object: 'analytics-summary' };
    },
  });

  const paged = { ...S.pagination };
  const page = (p: Params): Page => ({ current_page: p.current_page ?? 0, page_size: p.page_size ?? S.PAGE_SIZE_DEFAULT });
  const groups = [
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/users',
      summary: 'Requests and cost per user (`metadata._user`, else the API key), most requests first',
      query: query(paged),
      response: groupSchemas.users,
      handler: async (input) => usersGroup(await store.users(queryFor(input)), page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/ai-models',
      summary: 'Requests per model, most requests first',
      query: query(paged),
      response: groupSchemas.models,
      handler: async (input) => modelsGroup(await store.buckets(queryFor(input)), page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/metadata/:key',
      summary: 'Requests, cost and tokens per value of one metadata key, most requests first',
      query: query(paged),
      response: groupSchemas.metadata,
      handler: async (input) => metadataGroup(await store.buckets(queryFor(input)), input.params.key!, page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/prompts',
      summary: 'Requests, cost and tokens per stored prompt (the `_prompt` metadata value: its slug), most requests first',
      query: query(paged),
      response: groupSchemas.metadata,
      handler: async (input) => metadataGroup(await store.buckets(queryFor(input)), PROMPT_METADATA_KEY, page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/providers',
      summary: 'Requests, errors, cost (cents) and tokens per provider, most requests first',
      query: query(paged),
      response: groupSchemas.providers,
      handler: async (input) => providersGroup(await store.buckets(queryFor(input)), page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/api-keys',
      summary: 'Requests, errors, cost (cents) and tokens per API key, most requests first (`api_key_name` for keys the caller may see)',
      query: query(paged),
      response: groupSchemas.apiKeys,
      handler: async (input) => {
        const { principal, store: records } = input;
        // A workspace key reads its workspace's traffic, which an organisation key may have made
        // too: it sees that key's id (as `/groups/users` does), not its name.
        const nameOf = (id: string): string | null => {
          const key = records.c.apiKeys.get(id);
          return key === undefined || (principal.workspace_id !== null && key.workspace_id !== principal.workspace_id) ? null : key.name;
        };
        return apiKeysGroup(await store.buckets(queryFor(input)), nameOf, page(input.query));
      },
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/workspaces',
      summary: 'Requests, errors, cost (cents) and tokens per workspace, most requests first (a workspace key: its own only)',
      query: query(paged),
      response: groupSchemas.workspaces,
      handler: async (input) => {
        const slugOf = (id: string): string | null => input.store.c.workspaces.get(id)?.slug ?? null;
        return workspacesGroup(await store.buckets(queryFor(input)), slugOf, page(input.query));
      },
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/guardrails',
      summary:
        'Guardrail check results per check and phase (`input`: request, `output`: answer): `{object: "list", total, denied, data: [{check, phase, pass, fail, error}]}`, most fail + error first; `denied` counts the requests a guardrail denied',
      query: query(paged),
      response: groupSchemas.guardrails,
      handler: async (input) => guardrailsGroup(await store.buckets(queryFor(input)), page(input.query)),
    }),
    defineAdminRoute<never, Params>({
      ...base,
      path: '/v1/analytics/groups/mcp',
      summary:
        'MCP calls (`tools/call`, `resources/read`, `prompts/get`) per server, method and tool: requests, errors (outcome not `ok`), mean, p50 and p95 latency (ms), last seen; most requests first. MCP calls are counted here only, not in the graphs or the other groups',
      query: query(paged),
      response: groupSchemas.mcp,
      handler: async (input) => {
        const q = queryFor(input);
        return mcpGroup(await store.buckets({ ...q, filters: { ...q.filters, mcp: true } }), page(input.query));
      },
    }),
  ];

  return [...graphs.map(graphRoute), feedbacks, cache, ...groups];
}
