/**
 * The `mcp-gateway` plugin: MCP servers registered in the admin API (`/v1/mcp-integrations`,
 * `/v1/mcp-servers`) reachable through the gateway over MCP's Streamable HTTP transport, with
 * the gateway's keys, allow-lists, logs and limits.
 *
 *   POST|GET|DELETE /<server slug>/mcp     one registered server (the `url` its record shows)
 *   POST|GET|DELETE /v1/mcp                every server the key may use, names `<slug>__<name>`
 *
 *   onRequestBody   parse the JSON-RPC message into `mcpCall` (server, method, tool, argument size)
 *                   so rate limits can group by `mcp_server` / `mcp_tool` before the handler runs
 *   handler         key with `mcp.invoke` ─▶ session (the key's own) ─▶ SDK Server (proxy.ts)
 *                   ─▶ SDK Client per upstream (upstream.ts: credentials injected, SSRF guard)
 *                   calls (tools/call, prompts/get, resources/read) go the short way instead:
 *                   relay.ts, on the same upstream session
 *   transport.send  each response fills in `mcpCall` (outcome, JSON-RPC error code): the request's
 *                   log record, metrics and analytics carry the call (relay.ts fills it in itself)
 *   guardrails      with the `guardrails` plugin earlier in the pipeline, the key's and workspace's
 *                   guardrails check arguments and results (proxy.ts; `session.contexts` gives a
 *                   handler its HTTP request)
 *
 * The handler and its sessions (runtime.ts) run on the MCP SDK and are loaded on the first MCP
 * request, so a gateway that serves none never loads the SDK (about 0.25 s of its start); the
 * admin routes load the SDK's client on their first connection test or listing.
 *
 * Clients authenticate with `Authorization: Bearer <gateway key>` or `x-gateway-api-key`; the key
 * needs `mcp.invoke` and reaches only its workspace's servers. The upstream never sees the key or
 * any client header: only the gateway's stored credentials for that server.
 */
import {
  adminRoutes,
  definePlugin,
  isMcpRoute,
  type GatewayContext,
  type Reply,
  type RouteDefinition,
} from '../../core/index.js';
import { mcpAdminRoutes } from './admin.js';
import { callOf, scopeOf, type JsonRpcRequest } from './call.js';
import type { McpRuntime } from './runtime.js';
import { mcpGatewayOptionsSchema, type McpGatewayOptions } from './schema.js';

const META = { mcp: true, bearerAuth: true };

export default definePlugin<McpGatewayOptions>({
  name: 'mcp-gateway',
  configSchema: mcpGatewayOptionsSchema,
  setup(app, options) {
    let runtime: Promise<McpRuntime> | undefined;
    let closed = false;
    // Loaded once; a failed load is retried by the next request rather than kept.
    const load = (): Promise<McpRuntime> => {
      // A request that arrives while the gateway drains opens no sessions that nothing would close.
      if (closed && runtime === undefined) return Promise.reject(new Error('the MCP gateway is stopping'));
      return (runtime ??= import('./runtime.js').then(
        (m) => m.createMcpRuntime(app, options),
        (err: unknown) => {
          runtime = undefined;
          throw err;
        },
      ));
    };
    const handle = async (ctx: GatewayContext): Promise<Reply> => (await load()).handle(ctx);

    const routes: RouteDefinition[] = [];
    for (const path of ['/:slug/mcp', '/v1/mcp']) {
      routes.push({ method: 'POST', path, body: 'json', meta: META, handler: handle });
      routes.push({ method: 'GET', path, body: 'none', meta: META, handler: handle });
      routes.push({ method: 'DELETE', path, body: 'none', meta: META, handler: handle });
    }

    return {
      routes: [...routes, ...adminRoutes(app, mcpAdminRoutes(app, { timeoutMs: options.connect_timeout_ms }))],
      onRequestBody(ctx) {
        if (!isMcpRoute(ctx.route) || ctx.method !== 'POST') return;
        const message = ctx.body as JsonRpcRequest | undefined;
        if (message !== undefined && typeof message === 'object' && typeof message.method === 'string') ctx.set('mcpCall', callOf(message, scopeOf(ctx)));
      },
      async close() {
        if (closed) return;
        closed = true;
        const loading = runtime;
        if (loading !== undefined) await (await loading.catch(() => undefined))?.close();
      },
    };
  },
});
