/**
 * Folds: what graphs accumulate from buckets. Plain sums for most; the latency histogram and
 * the set of users only where a graph needs them (merging them costs more than adding numbers).
 */
import type { Bucket, BucketKey, UserCounts } from './bucket.js';
import { accumulate, denseHistogram } from './histogram.js';

/** Accumulates `V`s (buckets, or a bucket's users) into a `T`. */
export interface Fold<T, V = Bucket> {
  fresh(): T;
  add(acc: T, value: V, key: BucketKey): void;
}

/** Cache statuses as the cache plugin sets them (`REFRESH` and `DISABLED` are neither hit nor miss). */
export const SIMPLE_HIT = 'HIT';
export const SEMANTIC_HIT = 'SEMANTIC HIT';
const MISSES = new Set(['MISS', 'SEMANTIC MISS']);
export const isHit = (cache: string): boolean => cache === SIMPLE_HIT || cache === SEMANTIC_HIT;

export interface Sums {
  requests: number;
  errors: number;
  cost: number;
  prompt: number;
  completion: number;
  latency: number;
  simpleHits: number;
  semanticHits: number;
  misses: number;
  hitLatency: number;
  missLatency: number;
  /** retry count → successes after that many retries */
  retried: Map<number, number>;
  fallback: number;
}

export function addSums(s: Sums, b: Bucket, key: BucketKey): void {
  s.requests += b.requests;
  s.errors += b.errors;
  s.cost += b.cost;
  s.prompt += b.prompt_tokens;
  s.completion += b.completion_tokens;
  s.latency += b.latency_ms;
  const cache = key[5];
  if (cache === SIMPLE_HIT) s.simpleHits += b.requests;
  else if (cache === SEMANTIC_HIT) s.semanticHits += b.requests;
  if (isHit(cache)) s.hitLatency += b.latency_ms;
  else if (MISSES.has(cache)) {
    s.misses += b.requests;
    s.missLatency += b.latency_ms;
  }
  for (let i = 0; i < b.retried.length; i += 2) s.retried.set(b.retried[i]!, (s.retried.get(b.retried[i]!) ?? 0) + b.retried[i + 1]!);
  s.fallback += b.fallback;
}

export const sums: Fold<Sums> = {
  fresh: () => ({ requests: 0, errors: 0, cost: 0, prompt: 0, completion: 0, latency: 0, simpleHits: 0, semanticHits: 0, misses: 0, hitLatency: 0, missLatency: 0, retried: new Map(), fallback: 0 }),
  add: addSums,
};

export interface Latencies {
  requests: number;
  latency: number;
  hist: Float64Array;
}

export const latencies: Fold<Latencies> = {
  fresh: () => ({ requests: 0, latency: 0, hist: denseHistogram() }),
  add(acc, b) {
    acc.requests += b.requests;
    acc.latency += b.latency_ms;
    accumulate(acc.hist, b.hist);
  },
};

/** Unique users. A bucket's `over` requests have users too, but unnamed: they are not counted. */
export const users: Fold<Set<string>, UserCounts> = {
  fresh: () => new Set(),
  add(acc, u) {
    for (const name of u.names) acc.add(name);
  },
};

/** Status code → error count (status ≥ 400 only: a stream error has no error status to list). */
export const errorStatuses: Fold<Map<number, number>> = {
  fresh: () => new Map(),
  add(acc, b, key) {
    if (key[4] >= 400) acc.set(key[4], (acc.get(key[4]) ?? 0) + b.requests);
  },
};

/** Per model: hits by kind, and what answered (not from the cache, no error) calls cost. */
export interface CacheByModel {
  hits: Map<string, { simple: number; semantic: number }>;
  paid: Map<string, { cost: number; requests: number }>;
  sums: Sums;
}

export const cacheByModel: Fold<CacheByModel> = {
  fresh: () => ({ hits: new Map(), paid: new Map(), sums: sums.fresh() }),
  add(acc, b, key) {
    addSums(acc.sums, b, key);
    const model = `${key[2]}__${key[3]}`;
    if (isHit(key[5])) {
      let h = acc.hits.get(model);
      if (h === undefined) acc.hits.set(model, (h = { simple: 0, semantic: 0 }));
      if (key[5] === SIMPLE_HIT) h.simple += b.requests;
      else h.semantic += b.requests;
    } else if (b.requests > b.errors) {
      let p = acc.paid.get(model);
      if (p === undefined) acc.paid.set(model, (p = { cost: 0, requests: 0 }));
      p.cost += b.cost;
      p.requests += b.requests - b.errors;
    }
  },
};
