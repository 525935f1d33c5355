/**
 * A refused MCP call is answered in JSON-RPC: the MCP client reads JSON-RPC, not the gateway's
 * HTTP error shape. Same status and headers as every other refusal (429, `retry-after`, `x-ratelimit-*`:
 * what proxies, retry logic and the logs key on; SDK clients report it as an HTTP 429 error
 * carrying this body), with the body
 *
 *   {"jsonrpc":"2.0","id":<the request's id>,"error":{"code":-32029,"message":"Rate limit reached …",
 *    "data":{"code":"rate_limit_exceeded","retry_after_ms":1234}}}
 *
 * Done on the head (onResponseHeaders) rather than where the limit refuses: in distributed mode
 * the refusal is thrown by whichever governance plugin runs the shared script (usage-limits, when
 * it follows), and the head is where every path meets. The request's `mcpCall` says `denied`.
 */
import { isMcpRoute, jsonRpcIdOf, MCP_RATE_LIMITED, reply, type GatewayContext, type Reply, type ResponseHead } from '../../core/index.js';

/** The JSON-RPC answer that replaces a rate-limit refusal on an MCP route; undefined elsewhere. */
export function mcpRefusal(ctx: GatewayContext, head: ResponseHead): Reply | undefined {
  const error = ctx.error;
  if (error === undefined || error.code !== 'rate_limit_exceeded' || !isMcpRoute(ctx.route)) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(head.headers)) {
    if (name === 'content-type' || name === 'content-length') continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  headers['content-type'] = 'application/json';
  const exact = (error as { retryAfterMs?: unknown }).retryAfterMs;
  const retryAfterMs = typeof exact === 'number' ? exact : Number(headers['retry-after'] ?? 1) * 1000;
  const call = ctx.get('mcpCall');
  if (call !== undefined) {
    call.outcome = 'denied';
    call.error_code = MCP_RATE_LIMITED;
  }
  return reply(
    error.status,
    { jsonrpc: '2.0', id: jsonRpcIdOf(ctx), error: { code: MCP_RATE_LIMITED, message: error.message, data: { code: error.code, retry_after_ms: retryAfterMs } } },
    headers,
  );
}
