/**
 * What the plugin reads of a JSON-RPC message before its handler runs, with no MCP SDK: the
 * endpoint's scope and the call as logs and limits see it (`mcpCall`).
 */
import { MCP_CALL_METHODS, type GatewayContext, type McpCall } from '../../core/index.js';
import type { Scope } from './session.js';

/** Between a server's slug and a tool's own name on the aggregated endpoint (`/v1/mcp`). */
export const SEPARATOR = '__';

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: { name?: unknown; uri?: unknown; arguments?: unknown };
}

export const scopeOf = (ctx: GatewayContext): Scope => {
  const slug = ctx.route.kind === 'plugin' ? ctx.route.params.slug : undefined;
  return slug === undefined ? { kind: 'all' } : { kind: 'one', slug };
};

/** The call a JSON-RPC message makes, as logs and limits see it. */
export function callOf(message: JsonRpcRequest, scope: Scope): McpCall {
  const method = typeof message.method === 'string' ? message.method : null;
  const named = typeof message.params?.name === 'string' ? message.params.name : typeof message.params?.uri === 'string' ? message.params.uri : null;
  let server = scope.kind === 'one' ? scope.slug : null;
  let tool = method !== null && MCP_CALL_METHODS.has(method) ? named : null;
  if (scope.kind === 'all' && tool !== null && method !== 'resources/read') {
    const at = tool.indexOf(SEPARATOR);
    if (at > 0) {
      server = tool.slice(0, at);
      tool = tool.slice(at + SEPARATOR.length);
    }
  }
  const args = message.params?.arguments;
  return { server, method, tool, argument_bytes: args === undefined ? 0 : Buffer.byteLength(JSON.stringify(args)), outcome: null, error_code: null, upstream_ms: 0 };
}

