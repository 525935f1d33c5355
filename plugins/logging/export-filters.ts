/**
 * What a log export selects and what each line holds (admin-api.md §18, ExportFilters and
 * `requested_data`). Filters become a time window (a key range) and a predicate; the requested
 * fields become a projection that keeps the caller's field order.
 *
 * Ours besides the reference's: `provider`, `api_key_id`, `route`, `mcp_server` and `mcp_tool`
 * (comma lists, as GET /v1/logs filters them), so an export can hold exactly what a filtered log
 * list shows. `prompt_slug` matches the stored prompt a request rendered, as the log list's does. A
 * `configs` item matches as the log list's `config` does (a bare slug or id matches `config:<it>`).
 */
import { AdminErrors, S } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { configSources, csvSet, metadataMatches, metadataPairs } from './log-filters.js';
import { INDEXED } from './log-index.js';
import type { Term } from './log-query.js';

export interface ExportFilters {
  time_of_generation_min?: string;
  time_of_generation_max?: string;
  total_units_min?: number;
  total_units_max?: number;
  cost_min?: number;
  cost_max?: number;
  ai_model?: string;
  prompt_token_min?: number;
  prompt_token_max?: number;
  completion_token_min?: number;
  completion_token_max?: number;
  status_code?: string;
  metadata?: Record<string, unknown>;
  ai_org_model?: string;
  weighted_feedback_min?: number;
  weighted_feedback_max?: number;
  virtual_keys?: string;
  trace_id?: string;
  configs?: string;
  workspace_slug?: string;
  prompt_slug?: string;
  provider?: string;
  api_key_id?: string;
  route?: string;
  mcp_server?: string;
  mcp_tool?: string;
  page_size?: number;
  current_page?: number;
}

/** The most lines one export holds (the reference's `page_size` maximum and default). */
export const EXPORT_PAGE_MAX = 50_000;

const count = { type: 'integer', minimum: 0 };
const money = { type: 'number', minimum: 0, description: 'USD cents.' };
const feedback = { type: 'number', minimum: -10, maximum: 10 };
const list = { type: 'string', minLength: 1, maxLength: 4096, description: 'Comma list.' };

export const exportFiltersSchema: S.JsonSchema = {
  type: 'object',
  properties: {
    time_of_generation_min: S.dateTime,
    time_of_generation_max: S.dateTime,
    total_units_min: count,
    total_units_max: count,
    cost_min: money,
    cost_max: money,
    ai_model: list,
    prompt_token_min: count,
    prompt_token_max: count,
    completion_token_min: count,
    completion_token_max: count,
    status_code: { type: 'string', pattern: '^\\s*\\d{3}\\s*(,\\s*\\d{3}\\s*)*$', maxLength: 1024 },
    metadata: { type: 'object', maxProperties: 64 },
    ai_org_model: { ...list, description: 'Comma list of provider__model, e.g. `openai__gpt-4o`.' },
    weighted_feedback_min: feedback,
    weighted_feedback_max: feedback,
    virtual_keys: list,
    trace_id: list,
    configs: list,
    workspace_slug: S.workspaceRef,
    prompt_slug: list,
    provider: { ...list, description: 'Comma list of providers (ours, as GET /v1/logs `provider`).' },
    api_key_id: { ...list, description: 'Comma list of API key ids (ours, as GET /v1/logs `api_key_id`).' },
    route: { ...list, description: 'Comma list of routes, e.g. `chat.completions,embeddings` (ours, as GET /v1/logs `route`).' },
    mcp_server: { ...list, description: 'Comma list of MCP server slugs (ours, as GET /v1/logs `mcp_server`).' },
    mcp_tool: { ...list, description: 'Comma list of MCP tools, prompt names or resource URIs (ours, as GET /v1/logs `mcp_tool`).' },
    page_size: { type: 'integer', minimum: 1, maximum: EXPORT_PAGE_MAX },
    current_page: { type: 'integer', minimum: 0 },
  },
  additionalProperties: false,
};

/** The reference's `requested_data` values, in the reference's order. */
export const REQUESTED_FIELDS = [
  'id', 'trace_id', 'created_at', 'request', 'response', 'is_success', 'ai_org', 'ai_model', 'req_units', 'res_units', 'total_units',
  'request_url', 'cost', 'cost_currency', 'response_time', 'response_status_code', 'mode', 'config', 'prompt_slug', 'metadata',
] as const;

export type RequestedField = (typeof REQUESTED_FIELDS)[number];

export const requestedDataSchema: S.JsonSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: [...REQUESTED_FIELDS] },
};

/** One export line's value of each requested field. Fields the gateway does not track are null. */
const FIELD: Record<RequestedField, (r: StoredLog) => unknown> = {
  id: (r) => r.id,
  trace_id: (r) => r.trace_id,
  created_at: (r) => r.created_at,
  request: (r) => ({ url: r.path, method: r.method, body: r.request_body }),
  response: (r) => ({ status: r.status, body: r.response_body, response_time: r.latency.total_ms }),
  is_success: (r) => r.is_success,
  ai_org: (r) => r.provider,
  ai_model: (r) => r.model,
  req_units: (r) => r.usage?.prompt_tokens ?? 0,
  res_units: (r) => r.usage?.completion_tokens ?? 0,
  total_units: (r) => r.usage?.total_tokens ?? 0,
  request_url: (r) => r.path,
  cost: (r) => r.cost_cents,
  cost_currency: () => 'USD',
  response_time: (r) => r.latency.total_ms,
  response_status_code: (r) => r.status,
  // The record keeps which option answered, not the strategy mode of the config.
  mode: () => null,
  config: (r) => r.config,
  prompt_slug: (r) => r.prompt_slug ?? null,
  metadata: (r) => r.metadata,
};

/** One JSONL line (with its newline): the requested fields, in the order they were requested. */
export function exportLine(record: StoredLog, fields: ReadonlyArray<RequestedField>): string {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = FIELD[f](record);
  return `${JSON.stringify(out)}\n`;
}

export interface ExportSelection {
  fromMs: number | undefined;
  toMs: number | undefined;
  /** `weighted_feedback_*` need each trace's feedback: the caller loads it only when this is true. */
  needsFeedback: boolean;
  /** The equality filters an index can answer (each also checked by `match`). */
  terms: Term[];
  /** The one workspace the export is held to, if any. */
  workspaceId: string | undefined;
  offset: number;
  limit: number;
  match(record: StoredLog, feedback: ReadonlyMap<string, number> | undefined): boolean;
}

const csv = csvSet;

const within = (v: number, min: number | undefined, max: number | undefined): boolean => (min === undefined || v >= min) && (max === undefined || v <= max);

/**
 * The selection of an export's filters, within `workspaceId` (null: every workspace, for an
 * organisation key's export). `workspace_slug` narrows an organisation-wide export further.
 */
export function exportSelection(f: ExportFilters, workspaceId: string | null, resolveWorkspace: (ref: string) => string | undefined): ExportSelection {
  const fromMs = f.time_of_generation_min === undefined ? undefined : new Date(f.time_of_generation_min).getTime();
  const toMs = f.time_of_generation_max === undefined ? undefined : new Date(f.time_of_generation_max).getTime();
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) {
    throw AdminErrors.invalid('time_of_generation_min must not be after time_of_generation_max.', 'filters.time_of_generation_min');
  }
  const from = fromMs === undefined ? undefined : new Date(fromMs).toISOString();
  const to = toMs === undefined ? undefined : new Date(toMs).toISOString();
  const pairs = f.metadata === undefined ? [] : metadataPairs(f.metadata, 'filters.metadata');
  const statuses = csv(f.status_code);
  const models = csv(f.ai_model);
  const orgModels = csv(f.ai_org_model);
  const virtualKeys = csv(f.virtual_keys);
  const traces = csv(f.trace_id);
  const configList = csv(f.configs);
  const configs = configList === undefined ? undefined : new Set([...configList].flatMap(configSources));
  const providers = csv(f.provider);
  const apiKeys = csv(f.api_key_id);
  const routes = csv(f.route);
  const mcpServers = csv(f.mcp_server);
  const mcpTools = csv(f.mcp_tool);
  const promptSlugs = csv(f.prompt_slug);
  // An unknown slug selects nothing rather than everything.
  const slugWorkspace = f.workspace_slug === undefined ? undefined : (resolveWorkspace(f.workspace_slug) ?? '\u0000none');
  const needsFeedback = f.weighted_feedback_min !== undefined || f.weighted_feedback_max !== undefined;
  const limit = f.page_size ?? EXPORT_PAGE_MAX;
  const terms: Term[] = [];
  // Both hold when both are given: the export's own workspace and the slug's (they may differ: nothing then).
  if (workspaceId !== null) terms.push({ field: INDEXED.workspace, values: [workspaceId] });
  if (slugWorkspace !== undefined) terms.push({ field: INDEXED.workspace, values: [slugWorkspace] });
  if (statuses !== undefined) terms.push({ field: INDEXED.status, values: [...statuses] });
  if (models !== undefined) terms.push({ field: INDEXED.model, values: [...models] });
  if (traces !== undefined) terms.push({ field: INDEXED.trace_id, values: [...traces] });
  if (providers !== undefined) terms.push({ field: INDEXED.provider, values: [...providers] });
  if (apiKeys !== undefined) terms.push({ field: INDEXED.api_key_id, values: [...apiKeys] });
  return {
    fromMs,
    toMs,
    needsFeedback,
    terms,
    workspaceId: workspaceId ?? slugWorkspace,
    offset: (f.current_page ?? 0) * limit,
    limit,
    match(r, feedback) {
      const u = r.usage;
      if (workspaceId !== null && r.workspace_id !== workspaceId) return false;
      if (slugWorkspace !== undefined && r.workspace_id !== slugWorkspace) return false;
      if ((from !== undefined && r.created_at < from) || (to !== undefined && r.created_at > to)) return false;
      if (!within(u?.total_tokens ?? 0, f.total_units_min, f.total_units_max)) return false;
      if (!within(u?.prompt_tokens ?? 0, f.prompt_token_min, f.prompt_token_max)) return false;
      if (!within(u?.completion_tokens ?? 0, f.completion_token_min, f.completion_token_max)) return false;
      if (!within(r.cost_cents, f.cost_min, f.cost_max)) return false;
      if (statuses !== undefined && !statuses.has(String(r.status))) return false;
      if (models !== undefined && (r.model === null || !models.has(r.model))) return false;
      if (orgModels !== undefined && !orgModels.has(`${r.provider ?? ''}__${r.model ?? ''}`)) return false;
      if (virtualKeys !== undefined && (r.virtual_key === null || !virtualKeys.has(r.virtual_key))) return false;
      if (traces !== undefined && !traces.has(r.trace_id)) return false;
      if (configs !== undefined && (r.config === null || !configs.has(r.config))) return false;
      if (providers !== undefined && (r.provider === null || !providers.has(r.provider))) return false;
      if (apiKeys !== undefined && (r.api_key_id === null || !apiKeys.has(r.api_key_id))) return false;
      if (routes !== undefined && !routes.has(r.route)) return false;
      if (mcpServers !== undefined && (r.mcp?.server == null || !mcpServers.has(r.mcp.server))) return false;
      if (mcpTools !== undefined && (r.mcp?.tool == null || !mcpTools.has(r.mcp.tool))) return false;
      if (promptSlugs !== undefined && (r.prompt_slug === undefined || !promptSlugs.has(r.prompt_slug))) return false;
      if (needsFeedback) {
        const score = feedback?.get(r.trace_id);
        if (score === undefined || !within(score, f.weighted_feedback_min, f.weighted_feedback_max)) return false;
      }
      return metadataMatches(r, pairs);
    },
  };
}
