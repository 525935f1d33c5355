/**
 * What the MCP gateway tells the rest of the pipeline about an MCP request: which server, which
 * JSON-RPC method and tool (or prompt, or resource), how large its arguments were and how it
 * ended. The `mcp-gateway` plugin sets it (`ctx.set('mcpCall', …)`) as soon as it has parsed the
 * message, before the route handler runs, so rate limits can group by it, and fills in the
 * outcome before the response ends, so logs, analytics and metrics see it.
 */
import type { GatewayContext } from './context.js';
import type { RouteMatch } from './routes.js';

/** The JSON-RPC methods that are calls (logged, limited, guarded); the rest is protocol. */
export const MCP_CALL_METHODS: ReadonlySet<string> = new Set(['tools/call', 'resources/read', 'prompts/get']);

export interface McpCall {
  /** The MCP server's slug (for the aggregated endpoint, the server the call was routed to); null before routing. */
  server: string | null;
  /** The JSON-RPC method (`tools/call`, `tools/list`, `initialize`, …); null for a GET or DELETE. */
  method: string | null;
  /** The tool, prompt or resource URI the call names, as the upstream server knows it; null for other methods. */
  tool: string | null;
  /** Bytes of the call's `arguments` (a tool's or a prompt's) as JSON; 0 without. */
  argument_bytes: number;
  /** `ok`, `error` (a JSON-RPC error or a tool result with `isError`), `denied` (the gateway refused it), `cancelled`. */
  outcome: 'ok' | 'error' | 'denied' | 'cancelled' | null;
  /** The JSON-RPC error code the client got, if any. */
  error_code: number | null;
  /** The upstream call's duration in ms (0 when it never reached the server). */
  upstream_ms: number;
}

declare module './context.js' {
  interface ContextVars {
    /** The MCP message of the request, set by the `mcp-gateway` plugin. */
    mcpCall: McpCall;
  }
}

/*
 * How the rest of the gateway recognises an MCP request and an MCP call:
 *
 *   MCP route  a plugin route whose `meta` says `mcp: true` (every HTTP request on it is logged
 *              with `route: 'mcp'` and, once the plugin parsed its message, the record's `mcp`)
 *   MCP call   a request on an MCP route whose message is a call (`tools/call`, `resources/read`,
 *              `prompts/get`): counted in metrics and analytics, limited by rate-limit policies.
 *              Protocol messages (`initialize`, `tools/list`, notifications, GET, DELETE) are not.
 */

/**
 * The JSON-RPC error code of an MCP call refused by a rate limit (in the implementation-defined
 * server-error range -32000…-32099; 29 as in HTTP 429). Sent with HTTP 429, `retry-after` and the
 * `x-ratelimit-*` headers; `error.data` is `{code: 'rate_limit_exceeded', retry_after_ms}`.
 */
export const MCP_RATE_LIMITED = -32029;

/** True for a route an MCP plugin serves (`meta: { mcp: true }`). */
export function isMcpRoute(route: RouteMatch): boolean {
  return route.kind === 'plugin' && (route.route.meta as { mcp?: unknown } | undefined)?.mcp === true;
}

/** True when `method` is one of the MCP calls (not a protocol message). */
export function isMcpCallMethod(method: string | null | undefined): boolean {
  return typeof method === 'string' && MCP_CALL_METHODS.has(method);
}

/** The request's MCP call: set on an MCP route, for a call method; undefined otherwise. */
export function mcpCallOf(ctx: GatewayContext): McpCall | undefined {
  if (!isMcpRoute(ctx.route)) return undefined;
  const call = ctx.get('mcpCall');
  return call !== undefined && isMcpCallMethod(call.method) ? call : undefined;
}

/** The JSON-RPC id of the request's message (from the parsed body, else the raw bytes); null when none. */
export function jsonRpcIdOf(ctx: GatewayContext): string | number | null {
  let id: unknown = ctx.body?.id;
  if (id === undefined && ctx.body === undefined && ctx.rawBody !== undefined && ctx.rawBody.length > 0 && ctx.rawBody.length <= 1 << 20) {
    try {
      const parsed: unknown = JSON.parse(ctx.rawBody.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) id = (parsed as { id?: unknown }).id;
    } catch {
      /* not JSON: no id */
    }
  }
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
