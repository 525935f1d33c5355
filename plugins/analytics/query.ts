/**
 * An analytics query: a time range, the workspaces the caller may see, and filters on the rollup
 * dimensions. It reads buckets, never request logs, and hands each matching bucket to a fold.
 *
 *   range < 3 h             per-minute data points, read from analytics_minutes
 *   otherwise               hourly data points: whole hours from analytics_hours, the partial
 *                           hours at either end from analytics_minutes (exact edges)
 *
 *     from                                                                        to
 *      │ minutes │ hour │ hour │ hour │ … │ hour │ hour │ minutes │
 *
 * Minute buckets are pruned after `minute_retention_days`: an edge older than that is read
 * from its whole hour instead (the range widens to the hour rather than losing counts).
 */
import type { BucketDb, Tier } from './rollup.js';
import { isMcpBucket, metadataPairs, type Bucket, type BucketKey, type UserCounts } from './bucket.js';
import type { Fold } from './folds.js';

export interface Filters {
  statuses?: ReadonlySet<number>;
  /** `provider__model` */
  models?: ReadonlySet<string>;
  apiKeys?: ReadonlySet<string>;
  metadata?: ReadonlyArray<[string, string]>;
  /**
   * true: MCP call buckets only (`/groups/mcp`). Absent: MCP buckets are left out, so every other
   * graph and group reads model and pass-through traffic only (see bucket.ts MCP_PROVIDER_PREFIX).
   */
  mcp?: true;
}

export interface Query {
  /** Workspace ids to read; null: every workspace in the rollups. */
  workspaces: readonly string[] | null;
  /** Minutes since the epoch, [from, to). */
  from: number;
  to: number;
  /** Data point width in minutes: 1 or 60. */
  step: 1 | 60;
  filters: Filters;
}

/** Under this range, data points are minutes. */
export const MINUTE_POINTS_BELOW = 180;

export type Visit<V = Bucket> = (value: V, key: BucketKey) => void;

/** The values of a query, visited one by one (read from LMDB, or from rows PostgreSQL answered). */
export type Scanner<V> = (visit: Visit<V>) => void;

/** Where the routes read rollups: one interface, whichever driver (store.ts) serves it. */
export interface Sources {
  buckets(query: Query): Promise<Scanner<Bucket>>;
  users(query: Query): Promise<Scanner<UserCounts>>;
}

interface Segment {
  db: 'minutes' | 'hours';
  from: number;
  to: number;
}

/** Which database serves which part of the range. `oldestMinute`: minute buckets before it are pruned. */
export function segments(from: number, to: number, step: 1 | 60, oldestMinute: number): Segment[] {
  if (step === 1) return [{ db: 'minutes', from, to }];
  let hoursFrom = Math.ceil(from / 60) * 60;
  let hoursTo = Math.floor(to / 60) * 60;
  if (from < oldestMinute) hoursFrom = Math.floor(from / 60) * 60;
  if (to < oldestMinute) hoursTo = Math.ceil(to / 60) * 60;
  if (hoursFrom >= hoursTo) return [{ db: 'minutes', from, to }];
  const out: Segment[] = [];
  if (from < hoursFrom) out.push({ db: 'minutes', from, to: hoursFrom });
  out.push({ db: 'hours', from: hoursFrom, to: hoursTo });
  if (hoursTo < to) out.push({ db: 'minutes', from: hoursTo, to });
  return out;
}

/** The workspace ids present in a bucket database: one seek per workspace, skipping its rows. */
export function workspacesIn(db: BucketDb): string[] {
  const out: string[] = [];
  let start: unknown[] = [''];
  for (;;) {
    let next: string | undefined;
    for (const key of db.getKeys({ start: start as BucketKey, limit: 1 })) next = (key as BucketKey)[0];
    if (next === undefined) return out;
    out.push(next);
    // `[ws + "\0"]` sorts after every `[ws, …]` key: the next workspace.
    start = [`${next}\u0000`];
  }
}

export function matcher(filters: Filters): (key: BucketKey) => boolean {
  const { statuses, models, apiKeys, metadata } = filters;
  const mcp = filters.mcp === true;
  if (!statuses && !models && !apiKeys && !metadata) return (key) => isMcpBucket(key) === mcp;
  // One parse per distinct metadata dimension, not per bucket.
  const metadataMatches = new Map<string, boolean>();
  return (key) => {
    if (isMcpBucket(key) !== mcp) return false;
    if (statuses && !statuses.has(key[4])) return false;
    if (models && !models.has(`${key[2]}__${key[3]}`)) return false;
    if (apiKeys && !apiKeys.has(key[6])) return false;
    if (metadata) {
      let ok = metadataMatches.get(key[7]);
      if (ok === undefined) {
        const pairs = metadataPairs(key[7]);
        ok = metadata.every(([k, v]) => pairs.some(([pk, pv]) => pk === k && pv === v));
        metadataMatches.set(key[7], ok);
      }
      if (!ok) return false;
    }
    return true;
  };
}

/** Calls `visit` with every value of `tier` in the query's workspaces, range and filters. */
export function scan<V>(tier: Tier<V>, query: Query, oldestMinute: number, visit: Visit<V>): void {
  const matches = matcher(query.filters);
  const workspaces = query.workspaces ?? workspacesIn(tier.hours as BucketDb);
  for (const segment of segments(query.from, query.to, query.step, oldestMinute)) {
    const db = tier[segment.db];
    for (const ws of workspaces) {
      for (const { key, value } of db.getRange({ start: [ws, segment.from] as unknown as BucketKey, end: [ws, segment.to] as unknown as BucketKey })) {
        if (matches(key)) visit(value, key);
      }
    }
  }
}

export interface Series<T> {
  total: T;
  points: Array<{ minute: number; acc: T }>;
}

/**
 * Folds the query's buckets into a total and one accumulator per data point (every point of the
 * range, empty ones included, so a chart has no gaps). `add` runs twice per bucket: into the
 * total and into its point, which keeps folds that are not plain sums (unique users) exact.
 */
export function series<V, T>(source: Scanner<V>, query: Query, fold: Fold<T, V>): Series<T> {
  const first = query.from - (query.from % query.step);
  const points: Series<T>['points'] = [];
  for (let m = first; m < query.to; m += query.step) points.push({ minute: m, acc: fold.fresh() });
  const total = fold.fresh();
  source((value, key) => {
    fold.add(total, value, key);
    const point = points[Math.floor((key[1] - first) / query.step)];
    if (point !== undefined) fold.add(point.acc, value, key);
  });
  return { total, points };
}
