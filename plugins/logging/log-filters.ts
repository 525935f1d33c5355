/**
 * The filters of GET /v1/logs: a query string → a time window (a key range, see scan.ts), the
 * index terms a walk may use (log-query.ts) and a predicate on the rest. Exact matches on the
 * record's fields; `status` is a comma list; `metadata` a JSON object whose every pair must match.
 *
 * `virtual_key`, `config`, `route`, `mcp_server`, `mcp_tool` and `prompt_slug` have no index (a walk reads records for them): they narrow
 * what the indexed terms or the time order find. Records written before an index on them would
 * have no entries, so a predicate is the only answer that never hides an older record.
 */
import { AdminErrors, S, type Records } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { INDEXED } from './log-index.js';
import type { Term } from './log-query.js';

export interface LogListQuery {
  start_time?: string;
  end_time?: string;
  status?: string;
  model?: string;
  provider?: string;
  trace_id?: string;
  workspace_id?: string;
  api_key_id?: string;
  metadata?: string;
  virtual_key?: string;
  config?: string;
  route?: string;
  mcp_server?: string;
  mcp_tool?: string;
  prompt_slug?: string;
  cursor?: string;
  current_page: number;
  page_size: number;
}

const str255 = { type: 'string', minLength: 1, maxLength: 255 };
const ROUTE_LIST = '^\\s*[a-z_.]+\\s*(,\\s*[a-z_.]+\\s*)*$';

export const logListQuerySchema: S.JsonSchema = {
  properties: {
    start_time: S.dateTime,
    end_time: S.dateTime,
    status: { type: 'string', pattern: '^\\s*\\d{3}\\s*(,\\s*\\d{3}\\s*)*$', maxLength: 1024, description: 'Comma list of HTTP statuses, e.g. `200,429`.' },
    model: str255,
    provider: str255,
    trace_id: { type: 'string', minLength: 1, maxLength: 128 },
    workspace_id: S.workspaceRef,
    api_key_id: str255,
    metadata: { type: 'string', maxLength: 4096, description: 'A JSON object, e.g. `{"env":"prod"}`: every pair must match.' },
    virtual_key: { ...str255, description: 'The virtual key slug the request named in `x-gateway-virtual-key` (the record\'s `virtual_key`).' },
    config: {
      ...str255,
      description:
        'The config the request was routed by (the record\'s `config`): a saved config\'s id or slug as the request or its key named it ' +
        '(`pc-prod-1a2b3c` matches `config:pc-prod-1a2b3c`), or a source as recorded: `config:<slug>`, `virtual-key:<slug>`, `x-gateway-config` (an inline JSON config).',
    },
    route: {
      type: 'string',
      pattern: ROUTE_LIST,
      maxLength: 1024,
      description:
        'Comma list of routes (the record\'s `route`): `chat.completions`, `completions`, `embeddings`, `moderations`, `responses`, `messages`, ' +
        '`messages.count_tokens` (model calls), `passthrough`, `mcp` (MCP endpoints), `plugin` (admin API and other plugin routes), `not_found`, `method_not_allowed`, `health`.',
    },
    mcp_server: { ...str255, description: 'The MCP server slug of an MCP request (the record\'s `mcp.server`).' },
    mcp_tool: { type: 'string', minLength: 1, maxLength: 2048, description: 'The tool, prompt name or resource URI of an MCP call (the record\'s `mcp.tool`).' },
    prompt_slug: { ...str255, description: 'The stored prompt a request rendered (the record\'s `prompt_slug`).' },
    cursor: { type: 'string', pattern: '^[0-9a-f-]{1,36}$', description: 'The `next_cursor` of the previous page: the page after it (opaque).' },
    ...S.pagination,
  },
};

export interface LogFilter {
  fromMs: number | undefined;
  toMs: number | undefined;
  /** The equality filters an index can answer (each also checked by `match`). */
  terms: Term[];
  /** The workspace the caller is held to, if any. */
  workspaceId: string | undefined;
  /** Every condition besides time is an index term (no metadata, virtual key, config, route or MCP field): the index alone can count. */
  covered: boolean;
  /** The unindexed equality filters (PostgreSQL puts them in its WHERE; `match` checks them too). */
  virtualKey: string | undefined;
  /** The record `config` values that match (see {@link configSources}). */
  configs: string[] | undefined;
  routes: string[] | undefined;
  mcpServer: string | undefined;
  mcpTool: string | undefined;
  promptSlug: string | undefined;
  match(record: StoredLog): boolean;
}

/** `{"a":"1"}` → `[["a","1"]]`; a value that is not a JSON object of scalars is a 400 on `param`. */
export function metadataPairs(raw: unknown, param: string): Array<[string, string]> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw AdminErrors.invalid(`${param} must be a JSON object, e.g. {"env":"prod"}.`, param);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw AdminErrors.invalid(`${param} must be a JSON object, e.g. {"env":"prod"}.`, param);
  }
  return Object.entries(value).map(([k, v]) => {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw AdminErrors.invalid(`${param} values must be strings (numbers and booleans are accepted).`, param);
    }
    return [k, String(v)];
  });
}

/** A comma list's items, trimmed, empty ones dropped; undefined for no list (or an empty one). */
export function csvSet(s: string | undefined): Set<string> | undefined {
  if (s === undefined) return undefined;
  const items = s.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
  return items.length === 0 ? undefined : new Set(items);
}

/**
 * The record `config` values a config filter value stands for: itself (a source as recorded,
 * `config:<slug>`, `virtual-key:<slug>`, `x-gateway-config`) and, for a bare saved config id or
 * slug, the `config:<id or slug>` the router records for it.
 */
export const configSources = (value: string): string[] => (value.includes(':') || value === 'x-gateway-config' ? [value] : [value, `config:${value}`]);

/** Metadata values are stored as strings (the core stringifies numbers and booleans too). */
export const metadataMatches = (record: { metadata: Record<string, string> }, pairs: ReadonlyArray<[string, string]>): boolean =>
  pairs.every(([k, v]) => record.metadata[k] === v);

const timeOf = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : new Date(iso).getTime());

export function logFilter(query: LogListQuery, workspace: Records.Workspace | null): LogFilter {
  const fromMs = timeOf(query.start_time);
  const toMs = timeOf(query.end_time);
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) throw AdminErrors.invalid('start_time must not be after end_time.', 'start_time');
  // ISO strings in UTC (`…Z`) compare in time order as strings, which is how records store them.
  const from = fromMs === undefined ? undefined : new Date(fromMs).toISOString();
  const to = toMs === undefined ? undefined : new Date(toMs).toISOString();
  const statuses = query.status === undefined ? undefined : new Set(query.status.split(',').map((s) => Number(s.trim())));
  const pairs = query.metadata === undefined ? [] : metadataPairs(query.metadata, 'metadata');
  const workspaceId = workspace?.id;
  const configs = query.config === undefined ? undefined : new Set(configSources(query.config));
  const routes = csvSet(query.route);
  const terms: Term[] = [];
  if (workspaceId !== undefined) terms.push({ field: INDEXED.workspace, values: [workspaceId] });
  if (statuses !== undefined) terms.push({ field: INDEXED.status, values: [...statuses].map(String) });
  if (query.model !== undefined) terms.push({ field: INDEXED.model, values: [query.model] });
  if (query.provider !== undefined) terms.push({ field: INDEXED.provider, values: [query.provider] });
  if (query.api_key_id !== undefined) terms.push({ field: INDEXED.api_key_id, values: [query.api_key_id] });
  if (query.trace_id !== undefined) terms.push({ field: INDEXED.trace_id, values: [query.trace_id] });
  return {
    fromMs,
    toMs,
    terms,
    workspaceId,
    covered: pairs.length === 0 && query.virtual_key === undefined && configs === undefined && routes === undefined && query.mcp_server === undefined && query.mcp_tool === undefined && query.prompt_slug === undefined,
    virtualKey: query.virtual_key,
    configs: configs === undefined ? undefined : [...configs],
    routes: routes === undefined ? undefined : [...routes],
    mcpServer: query.mcp_server,
    mcpTool: query.mcp_tool,
    promptSlug: query.prompt_slug,
    match: (r) =>
      (workspaceId === undefined || r.workspace_id === workspaceId) &&
      (from === undefined || r.created_at >= from) &&
      (to === undefined || r.created_at <= to) &&
      (statuses === undefined || statuses.has(r.status)) &&
      (query.model === undefined || r.model === query.model) &&
      (query.provider === undefined || r.provider === query.provider) &&
      (query.trace_id === undefined || r.trace_id === query.trace_id) &&
      (query.api_key_id === undefined || r.api_key_id === query.api_key_id) &&
      (query.virtual_key === undefined || r.virtual_key === query.virtual_key) &&
      (configs === undefined || (r.config !== null && configs.has(r.config))) &&
      (routes === undefined || routes.has(r.route)) &&
      (query.mcp_server === undefined || r.mcp?.server === query.mcp_server) &&
      (query.mcp_tool === undefined || r.mcp?.tool === query.mcp_tool) &&
      (query.prompt_slug === undefined || r.prompt_slug === query.prompt_slug) &&
      metadataMatches(r, pairs),
  };
}
