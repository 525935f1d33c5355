/**
 * The admin routes that talk to a registered MCP server (admin-api.md §14–15):
 *
 *   GET  /v1/mcp-integrations/:id/capabilities   tools, prompts, resources the server reports now
 *   PUT  /v1/mcp-integrations/:id/capabilities   enable or disable some (for every server on it)
 *   POST /v1/mcp-integrations/:id/test           connect, list, disconnect: name, version, counts
 *   GET  /v1/mcp-servers/:id/capabilities        the same for one server, with `integration_enabled`
 *   PUT  /v1/mcp-servers/:id/capabilities
 *   POST /v1/mcp-servers/:id/test
 *
 * Lists are fetched live, with a real connection (upstream.ts: stored credentials injected, SSRF
 * guard, no redirects), following `nextCursor`, and only for what the server declares. Only the
 * disabled set is stored (`disabled_capabilities`, resources by URI); a capability not listed
 * (the server is down, or dropped it) keeps its setting. Scopes and visibility are those of the
 * record's own routes (plugins/admin-catalog): an integration's read / update scope by kind, a
 * workspace key sees only its workspace's servers and integrations.
 *
 * The stored credentials never leave: not in answers, not in errors (any header value an upstream
 * echoes into an error is masked), not in logs.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  assertVisible,
  defineAdminRoute,
  defineError,
  nowIso,
  S,
  type AnyAdminRoute,
  type GatewayApp,
  type GatewayContext,
  type GatewayError,
  type Records,
  type Store,
} from '../../core/index.js';
import { findMcpIntegration, visibleMcpIntegration } from '../admin-catalog/mcp-integrations.js';
import { findMcpServer } from '../admin-catalog/mcp-servers.js';
import { describe, upstreamTarget, UpstreamUnavailable, type UpstreamTarget } from './target.js';

type Integration = Records.McpIntegrationRecord;
type Server = Records.McpServerRecord;
type Ref = Records.McpCapabilityRef;
type ListedType = Ref['type'] | 'resource_template';

/** 10 s: connect, initialize and every list page, together. */
export const ADMIN_TIMEOUT_MS = 10_000;
/** Pages followed per list (a server whose cursors never end is cut off, not followed forever). */
const MAX_PAGES = 100;
/** Disabled capabilities stored per record. */
const MAX_DISABLED = 5000;

const upstreamUnavailable = defineError(502, 'upstream_error', 'mcp_upstream_unavailable', 'The MCP server could not be reached.');
const tooMany = defineError(400, 'invalid_request_error', 'invalid_value', 'Too many disabled capabilities.');

export interface McpAdminOptions {
  /** Bounds connect, initialize and the lists (default {@link ADMIN_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** One capability as the server lists it. */
interface Listed {
  name: string;
  type: ListedType;
  title?: string;
  description: string | null;
  input_schema?: unknown;
  output_schema?: unknown;
  annotations?: unknown;
  arguments?: unknown;
  uri?: string;
  uri_template?: string;
  mime_type?: string;
}

/** The HTTP status an upstream answered with, when an error carries one (the SDK's StreamableHTTPError/SseError `code`). */
function httpStatusOf(err: unknown): number | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e !== undefined && e !== null && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number' && e.code >= 100 && e.code <= 599) return e.code;
  }
  return undefined;
}

/** Why listing failed: said without credentials, with the upstream's HTTP status when known. */
class ListingFailed extends UpstreamUnavailable {
  constructor(message: string, readonly statusCode: number | undefined) {
    super(message);
  }
}

interface Inventory {
  items: Listed[];
  serverName: string | null;
  serverVersion: string | null;
  protocolVersion: string | undefined;
}

const capabilitySchema = S.record(
  {
    name: S.str,
    type: S.str,
    title: S.str,
    description: S.strOrNull,
    enabled: S.bool,
    integration_enabled: S.bool,
    input_schema: S.anyObject,
    output_schema: S.anyObject,
    annotations: S.anyObject,
    arguments: { type: 'array', items: S.anyObject },
    uri: S.str,
    uri_template: S.str,
    mime_type: S.str,
  },
  ['name', 'type', 'description', 'enabled'],
);

const countSchema = S.record({ total: S.int, enabled: S.int });
const capabilitiesResponse = S.record({
  data: { type: 'array', items: capabilitySchema },
  counts: S.record({ tools: countSchema, prompts: countSchema, resources: countSchema, resource_templates: countSchema }),
  total: S.int,
  has_more: S.bool,
});

const capabilitiesQuery: S.JsonSchema = {
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
    type: { type: 'string', enum: ['tool', 'prompt', 'resource', 'resource_template'] },
  },
  additionalProperties: false,
};

const capabilitiesBody: S.JsonSchema = {
  type: 'object',
  properties: {
    capabilities: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 2048, description: 'Tool or prompt name; a resource by URI.' },
          type: { type: 'string', enum: ['tool', 'prompt', 'resource'] },
          enabled: { type: 'boolean' },
        },
        required: ['name', 'type', 'enabled'],
        additionalProperties: false,
      },
    },
  },
  required: ['capabilities'],
  additionalProperties: false,
};

const testResponse = S.record(
  {
    success: S.bool,
    response_time_ms: S.int,
    url: S.str,
    server_name: S.strOrNull,
    server_version: S.strOrNull,
    protocol_version: S.str,
    status_code: S.int,
    counts: S.record({ tools: S.int, prompts: S.int, resources: S.int }),
    error: S.str,
  },
  ['success', 'response_time_ms', 'url'],
);

interface CapabilitiesQuery {
  page: number;
  page_size: number;
  type?: ListedType;
}

interface CapabilitiesBody {
  capabilities: Array<{ name: string; type: Ref['type']; enabled: boolean }>;
}

/** `message` with every credential value in it masked (an upstream may echo a header into an error). */
function redact(message: string, target: UpstreamTarget | undefined): string {
  let out = message;
  for (const value of Object.values(target?.headers ?? {})) {
    if (value.length >= 4) out = out.split(value).join('***');
    // Bearer tokens echoed without their scheme.
    const bare = value.replace(/^\s*(Bearer|Basic|Token)\s+/i, '');
    if (bare !== value && bare.length >= 4) out = out.split(bare).join('***');
  }
  return out;
}

/** The upstream URL as shown to operators: no user-info. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

const key = (type: string, name: string): string => `${type}\u0000${name}`;
const disabledSet = (list: Ref[] | undefined): Set<string> => new Set((list ?? []).map((r) => key(r.type, r.name)));
/** Templates share the resource switch (by their URI template). */
const refType = (type: ListedType): Ref['type'] => (type === 'resource_template' ? 'resource' : type);

/** Every page of one list (at most {@link MAX_PAGES}). */
async function allPages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await fetchPage(cursor);
    out.push(...r.items);
    if (r.nextCursor === undefined || r.nextCursor === '' || r.nextCursor === cursor) break;
    cursor = r.nextCursor;
  }
  return out;
}

/** What the server at `integration` offers, listed now; rejects with {@link UpstreamUnavailable} (message redacted). */
async function inventory(app: GatewayApp, integration: Integration, timeoutMs: number, ctx: GatewayContext): Promise<Inventory> {
  let target: UpstreamTarget | undefined;
  const abort = new AbortController();
  const off = ctx.onAbort(() => abort.abort());
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(timeoutMs)]);
  let client: Client | undefined;
  try {
    target = upstreamTarget(app.store, integration);
    // The SDK client, loaded on the first listing or connection test (not with the plugin: see index.ts).
    const { connectUpstream } = await import('./upstream.js');
    client = await connectUpstream(target, { dispatcher: app.upstream, policy: app.config.security.custom_hosts, timeoutMs, signal });
    const c = client;
    const options = { signal, timeout: timeoutMs };
    const caps = c.getServerCapabilities() ?? {};
    const items: Listed[] = [];
    if (caps.tools !== undefined) {
      const tools = await allPages(async (cursor) => {
        const r = await c.listTools(cursor === undefined ? {} : { cursor }, options);
        return { items: r.tools, nextCursor: r.nextCursor };
      });
      for (const t of tools) {
        items.push({
          name: t.name,
          type: 'tool',
          ...(t.title !== undefined ? { title: t.title } : {}),
          description: t.description ?? null,
          input_schema: t.inputSchema,
          ...(t.outputSchema !== undefined ? { output_schema: t.outputSchema } : {}),
          ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
        });
      }
    }
    if (caps.prompts !== undefined) {
      const prompts = await allPages(async (cursor) => {
        const r = await c.listPrompts(cursor === undefined ? {} : { cursor }, options);
        return { items: r.prompts, nextCursor: r.nextCursor };
      });
      for (const p of prompts) {
        items.push({
          name: p.name,
          type: 'prompt',
          ...(p.title !== undefined ? { title: p.title } : {}),
          description: p.description ?? null,
          ...(p.arguments !== undefined ? { arguments: p.arguments } : {}),
        });
      }
    }
    if (caps.resources !== undefined) {
      const resources = await allPages(async (cursor) => {
        const r = await c.listResources(cursor === undefined ? {} : { cursor }, options);
        return { items: r.resources, nextCursor: r.nextCursor };
      });
      for (const r of resources) {
        items.push({
          name: r.uri,
          type: 'resource',
          title: r.title ?? r.name,
          description: r.description ?? null,
          uri: r.uri,
          ...(r.mimeType !== undefined ? { mime_type: r.mimeType } : {}),
        });
      }
      // Optional for servers: one that does not answer it (method not found) simply has none.
      const templates = await allPages(async (cursor) => {
        const r = await c.listResourceTemplates(cursor === undefined ? {} : { cursor }, options);
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      }).catch((err: unknown) => {
        if ((err as { code?: unknown }).code === -32601) return [];
        throw err;
      });
      for (const r of templates) {
        items.push({
          name: r.uriTemplate,
          type: 'resource_template',
          title: r.title ?? r.name,
          description: r.description ?? null,
          uri_template: r.uriTemplate,
          ...(r.mimeType !== undefined ? { mime_type: r.mimeType } : {}),
        });
      }
    }
    const version = c.getServerVersion();
    const protocolVersion = (c.transport as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    return {
      items,
      serverName: version?.name ?? null,
      serverVersion: version?.version ?? null,
      protocolVersion: typeof protocolVersion === 'string' ? protocolVersion : undefined,
    };
  } catch (err) {
    const message =
      err instanceof UpstreamUnavailable
        ? err.message
        : `MCP server "${integration.slug}" failed while listing its capabilities: ${signal.aborted ? `no answer within ${timeoutMs} ms` : describe(err)}`;
    const status = httpStatusOf(err);
    throw new ListingFailed(redact(status === undefined || message.includes(String(status)) ? message : `${message} (HTTP ${status})`, target), status);
  } finally {
    off();
    if (client !== undefined) await client.close().catch(() => undefined);
  }
}

const unavailable = (err: unknown): GatewayError =>
  upstreamUnavailable(err instanceof UpstreamUnavailable ? err.message : 'The MCP server could not be reached.', { param: null });

/** One page of the capabilities answer. */
function capabilitiesPage(items: Listed[], query: CapabilitiesQuery, integrationOff: Set<string>, serverOff: Set<string> | undefined): Record<string, unknown> {
  const rows = items.map((item) => {
    const k = key(refType(item.type), item.name);
    const integrationEnabled = !integrationOff.has(k);
    return serverOff === undefined
      ? { ...item, enabled: integrationEnabled, usable: integrationEnabled }
      : { ...item, enabled: !serverOff.has(k), integration_enabled: integrationEnabled, usable: integrationEnabled && !serverOff.has(k) };
  });
  const count = (type: ListedType): { total: number; enabled: number } => {
    const of = rows.filter((r) => r.type === type);
    return { total: of.length, enabled: of.filter((r) => r.usable).length };
  };
  const filtered = query.type === undefined ? rows : rows.filter((r) => r.type === query.type);
  const start = (query.page - 1) * query.page_size;
  return {
    data: filtered.slice(start, start + query.page_size),
    counts: { tools: count('tool'), prompts: count('prompt'), resources: count('resource'), resource_templates: count('resource_template') },
    total: filtered.length,
    has_more: start + query.page_size < filtered.length,
  };
}

/** The stored disabled list after applying `changes` (later entries win). */
function applyChanges(current: Ref[] | undefined, changes: CapabilitiesBody['capabilities']): Ref[] | undefined {
  const map = new Map<string, Ref>((current ?? []).map((r) => [key(r.type, r.name), r]));
  for (const c of changes) {
    const k = key(c.type, c.name);
    if (c.enabled) map.delete(k);
    else map.set(k, { type: c.type, name: c.name });
  }
  if (map.size > MAX_DISABLED) throw tooMany(`At most ${MAX_DISABLED} capabilities may be disabled on one MCP record.`, { param: 'capabilities' });
  return map.size === 0 ? undefined : [...map.values()];
}

/** The connection test's answer: 200 either way. */
async function testConnection(app: GatewayApp, integration: Integration, timeoutMs: number, ctx: GatewayContext): Promise<Record<string, unknown>> {
  const started = performance.now();
  const url = shownUrl(integration.url);
  try {
    const inv = await inventory(app, integration, timeoutMs, ctx);
    const n = (type: ListedType): number => inv.items.filter((i) => i.type === type).length;
    return {
      success: true,
      response_time_ms: Math.round(performance.now() - started),
      url,
      server_name: inv.serverName,
      server_version: inv.serverVersion,
      ...(inv.protocolVersion !== undefined ? { protocol_version: inv.protocolVersion } : {}),
      counts: { tools: n('tool'), prompts: n('prompt'), resources: n('resource') },
    };
  } catch (err) {
    return {
      success: false,
      response_time_ms: Math.round(performance.now() - started),
      url,
      ...(err instanceof ListingFailed && err.statusCode !== undefined ? { status_code: err.statusCode } : {}),
      error: err instanceof UpstreamUnavailable ? err.message : 'The MCP server could not be reached.',
    };
  }
}

/** A server the principal may see, and its integration (gone: 404, like the server's own routes). */
function serverAndIntegration(store: Store, principal: Parameters<typeof assertVisible>[0], ref: string): { server: Server; integration: Integration } {
  const server = assertVisible(principal, findMcpServer(store, ref), 'MCP server');
  const integration = store.c.mcpIntegrations.get(server.mcp_integration_id);
  if (integration === undefined) throw upstreamUnavailable(`MCP server "${server.slug}" has no MCP integration.`, { param: null });
  return { server, integration };
}

/**
 * The admin routes of the MCP gateway, for `adminRoutes(app, mcpAdminRoutes(app))`.
 */
export function mcpAdminRoutes(app: GatewayApp, options: McpAdminOptions = {}): AnyAdminRoute[] {
  const timeoutMs = options.timeoutMs ?? ADMIN_TIMEOUT_MS;
  return [
    defineAdminRoute<never, CapabilitiesQuery>({
      method: 'GET',
      path: '/v1/mcp-integrations/:id/capabilities',
      summary: 'List the tools, prompts and resources an MCP integration\'s server reports, live (scope {workspace|organisation}_mcp_integrations.read)',
      resource: 'mcp_integration',
      action: 'read',
      scope: null,
      level: 'workspace',
      query: capabilitiesQuery,
      response: capabilitiesResponse,
      async handler({ ctx, params, query, principal, store }) {
        const integration = visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'read');
        const inv = await inventory(app, integration, timeoutMs, ctx).catch((err: unknown) => {
          throw unavailable(err);
        });
        return capabilitiesPage(inv.items, query, disabledSet(integration.disabled_capabilities), undefined);
      },
    }),
    defineAdminRoute<CapabilitiesBody>({
      method: 'PUT',
      path: '/v1/mcp-integrations/:id/capabilities',
      summary: 'Enable or disable tools, prompts and resources of an MCP integration, for every server on it (scope {workspace|organisation}_mcp_integrations.update)',
      resource: 'mcp_integration',
      action: 'update_capabilities',
      scope: null,
      level: 'workspace',
      body: capabilitiesBody,
      response: S.record({ success: S.bool }),
      handler({ params, body, principal, store }) {
        const found = visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'update');
        const next = applyChanges(store.c.mcpIntegrations.get(found.id)?.disabled_capabilities, body.capabilities);
        store.c.mcpIntegrations.update(found.id, (r) => ({ ...r, disabled_capabilities: next, last_updated_at: nowIso() }));
        return { success: true };
      },
    }),
    defineAdminRoute({
      method: 'POST',
      path: '/v1/mcp-integrations/:id/test',
      summary: 'Test the connection to an MCP integration\'s server: name, version and counts, or the error (scope {workspace|organisation}_mcp_integrations.read)',
      resource: 'mcp_integration',
      action: 'test',
      scope: null,
      level: 'workspace',
      readOnly: true,
      response: testResponse,
      handler({ ctx, params, principal, store }) {
        const integration = visibleMcpIntegration(principal, findMcpIntegration(store, params.id!), 'read');
        return testConnection(app, integration, timeoutMs, ctx);
      },
    }),
    defineAdminRoute<never, CapabilitiesQuery>({
      method: 'GET',
      path: '/v1/mcp-servers/:id/capabilities',
      summary: 'List the tools, prompts and resources of an MCP server, live, with its and its integration\'s settings',
      resource: 'mcp_server',
      action: 'read',
      scope: 'mcp_servers.read',
      level: 'workspace',
      query: capabilitiesQuery,
      response: capabilitiesResponse,
      async handler({ ctx, params, query, principal, store }) {
        const { server, integration } = serverAndIntegration(store, principal, params.id!);
        const inv = await inventory(app, integration, timeoutMs, ctx).catch((err: unknown) => {
          throw unavailable(err);
        });
        return capabilitiesPage(inv.items, query, disabledSet(integration.disabled_capabilities), disabledSet(server.disabled_capabilities));
      },
    }),
    defineAdminRoute<CapabilitiesBody>({
      method: 'PUT',
      path: '/v1/mcp-servers/:id/capabilities',
      summary: 'Enable or disable tools, prompts and resources of one MCP server',
      resource: 'mcp_server',
      action: 'update_capabilities',
      scope: 'mcp_servers.update',
      level: 'workspace',
      body: capabilitiesBody,
      response: S.record({ success: S.bool }),
      handler({ params, body, principal, store }) {
        const found = assertVisible(principal, findMcpServer(store, params.id!), 'MCP server');
        const next = applyChanges(store.c.mcpServers.get(found.id)?.disabled_capabilities, body.capabilities);
        store.c.mcpServers.update(found.id, (s) => ({ ...s, disabled_capabilities: next, last_updated_at: nowIso() }));
        return { success: true };
      },
    }),
    defineAdminRoute({
      method: 'POST',
      path: '/v1/mcp-servers/:id/test',
      summary: 'Test the connection to an MCP server: name, version and counts, or the error (scope mcp_servers.read)',
      resource: 'mcp_server',
      action: 'test',
      scope: 'mcp_servers.read',
      level: 'workspace',
      readOnly: true,
      response: testResponse,
      handler({ ctx, params, principal, store }) {
        const { integration } = serverAndIntegration(store, principal, params.id!);
        return testConnection(app, integration, timeoutMs, ctx);
      },
    }),
  ];
}
