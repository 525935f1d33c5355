/**
 * The common query parameters of every analytics route (admin-api.md §16) and how they become a
 * {@link Query}: which workspaces, which minutes, which dimensions.
 *
 * Applied: `time_of_generation_min`/`max` (required), `status_code`, `ai_org_model`,
 * `api_key_ids`, `metadata`, `prompt_slug` (kept as the `_prompt` pair of the metadata dimension)
 * and `workspace_slug` (or our `workspace_id`). The reference's other
 * filters (cost, token counts, feedback score, virtual keys, configs, trace and span ids)
 * select single requests, which rollups do not keep: they are refused with `unsupported_filter`
 * rather than ignored, because ignoring them would answer for every request. The logs API
 * filters single requests.
 */
import { AdminErrors, findWorkspace, PROMPT_METADATA_KEY, S, type AdminInput, type Records } from '../../core/index.js';
import { AnalyticsErrors } from './errors.js';
import { USER_METADATA_KEY } from './bucket.js';
import { MINUTE_POINTS_BELOW, type Filters, type Query } from './query.js';

export interface CommonParams {
  workspace_slug?: string;
  workspace_id?: string;
  time_of_generation_min: string;
  time_of_generation_max: string;
  status_code?: string;
  ai_org_model?: string;
  api_key_ids?: string;
  metadata?: string;
  prompt_slug?: string;
  [unsupported: string]: unknown;
}

/** The longest range a query may ask for (9,600 hourly points). */
export const MAX_RANGE_DAYS = 400;

const list = { type: 'string', minLength: 1, maxLength: 8192 };

export const commonParams: Record<string, S.JsonSchema> = {
  workspace_slug: S.workspaceRef,
  workspace_id: S.workspaceRef,
  time_of_generation_min: { ...S.dateTime, description: 'Start of the range (ISO 8601), inclusive.' },
  time_of_generation_max: { ...S.dateTime, description: 'End of the range (ISO 8601), exclusive.' },
  status_code: { type: 'string', pattern: '^\\s*[1-5][0-9]{2}\\s*(,\\s*[1-5][0-9]{2}\\s*)*$', description: 'Comma list, e.g. `401,403`.' },
  ai_org_model: { ...list, description: 'Comma list of `provider__model`.' },
  api_key_ids: { ...list, description: 'Comma list of API key ids.' },
  metadata: { type: 'string', minLength: 2, maxLength: 8192, description: 'A JSON object of strings, e.g. `{"env":"staging"}`.' },
  prompt_slug: { type: 'string', minLength: 1, maxLength: 255, description: 'Requests rendered from this stored prompt.' },
};

export const REQUIRED_PARAMS = ['time_of_generation_min', 'time_of_generation_max'];

const UNSUPPORTED = [
  'total_units_min', 'total_units_max', 'cost_min', 'cost_max', 'prompt_token_min', 'prompt_token_max',
  'completion_token_min', 'completion_token_max', 'weighted_feedback_min', 'weighted_feedback_max',
  'virtual_keys', 'configs', 'trace_id', 'span_id',
] as const;

const csv = (s: string | undefined): string[] | undefined => {
  if (s === undefined) return undefined;
  const items = s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  return items.length === 0 ? undefined : items;
};

function metadataFilter(text: string | undefined): Array<[string, string]> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw AnalyticsErrors.invalidFilter('metadata must be a JSON object of strings, e.g. {"env":"staging"}.', { param: 'metadata' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw AnalyticsErrors.invalidFilter('metadata must be a JSON object of strings, e.g. {"env":"staging"}.', { param: 'metadata' });
  }
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw AnalyticsErrors.invalidFilter('metadata values must be strings.', { param: 'metadata' });
    // Users are counted inside buckets, not as a dimension: their requests cannot be told apart
    // from the rest of a bucket's latency, tokens and errors.
    if (k === USER_METADATA_KEY) {
      throw AnalyticsErrors.unsupportedFilter('metadata._user cannot filter analytics rollups; GET /v1/analytics/groups/users gives each user\'s requests and cost.', { param: 'metadata' });
    }
    pairs.push([k, v]);
  }
  return pairs.length === 0 ? undefined : pairs;
}

/** The dimension filters, or a 400 naming the first filter rollups cannot apply. */
export function filtersOf(params: CommonParams): Filters {
  for (const name of UNSUPPORTED) {
    if (params[name] !== undefined) {
      throw AnalyticsErrors.unsupportedFilter(`${name} selects single requests, which analytics rollups do not keep; the logs API can filter by it.`, { param: name });
    }
  }
  const statuses = csv(params.status_code);
  const models = csv(params.ai_org_model);
  const apiKeys = csv(params.api_key_ids);
  const filters: Filters = {};
  if (statuses) filters.statuses = new Set(statuses.map(Number));
  if (models) filters.models = new Set(models);
  if (apiKeys) filters.apiKeys = new Set(apiKeys);
  const metadata = metadataFilter(params.metadata);
  // A stored prompt is rolled up as the `_prompt` pair of the metadata dimension.
  const prompt: Array<[string, string]> = typeof params.prompt_slug === 'string' ? [[PROMPT_METADATA_KEY, params.prompt_slug]] : [];
  if (metadata || prompt.length > 0) filters.metadata = [...(metadata ?? []), ...prompt];
  return filters;
}

export const hasDimensionFilters = (f: Filters): boolean => f.statuses !== undefined || f.models !== undefined || f.apiKeys !== undefined || f.metadata !== undefined;

/**
 * The workspaces the caller sees: a workspace key its own; an organisation key the one named by
 * `workspace_id` or `workspace_slug`, else every workspace (null).
 */
function workspacesOf(input: AdminInput<never, CommonParams>): string[] | null {
  const { principal, workspace, query, store } = input;
  const slug = query.workspace_slug;
  if (principal.workspace_id !== null) {
    const own = workspace as Records.Workspace;
    if (slug !== undefined && slug !== own.slug && slug !== own.id) throw AdminErrors.forbidden('A workspace key can only read its own workspace.', 'workspace_slug');
    return [own.id];
  }
  if (workspace !== null) return [workspace.id];
  if (slug === undefined) return null;
  const named = findWorkspace(store, slug);
  if (named === undefined) throw AdminErrors.notFound('The workspace named by workspace_slug does not exist.', 'workspace_slug');
  return [named.id];
}

/**
 * The query a request asks for. `oldestMinute`: minute buckets before it are pruned, so a range
 * reaching that far is answered hourly.
 */
export function queryOf(input: AdminInput<never, CommonParams>, oldestMinute: number): Query {
  const { query } = input;
  const fromMs = Date.parse(query.time_of_generation_min);
  const toMs = Date.parse(query.time_of_generation_max);
  if (!(fromMs < toMs)) throw AnalyticsErrors.invalidRange('time_of_generation_min must be before time_of_generation_max.', { param: 'time_of_generation_min' });
  if (toMs - fromMs > MAX_RANGE_DAYS * 86_400_000) {
    throw AnalyticsErrors.invalidRange(`The range may span at most ${MAX_RANGE_DAYS} days.`, { param: 'time_of_generation_max' });
  }
  // Whole minutes: the one holding `min`, up to the one holding `max` (excluded when `max` is on its boundary).
  const from = Math.floor(fromMs / 60_000);
  const to = Math.ceil(toMs / 60_000);
  const step = to - from < MINUTE_POINTS_BELOW && from >= oldestMinute ? 1 : 60;
  return { workspaces: workspacesOf(input), from, to, step, filters: filtersOf(query) };
}
