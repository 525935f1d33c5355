/**
 * The graphs of admin-api.md §16: each is a fold over buckets plus how its summary and its data
 * points read. Every graph answers `{summary, data_points, object: "analytics-graph"}`.
 *
 * Units: cost in cents, latency in ms, rates in percent. The reference types every field as an
 * integer; we answer numbers (a cent of cost, a rate of 0.5 % and a 0.3 ms latency are real).
 */
import { S } from '../../core/index.js';
import type { Bucket, UserCounts } from './bucket.js';
import { cacheByModel, errorStatuses, latencies, sums, users, type CacheByModel, type Fold, type Sums } from './folds.js';
import { percentile } from './histogram.js';
import { series, type Query, type Scanner, type Series, type Sources } from './query.js';

export interface GraphAnswer {
  summary: Record<string, unknown>;
  data_points: Array<Record<string, unknown>>;
}

type Fields = Record<string, S.JsonSchema>;

interface GraphDef<T, V> {
  /** After `/v1/analytics/graphs/`. */
  path: string;
  summary: string;
  summaryFields: Fields;
  pointFields: Fields;
  fold: Fold<T, V>;
  answer(series: Series<T>): GraphAnswer;
}

/** A graph, its fold's types closed over. */
export interface Graph {
  path: string;
  summary: string;
  summaryFields: Fields;
  pointFields: Fields;
  run(sources: Sources, query: Query): Promise<GraphAnswer>;
}

/** `tier` says what the graph folds: buckets, or their users. */
type TierOf<V> = (sources: Sources, query: Query) => Promise<Scanner<V>>;

function over<T, V>(tier: TierOf<V>, def: GraphDef<T, V>): Graph {
  const { path, summary, summaryFields, pointFields, fold, answer } = def;
  return { path, summary, summaryFields, pointFields, run: async (sources, query) => answer(series(await tier(sources, query), query, fold)) };
}

const buckets: TierOf<Bucket> = (sources, query) => sources.buckets(query);
const bucketUsers: TierOf<UserCounts> = (sources, query) => sources.users(query);
const graph = <T>(def: GraphDef<T, Bucket>): Graph => over(buckets, def);

const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);
/** Cents to a millionth: sums of float prices, without the noise of the last bits. */
export const cents = (x: number): number => Math.round(x * 1e6) / 1e6;
/** Three decimals: latencies to the microsecond, averages. */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
export const pct = (x: number): number => Math.round(x * 10000) / 100;
export const timestamp = (minute: number): string => new Date(minute * 60_000).toISOString();

type SimpleDef<T, V> = Omit<GraphDef<T, V>, 'answer' | 'pointFields'> & { view(acc: T): Record<string, unknown> };

/** A graph whose summary and points read the same fields from one fold. */
function simple<T, V>(tier: TierOf<V>, def: SimpleDef<T, V>): Graph {
  const { view, ...rest } = def;
  return over(tier, {
    ...rest,
    pointFields: { timestamp: S.str, ...def.summaryFields },
    answer: (s) => ({ summary: view(s.total), data_points: s.points.map((p) => ({ timestamp: timestamp(p.minute), ...view(p.acc) })) }),
  });
}

const latencyView = (l: { requests: number; latency: number; hist: Float64Array }): Record<string, number> => ({
  avg: round3(ratio(l.latency, l.requests)),
  p50: round3(percentile(l.hist, 0.5)),
  p90: round3(percentile(l.hist, 0.9)),
  p95: round3(percentile(l.hist, 0.95)),
  p99: round3(percentile(l.hist, 0.99)),
});

const hits = (s: Sums): number => s.simpleHits + s.semanticHits;
const hitRate = (s: Sums): number => pct(ratio(hits(s), hits(s) + s.misses));

const retriedRows = (s: Sums): Array<{ retry_success_count: number; count: number }> =>
  [...s.retried].sort((a, b) => a[0] - b[0]).map(([retries, count]) => ({ retry_success_count: retries, count }));
const sumOf = (m: Map<number, number>): number => {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
};

/**
 * Cache savings are estimated: a hit costs nothing, and what it saved is what a paid call to the
 * same provider and model cost on average over the range (0 when the range has no paid call).
 */
function cacheHitRate(s: Series<CacheByModel>): GraphAnswer {
  const avgPaid = new Map<string, number>();
  for (const [model, p] of s.total.paid) avgPaid.set(model, ratio(p.cost, p.requests));
  let simpleSaved = 0;
  let semanticSaved = 0;
  const data_points = s.points.map((p) => {
    for (const [model, h] of p.acc.hits) {
      const avg = avgPaid.get(model) ?? 0;
      simpleSaved += h.simple * avg;
      semanticSaved += h.semantic * avg;
    }
    return {
      timestamp: timestamp(p.minute),
      simple_hits: p.acc.sums.simpleHits,
      semantic_hits: p.acc.sums.semanticHits,
      rate: hitRate(p.acc.sums),
      cumulative_simple_cache_savings: cents(simpleSaved),
      cumulative_semantic_cache_savings: cents(semanticSaved),
    };
  });
  return { summary: { total: hits(s.total.sums), rate: hitRate(s.total.sums) }, data_points };
}

const num = S.num;
const int = S.int;

export const graphs: readonly Graph[] = [
  simple(buckets, { path: 'requests', summary: 'Requests', summaryFields: { total: int }, fold: sums, view: (s) => ({ total: s.requests }) }),
  simple(buckets, {
    path: 'cost',
    summary: 'Cost in cents, total and per request',
    summaryFields: { total: num, avg: num },
    fold: sums,
    view: (s) => ({ total: cents(s.cost), avg: cents(ratio(s.cost, s.requests)) }),
  }),
  simple(buckets, { path: 'latency', summary: 'Latency (ms): mean and percentiles', summaryFields: { avg: num, p50: num, p90: num, p95: num, p99: num }, fold: latencies, view: latencyView }),
  simple(buckets, {
    path: 'tokens',
    summary: 'Tokens (prompt + completion), total and per request',
    summaryFields: { total: int, avg: num },
    fold: sums,
    view: (s) => ({ total: s.prompt + s.completion, avg: round3(ratio(s.prompt + s.completion, s.requests)) }),
  }),
  simple(bucketUsers, {
    path: 'users',
    summary: 'Unique users (`metadata._user`, else the API key)',
    summaryFields: { total: int },
    fold: users,
    view: (u) => ({ total: u.size }),
  }),
  simple(buckets, { path: 'errors', summary: 'Errors (status ≥ 400, or a stream that ended in an error)', summaryFields: { total: int }, fold: sums, view: (s) => ({ total: s.errors }) }),
  simple(buckets, { path: 'errors/rate', summary: 'Error rate (%)', summaryFields: { rate: num }, fold: sums, view: (s) => ({ rate: pct(ratio(s.errors, s.requests)) }) }),
  graph({
    path: 'errors/status-codes',
    summary: 'Error responses by status code (no time axis)',
    summaryFields: { total_errors: int, unique_error_codes: int },
    pointFields: { status_code: int, count: int },
    fold: errorStatuses,
    answer: (s) => ({
      summary: { total_errors: sumOf(s.total), unique_error_codes: s.total.size },
      data_points: [...s.total].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([status_code, count]) => ({ status_code, count })),
    }),
  }),
  graph({
    path: 'cache/hit-rate',
    summary: 'Cache hits, hit rate (%) and estimated savings (cents)',
    summaryFields: { total: int, rate: num },
    pointFields: { timestamp: S.str, simple_hits: int, semantic_hits: int, rate: num, cumulative_simple_cache_savings: num, cumulative_semantic_cache_savings: num },
    fold: cacheByModel,
    answer: cacheHitRate,
  }),
  graph({
    path: 'cache/latency',
    summary: 'Mean latency of cache hits (ms)',
    summaryFields: {},
    pointFields: { timestamp: S.str, avg: num },
    fold: sums,
    answer: (s) => ({ summary: {}, data_points: s.points.map((p) => ({ timestamp: timestamp(p.minute), avg: round3(ratio(p.acc.hitLatency, hits(p.acc))) })) }),
  }),
  graph({
    path: 'requests/rescued',
    summary: 'Requests rescued by retries (by retry count) and by fallbacks',
    summaryFields: { retry: int, fallback: int },
    pointFields: {
      timestamp: S.str,
      retry: { type: 'array', items: S.record({ retry_success_count: int, count: int }) },
      fallback: int,
    },
    fold: sums,
    answer: (s) => ({
      summary: { retry: sumOf(s.total.retried), fallback: s.total.fallback },
      data_points: s.points.map((p) => ({ timestamp: timestamp(p.minute), retry: retriedRows(p.acc), fallback: p.acc.fallback })),
    }),
  }),
];

/** `GET /v1/analytics/summary/cache`: hits, their mean latency, and how much faster than a miss. */
export function cacheSummary(s: Sums): Record<string, number> {
  const hitAvg = ratio(s.hitLatency, hits(s));
  const missAvg = ratio(s.missLatency, s.misses);
  return {
    hits: hits(s),
    avg_latency: round3(hitAvg),
    total_requests: s.requests,
    // How much of a miss's latency a hit saves; 0 until there are both hits and misses.
    cache_speedup: hits(s) === 0 || missAvg === 0 ? 0 : pct(1 - hitAvg / missAvg),
  };
}
