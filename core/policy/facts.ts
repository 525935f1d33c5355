/**
 * What a request says about itself, as policy `conditions` and `group_by` keys name it. One
 * definition for every policy kind (rate limits, usage limits), so a condition means the same
 * thing wherever it is written:
 *
 *   workspace_id      the acting workspace (a condition matches its id or its slug)
 *   api_key           the principal's key id
 *   virtual_key       the `x-gateway-virtual-key` header (a slug)
 *   provider          `x-gateway-provider`, else the slug of a `@slug/model` model, else the
 *                     provider of the plan's first leaf target
 *   model             `model` in the body
 *   metadata.<name>   `x-gateway-metadata` (ctx.metadata)
 *   mcp_server        an MCP call's server slug (the `mcpCall` the mcp-gateway plugin sets)
 *   mcp_tool          an MCP call's tool, prompt name or resource URI
 *   mcp_method        an MCP message's JSON-RPC method (`tools/call`, …)
 *
 * The `mcp_*` keys have a value on MCP requests only. A rate-limit policy that names one (in a
 * condition or in `group_by`) applies to MCP calls, and only to them (plugins/rate-limit/policies.ts).
 *
 * Unknown keys have no value: a condition on one never matches.
 */
import type { GatewayContext } from '../context.js';
import type { RouteNode } from '../router/types.js';
import { headerValue as headerString } from '../upstream/headers.js';
import type { McpCall } from '../mcp.js';

/** The policy keys whose facts come from an MCP message. */
export const MCP_FACT_KEYS: ReadonlySet<string> = new Set(['mcp_server', 'mcp_tool', 'mcp_method']);

export interface WorkspaceFacts {
  id: string;
  slug: string | undefined;
}

export function factOf(ctx: GatewayContext, ws: WorkspaceFacts, key: string): string | undefined {
  switch (key) {
    case 'workspace_id':
      return ws.id;
    case 'api_key':
      return ctx.get('principal')?.key_id ?? undefined;
    case 'virtual_key':
      return nonEmpty(headerString(ctx.headers, 'x-gateway-virtual-key'));
    case 'provider':
      return nonEmpty(headerString(ctx.headers, 'x-gateway-provider')) ?? modelSlug(ctx) ?? (ctx.plan ? firstLeafProvider(ctx.plan.root) : undefined);
    case 'model': {
      const model = ctx.body?.model;
      return typeof model === 'string' ? model : undefined;
    }
    case 'mcp_server':
      return nonEmpty(mcp(ctx)?.server ?? undefined);
    case 'mcp_tool':
      return nonEmpty(mcp(ctx)?.tool ?? undefined);
    case 'mcp_method':
      return nonEmpty(mcp(ctx)?.method ?? undefined);
    default:
      return key.startsWith('metadata.') ? ctx.metadata[key.slice(9)] : undefined;
  }
}

/** Whether one condition holds: `*` matches any present value; `workspace_id` matches id or slug. */
export function conditionHolds(ctx: GatewayContext, ws: WorkspaceFacts, key: string, value: string): boolean {
  if (key === 'workspace_id') return value === '*' || value === ws.id || (ws.slug !== undefined && value === ws.slug);
  const actual = factOf(ctx, ws, key);
  return actual !== undefined && (value === '*' || value === actual);
}

const mcp = (ctx: GatewayContext): McpCall | undefined => ctx.get('mcpCall');

/** `@openai-prod/gpt-4o` → `openai-prod`. */
function modelSlug(ctx: GatewayContext): string | undefined {
  const model = ctx.body?.model;
  if (typeof model !== 'string' || !model.startsWith('@')) return undefined;
  const slash = model.indexOf('/');
  return slash > 1 ? model.slice(1, slash) : undefined;
}

function firstLeafProvider(node: RouteNode): string | undefined {
  if (node.target !== undefined) return node.target.provider;
  const first = node.targets?.[0];
  return first === undefined ? undefined : firstLeafProvider(first);
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.length === 0 ? undefined : s;
}
