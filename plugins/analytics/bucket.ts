/**
 * One rollup bucket: everything analytics needs about the requests of one minute (or hour) that
 * share a workspace and a small set of dimensions. Every field adds up (counts, sums, histogram
 * bins, per-user counts), so buckets from several processes and several minutes merge exactly.
 *
 *   key      [workspace, minute, provider, model, status, cache status, api_key_id, metadata]
 *   value    Bucket        in analytics_minutes / analytics_hours
 *            UserCounts    in analytics_minute_users / analytics_hour_users, under the same key
 *
 * The key leads with the workspace, then the minute (minutes since the epoch; an hour bucket is
 * keyed by its first minute), so a workspace's time range is one contiguous LMDB range. The status
 * is the exact code (a handful of values), not only its class: the `status_code` filter is exact.
 * Whatever the key already says (cache hit or miss, status) is not repeated in the value.
 *
 * Guardrail verdicts by check ride in the bucket only when one of its requests had guardrails
 * (guardrail-counts.ts): the common bucket does not grow.
 *
 * A bucket's users live beside it, not in it: up to 1000 names per bucket would make every graph
 * decode them, and only the users graph and group read them (measured: 25× slower 30-day graphs).
 */
import type { LogRecord } from '../../core/index.js';
import { addToPairs, binOf, mergePairs } from './histogram.js';
import { addGuardrails, emptyGuardrailCounts, mergeGuardrailCounts, type GuardrailCounts } from './guardrail-counts.js';

export type BucketKey = [workspace: string, minute: number, provider: string, model: string, status: number, cache: string, apiKey: string, metadata: string];

export interface Bucket {
  requests: number;
  /** Status ≥ 400, or a stream that ended in an error. */
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  /** Sparse latency histogram, see histogram.ts. */
  hist: number[];
  /** Successes after retries, `[retry_count, requests, …]`. */
  retried: number[];
  /** Successes answered by another target than the first one tried. */
  fallback: number;
  /** Epoch ms of the latest request (groups' `last_seen`). */
  last_at: number;
  /**
   * Guardrail verdicts by check (guardrail-counts.ts). Absent until a request with guardrails is
   * added: buckets without them keep their shape and size. Always last when present.
   */
  guardrails?: GuardrailCounts;
}

/**
 * Requests and cost per user (`metadata._user`, else the API key) of one bucket, as parallel
 * columns (three arrays decode much faster than a thousand small ones), at most
 * {@link MAX_USERS} users.
 */
export interface UserCounts {
  names: string[];
  requests: number[];
  cost: number[];
  /** Requests whose user did not fit. */
  over: number;
}

/** Bounds a bucket's users: requests of users beyond it are counted in `over`. */
export const MAX_USERS = 1000;
/** Metadata pairs kept in a key, and their lengths (an LMDB key is at most ~2 KB). */
export const MAX_METADATA_PAIRS = 8;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 128;
/** `_user` is a user, not a dimension: it would make a bucket per user. */
export const USER_METADATA_KEY = '_user';

/**
 * MCP calls (tools/call, resources/read, prompts/get) are rolled up in the same buckets under
 * their own key values: provider `mcp:<server>`, model `<method> <tool>`. No model provider is
 * named with a colon, so the two never mix; every read but `/groups/mcp` leaves MCP buckets out
 * (query.ts `matcher`), so model traffic graphs, costs and groups are what they were.
 */
export const MCP_PROVIDER_PREFIX = 'mcp:';
const MAX_MCP_SERVER = 64;
const MAX_MODEL = 128;

export const isMcpBucket = (key: BucketKey): boolean => key[2].startsWith(MCP_PROVIDER_PREFIX);

/** The provider and model key values of an MCP call. */
export function mcpDimensions(call: { server: string | null; method: string; tool: string | null }): { provider: string; model: string } {
  const method = call.method;
  return { provider: `${MCP_PROVIDER_PREFIX}${(call.server ?? '').slice(0, MAX_MCP_SERVER)}`, model: `${method} ${(call.tool ?? '').slice(0, MAX_MODEL - method.length - 1)}` };
}

/** The server, method and tool of an MCP bucket's key (`mcpDimensions` read back). */
export function mcpOfKey(key: BucketKey): { server: string; method: string; tool: string } {
  const space = key[3].indexOf(' ');
  return { server: key[2].slice(MCP_PROVIDER_PREFIX.length), method: space === -1 ? key[3] : key[3].slice(0, space), tool: space === -1 ? '' : key[3].slice(space + 1) };
}

export function emptyBucket(): Bucket {
  // Always this field order: the databases share msgpack structures, one per record shape.
  // `guardrails` is not here: it is appended to the buckets that need it (a second shape only).
  return { requests: 0, errors: 0, cost: 0, prompt_tokens: 0, completion_tokens: 0, latency_ms: 0, hist: [], retried: [], fallback: 0, last_at: 0 };
}

export function emptyUsers(): UserCounts {
  return { names: [], requests: [], cost: [], over: 0 };
}

/** The canonical metadata dimension of a request: up to 8 pairs, sorted, as JSON (`""` for none). */
export function metadataDimension(metadata: Record<string, string>): string {
  const pairs: Array<[string, string]> = [];
  for (const k of Object.keys(metadata).sort()) {
    if (k === USER_METADATA_KEY || k.length > MAX_METADATA_KEY) continue;
    const v = metadata[k];
    if (typeof v !== 'string') continue;
    pairs.push([k, v.slice(0, MAX_METADATA_VALUE)]);
    if (pairs.length === MAX_METADATA_PAIRS) break;
  }
  return pairs.length === 0 ? '' : JSON.stringify(pairs);
}

/** The pairs of a metadata dimension. */
export function metadataPairs(dimension: string): Array<[string, string]> {
  return dimension === '' ? [] : (JSON.parse(dimension) as Array<[string, string]>);
}

/** Who made the request, for unique users and `/groups/users`. */
export function userOf(record: LogRecord): string | null {
  const user = record.metadata[USER_METADATA_KEY];
  return typeof user === 'string' && user.length > 0 ? user.slice(0, MAX_METADATA_VALUE) : record.api_key_id;
}

/**
 * Adds one finished request (`at`: its `created_at` in epoch ms; `error`: status ≥ 400 or a
 * stream that ended in an error; `fallback`: another target than the first one tried answered,
 * successfully). `userIndex` maps user → position in `users` (kept beside the pending bucket).
 * Plain arguments, no facts object: it runs for every request.
 */
export function addRequest(bucket: Bucket, users: UserCounts, userIndex: Map<string, number>, r: LogRecord, at: number, error: boolean, fallback: boolean): void {
  bucket.requests++;
  if (error) bucket.errors++;
  bucket.cost += r.cost_cents;
  bucket.prompt_tokens += r.usage?.prompt_tokens ?? 0;
  bucket.completion_tokens += r.usage?.completion_tokens ?? 0;
  bucket.latency_ms += r.latency.total_ms;
  addToPairs(bucket.hist, binOf(r.latency.total_ms), 1);
  if (r.is_success && r.retry_count > 0) addToPairs(bucket.retried, r.retry_count, 1);
  if (fallback) bucket.fallback++;
  if (at > bucket.last_at) bucket.last_at = at;
  if (r.guardrails !== undefined) addGuardrails((bucket.guardrails ??= emptyGuardrailCounts()), r.guardrails);
  const user = userOf(r);
  if (user !== null) addUser(users, userIndex, user, 1, r.cost_cents);
}

function addUser(users: UserCounts, index: Map<string, number>, name: string, requests: number, cost: number): void {
  const at = index.get(name);
  if (at !== undefined) {
    users.requests[at]! += requests;
    users.cost[at]! += cost;
  } else if (users.names.length < MAX_USERS) {
    index.set(name, users.names.length);
    users.names.push(name);
    users.requests.push(requests);
    users.cost.push(cost);
  } else {
    users.over += requests;
  }
}

/** Adds `from` into `into` (a flush adding this process's counts to the stored bucket). */
export function mergeBucket(into: Bucket, from: Bucket): Bucket {
  into.requests += from.requests;
  into.errors += from.errors;
  into.cost += from.cost;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  into.latency_ms += from.latency_ms;
  mergePairs(into.hist, from.hist);
  mergePairs(into.retried, from.retried);
  into.fallback += from.fallback;
  if (from.last_at > into.last_at) into.last_at = from.last_at;
  if (from.guardrails !== undefined) into.guardrails = mergeGuardrailCounts(into.guardrails, from.guardrails);
  return into;
}

/** Adds `from`'s users into `into`, within the bound. */
export function mergeUsers(into: UserCounts, from: UserCounts): UserCounts {
  const index = new Map<string, number>();
  into.names.forEach((name, i) => index.set(name, i));
  for (let i = 0; i < from.names.length; i++) addUser(into, index, from.names[i]!, from.requests[i]!, from.cost[i]!);
  into.over += from.over;
  return into;
}
