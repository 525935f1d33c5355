/**
 * The group lists of admin-api.md §16: requests (and cost) per user, per model and per value of
 * one metadata key, over the range, most requests first, in the list envelope. Ours besides:
 * guardrail verdicts per check and phase, most failures first, with the requests denied; and
 * traffic (requests, errors, cost, tokens, last seen) per provider, per API key and per workspace,
 * read from the bucket key's own dimensions.
 *
 * Per the reference, `/groups/users` and `/groups/ai-models` give `requests` and `cost` as
 * strings. `/groups/metadata/{key}` gives `avg_weighted_feedback` and `requests_with_feedback`
 * as null: feedback is attached to a trace, and rollups do not remember which trace carried which
 * metadata.
 */
import { S } from '../../core/index.js';
import { mcpOfKey, metadataPairs, type Bucket, type BucketKey, type UserCounts } from './bucket.js';
import { accumulate, denseHistogram, percentile } from './histogram.js';
import { PHASES, SLOTS, VERDICTS, type Phase } from './guardrail-counts.js';
import { cents, round3 } from './graphs.js';
import type { Visit } from './query.js';

export interface Page {
  current_page: number;
  page_size: number;
}

export interface GroupList<T> {
  object: 'list';
  total: number;
  data: T[];
}

const group = (fields: Record<string, S.JsonSchema>): S.JsonSchema => S.listOf(S.record({ ...fields, object: { type: 'string', const: 'analytics-group' } }));

/** A traffic group: its dimension's fields, then the same counts for every dimension. */
function traffic(dimension: Record<string, S.JsonSchema>): S.JsonSchema {
  return group({
    ...dimension,
    requests: S.int,
    errors: { ...S.int, description: 'Status >= 400, or a stream that ended in an error.' },
    cost: { ...S.num, description: 'In cents.' },
    prompt_tokens: S.int,
    completion_tokens: S.int,
    total_tokens: S.int,
    last_seen: S.str,
  });
}

export const groupSchemas = {
  users: group({ user: S.str, requests: S.str, cost: S.str }),
  models: group({ ai_model: S.str, requests: S.str }),
  metadata: group({
    metadata_value: S.str,
    requests: S.int,
    cost: S.num,
    avg_tokens: S.num,
    avg_weighted_feedback: S.nullable(S.num),
    requests_with_feedback: S.nullable(S.int),
    last_seen: S.str,
  }),
  providers: traffic({ provider: S.str }),
  apiKeys: traffic({ api_key_id: S.str, api_key_name: { ...S.strOrNull, description: 'null when the key is gone or not the caller\'s to see.' } }),
  workspaces: traffic({ workspace_id: S.str, workspace_slug: { ...S.strOrNull, description: 'null when the workspace is gone.' } }),
  mcp: group({
    server: { ...S.str, description: 'The MCP server slug.' },
    method: { ...S.str, description: '`tools/call`, `resources/read` or `prompts/get`.' },
    tool: { ...S.str, description: 'The tool, prompt name or resource URI.' },
    requests: S.int,
    errors: { ...S.int, description: 'Calls whose outcome was not `ok`: a JSON-RPC error, a tool result with `isError`, refused by the gateway, or cancelled.' },
    avg_latency: { ...S.num, description: 'Mean time from request to last byte (ms).' },
    p50_latency: { ...S.num, description: 'Median (ms), within one histogram bin (±12 %).' },
    p95_latency: { ...S.num, description: '95th percentile (ms), within one histogram bin (±12 %).' },
    last_seen: S.str,
  }),
  guardrails: S.record({
    object: { type: 'string', const: 'list' },
    total: { ...S.int, description: 'Rows: distinct (check, phase) pairs that ran in the range.' },
    denied: { ...S.int, description: 'Requests a guardrail denied (446, or a stream ended by a deny).' },
    data: {
      type: 'array',
      items: S.record({
        check: { ...S.str, description: 'Check id, e.g. `default.pii`.' },
        phase: { type: 'string', enum: [...PHASES], description: '`input`: on the request (before_request_hooks); `output`: on the answer (after_request_hooks).' },
        pass: S.int,
        fail: S.int,
        error: { ...S.int, description: 'Results whose check threw or timed out (not counted in pass or fail).' },
        object: { type: 'string', const: 'analytics-group' },
      }),
    },
  }),
};

function page<R, V>(rows: Map<string, R>, requests: (r: R) => number, view: (name: string, r: R) => V, p: Page): GroupList<V> {
  const sorted = [...rows].sort((a, b) => requests(b[1]) - requests(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const start = p.current_page * p.page_size;
  return { object: 'list', total: sorted.length, data: sorted.slice(start, start + p.page_size).map(([name, r]) => view(name, r)) };
}

/** Calls a visitor with every bucket (or every bucket's users) of the query. */
type Scan<V = Bucket> = (visit: Visit<V>) => void;

export function usersGroup(scan: Scan<UserCounts>, p: Page): GroupList<{ user: string; requests: string; cost: string; object: 'analytics-group' }> {
  const rows = new Map<string, { requests: number; cost: number }>();
  scan((users) => {
    for (let i = 0; i < users.names.length; i++) {
      const row = rows.get(users.names[i]!);
      if (row === undefined) rows.set(users.names[i]!, { requests: users.requests[i]!, cost: users.cost[i]! });
      else {
        row.requests += users.requests[i]!;
        row.cost += users.cost[i]!;
      }
    }
  });
  return page(rows, (r) => r.requests, (user, r) => ({ user, requests: String(r.requests), cost: String(cents(r.cost)), object: 'analytics-group' as const }), p);
}

export function modelsGroup(scan: Scan, p: Page): GroupList<{ ai_model: string; requests: string; object: 'analytics-group' }> {
  const rows = new Map<string, number>();
  scan((bucket, key) => {
    if (key[3] !== '') rows.set(key[3], (rows.get(key[3]) ?? 0) + bucket.requests);
  });
  return page(rows, (n) => n, (ai_model, n) => ({ ai_model, requests: String(n), object: 'analytics-group' as const }), p);
}

interface MetadataRow {
  requests: number;
  cost: number;
  tokens: number;
  last_at: number;
}

export function metadataGroup(scan: Scan, metadataKey: string, p: Page): GroupList<Record<string, unknown>> {
  const rows = new Map<string, MetadataRow>();
  // One parse per distinct metadata dimension, not per bucket.
  const valueOf = new Map<string, string | null>();
  scan((bucket: Bucket, key: BucketKey) => {
    let value = valueOf.get(key[7]);
    if (value === undefined) {
      value = metadataPairs(key[7]).find(([k]) => k === metadataKey)?.[1] ?? null;
      valueOf.set(key[7], value);
    }
    if (value === null) return;
    let row = rows.get(value);
    if (row === undefined) rows.set(value, (row = { requests: 0, cost: 0, tokens: 0, last_at: 0 }));
    row.requests += bucket.requests;
    row.cost += bucket.cost;
    row.tokens += bucket.prompt_tokens + bucket.completion_tokens;
    if (bucket.last_at > row.last_at) row.last_at = bucket.last_at;
  });
  return page(
    rows,
    (r) => r.requests,
    (metadata_value, r) => ({
      metadata_value,
      requests: r.requests,
      cost: cents(r.cost),
      avg_tokens: r.requests === 0 ? 0 : round3(r.tokens / r.requests),
      avg_weighted_feedback: null,
      requests_with_feedback: null,
      last_seen: new Date(r.last_at).toISOString(),
      object: 'analytics-group',
    }),
    p,
  );
}

/** What a traffic group adds up per row. */
interface TrafficRow {
  requests: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  last_at: number;
}

export interface TrafficCounts {
  requests: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  last_seen: string;
  object: 'analytics-group';
}

/** The bucket key's dimensions a traffic group can be by: provider, API key, workspace. */
const DIMENSION = { provider: 2, apiKey: 6, workspace: 0 } as const;

/**
 * Requests, errors, cost and tokens per value of one key dimension, most requests first. An empty
 * value (a request refused before a provider was chosen, a JWT caller with no key, a request
 * with no workspace) has no row, as a model-less request has none in `/groups/ai-models`.
 * `view` names the row: it runs for the rows of the page only (a store read is fine there).
 */
function trafficGroup<V>(scan: Scan, dimension: keyof typeof DIMENSION, view: (value: string) => V, p: Page): GroupList<V & TrafficCounts> {
  const at = DIMENSION[dimension];
  const rows = new Map<string, TrafficRow>();
  scan((bucket, key) => {
    const value = key[at];
    if (value === '') return;
    let row = rows.get(value);
    if (row === undefined) rows.set(value, (row = { requests: 0, errors: 0, cost: 0, prompt_tokens: 0, completion_tokens: 0, last_at: 0 }));
    row.requests += bucket.requests;
    row.errors += bucket.errors;
    row.cost += bucket.cost;
    row.prompt_tokens += bucket.prompt_tokens;
    row.completion_tokens += bucket.completion_tokens;
    if (bucket.last_at > row.last_at) row.last_at = bucket.last_at;
  });
  return page(
    rows,
    (r) => r.requests,
    (value, r) => ({
      ...view(value),
      requests: r.requests,
      errors: r.errors,
      cost: cents(r.cost),
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      total_tokens: r.prompt_tokens + r.completion_tokens,
      last_seen: new Date(r.last_at).toISOString(),
      object: 'analytics-group' as const,
    }),
    p,
  );
}

export const providersGroup = (scan: Scan, p: Page): GroupList<{ provider: string } & TrafficCounts> =>
  trafficGroup(scan, 'provider', (provider) => ({ provider }), p);

/** `nameOf`: the key's name, or null when the caller may not see it (or it is gone). */
export const apiKeysGroup = (scan: Scan, nameOf: (id: string) => string | null, p: Page): GroupList<{ api_key_id: string; api_key_name: string | null } & TrafficCounts> =>
  trafficGroup(scan, 'apiKey', (id) => ({ api_key_id: id, api_key_name: nameOf(id) }), p);

export const workspacesGroup = (scan: Scan, slugOf: (id: string) => string | null, p: Page): GroupList<{ workspace_id: string; workspace_slug: string | null } & TrafficCounts> =>
  trafficGroup(scan, 'workspace', (id) => ({ workspace_id: id, workspace_slug: slugOf(id) }), p);

interface McpRow {
  key: BucketKey;
  requests: number;
  errors: number;
  latency: number;
  hist: Float64Array;
  last_at: number;
}

export interface McpGroupRow {
  server: string;
  method: string;
  tool: string;
  requests: number;
  errors: number;
  avg_latency: number;
  p50_latency: number;
  p95_latency: number;
  last_seen: string;
  object: 'analytics-group';
}

/**
 * MCP calls per server, method and tool (or prompt, or resource), most requests first. Reads the
 * MCP buckets only: the route asks for them (`filters.mcp`), every other group leaves them out.
 */
export function mcpGroup(scan: Scan, p: Page): GroupList<McpGroupRow> {
  const rows = new Map<string, McpRow>();
  scan((bucket, key) => {
    const name = `${key[2]}\u0000${key[3]}`;
    let row = rows.get(name);
    if (row === undefined) rows.set(name, (row = { key, requests: 0, errors: 0, latency: 0, hist: denseHistogram(), last_at: 0 }));
    row.requests += bucket.requests;
    row.errors += bucket.errors;
    row.latency += bucket.latency_ms;
    accumulate(row.hist, bucket.hist);
    if (bucket.last_at > row.last_at) row.last_at = bucket.last_at;
  });
  return page(
    rows,
    (r) => r.requests,
    (_name, r) => ({
      ...mcpOfKey(r.key),
      requests: r.requests,
      errors: r.errors,
      avg_latency: r.requests === 0 ? 0 : round3(r.latency / r.requests),
      p50_latency: round3(percentile(r.hist, 0.5)),
      p95_latency: round3(percentile(r.hist, 0.95)),
      last_seen: new Date(r.last_at).toISOString(),
      object: 'analytics-group' as const,
    }),
    p,
  );
}

interface GuardrailRow {
  check: string;
  phase: Phase;
  /** pass, fail, error */
  counts: [number, number, number];
}

export type GuardrailsGroup = GroupList<{ check: string; phase: Phase; pass: number; fail: number; error: number; object: 'analytics-group' }> & { denied: number };

/**
 * Check results per check and phase (most failures and errors first), and the requests denied.
 * Buckets without guardrails are skipped at the cost of one property read.
 */
export function guardrailsGroup(scan: Scan, p: Page): GuardrailsGroup {
  const rows = new Map<string, GuardrailRow>();
  let denied = 0;
  scan((bucket) => {
    const g = bucket.guardrails;
    if (g === undefined) return;
    denied += g.denied;
    for (let i = 0; i < g.checks.length; i++) {
      for (let ph = 0; ph < PHASES.length; ph++) {
        const at = i * SLOTS + ph * VERDICTS.length;
        if (g.counts[at]! + g.counts[at + 1]! + g.counts[at + 2]! === 0) continue;
        // `check phase`: the name ties break on, so a check's input row comes before its output row.
        const name = `${g.checks[i]!} ${PHASES[ph]!}`;
        let row = rows.get(name);
        if (row === undefined) rows.set(name, (row = { check: g.checks[i]!, phase: PHASES[ph]!, counts: [0, 0, 0] }));
        for (let v = 0; v < VERDICTS.length; v++) row.counts[v]! += g.counts[at + v]!;
      }
    }
  });
  const list = page(
    rows,
    (r) => r.counts[1] + r.counts[2],
    (_name, r) => ({ check: r.check, phase: r.phase, pass: r.counts[0], fail: r.counts[1], error: r.counts[2], object: 'analytics-group' as const }),
    p,
  );
  return { ...list, denied };
}
