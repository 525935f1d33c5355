/**
 * Who may reach which MCP server and which of its tools, prompts and resources:
 *
 *   server       active, in the caller's workspace, on an active integration
 *   capability   not disabled on the integration, nor on the server (operators, PUT …/capabilities)
 *   allow-lists  the workspace's `defaults.mcp_tools`, then the key's: each, when present, must
 *                match `server/name` (`*` matches any run of characters: `github/*`, or every server's
 *                `read_*` tools with a `*` server part)
 *
 * Disabled capabilities are absent from lists and refused on use; so are those outside an
 * allow-list. Allow-lists name tools and prompts; resources follow their server's entry `server/*`.
 */
import type { Principal, Records, Store } from '../../core/index.js';

export type CapabilityType = Records.McpCapabilityRef['type'];

/** An MCP server a principal may use, with its integration. */
export interface Reachable {
  server: Records.McpServerRecord;
  integration: Records.McpIntegrationRecord;
}

/**
 * The server named `slug`, if the principal may use it (else undefined: not found, as for a
 * stranger's). Read through the collections' memory caches (every call asks, more than once): the
 * records are shared, never mutate them.
 */
export function reachableServer(store: Store, principal: Principal, slug: string): Reachable | undefined {
  const server = store.c.mcpServers.cachedBy('slug', slug) ?? store.c.mcpServers.cached(slug);
  if (server === undefined || server.status !== 'active' || server.workspace_id !== principal.workspace_id) return undefined;
  const integration = store.c.mcpIntegrations.cached(server.mcp_integration_id);
  if (integration === undefined || integration.status !== 'active') return undefined;
  return { server, integration };
}

/** Every server the principal may use, by slug order. */
export function reachableServers(store: Store, principal: Principal): Reachable[] {
  if (principal.workspace_id === null) return [];
  const out: Reachable[] = [];
  for (const server of store.c.mcpServers.list({ filter: (s) => s.status === 'active' && s.workspace_id === principal.workspace_id }).items) {
    const found = reachableServer(store, principal, server.slug);
    if (found !== undefined) out.push(found);
  }
  return out.sort((a, b) => (a.server.slug < b.server.slug ? -1 : 1));
}

const disabledIn = (list: Records.McpCapabilityRef[] | undefined, type: CapabilityType, name: string): boolean =>
  list !== undefined && list.some((c) => c.type === type && c.name === name);

/** Why a capability may not be used, or null when it may. */
export function refusal(store: Store, principal: Principal, r: Reachable, type: CapabilityType, name: string): string | null {
  if (disabledIn(r.integration.disabled_capabilities, type, name) || disabledIn(r.server.disabled_capabilities, type, name)) {
    return `The ${type} "${name}" is disabled on the MCP server "${r.server.slug}".`;
  }
  const subject = type === 'resource' ? `${r.server.slug}/*` : `${r.server.slug}/${name}`;
  const workspace = principal.workspace_id === null ? undefined : store.c.workspaces.cached(principal.workspace_id);
  const wsList = workspace?.defaults.mcp_tools;
  if (wsList !== undefined && !matchesAny(wsList, subject, type === 'resource')) {
    return `The ${type} "${name}" of "${r.server.slug}" is not in this workspace's MCP allow-list.`;
  }
  const keyList = principal.defaults?.mcp_tools;
  if (keyList !== undefined && !matchesAny(keyList, subject, type === 'resource')) {
    return `The ${type} "${name}" of "${r.server.slug}" is not in this API key's MCP allow-list.`;
  }
  return null;
}

/** `pattern` with `*` wildcards against `subject`; a resource check passes for any entry of its server. */
function matchesAny(patterns: string[], subject: string, serverOnly: boolean): boolean {
  const server = subject.slice(0, subject.indexOf('/'));
  return patterns.some((p) => (serverOnly ? p.split('/')[0] === server || wildcard(p.split('/')[0]!, server) : wildcard(p, subject)));
}

const cache = new Map<string, RegExp>();
export function wildcard(pattern: string, value: string): boolean {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re.test(value);
}
