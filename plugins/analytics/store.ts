/**
 * Where analytics keeps its rollups: one interface, two drivers, chosen once at setup.
 *
 *   embedded (no PostgreSQL) ─▶ LMDB: analytics_minutes/_hours (+ _users), as always (below)
 *   distributed mode         ─▶ PostgreSQL (pg-store.ts): every host adds its own counts, and
 *                               every host reads the sums over all of them
 *
 * Each host folds its requests in memory (rollup.ts) and hands a flush to `write`; the routes read
 * through `Sources` and `feedback` and never know which driver answers.
 */
import type { RootDatabase } from 'lmdb';
import type { Logger } from '../../core/index.js';
import type { AnalyticsOptions } from './schema.js';
import { scan, type Query, type Series, type Sources } from './query.js';
import { lmdbWrite, openBucketDbs, type RollupWrite } from './rollup.js';
import { feedbackSeries, openFeedback } from './feedback.js';
import { startRetention } from './retention.js';

export interface AnalyticsStore extends Sources {
  /** Adds a flush's counts (stored += pending). */
  write: RollupWrite;
  /** Feedback received per data point (the feedback graph). */
  feedback(query: Query): Promise<Series<{ total: number }>>;
  /** Starts pruning old buckets; returns the function that stops it. */
  startRetention(): () => void;
}

export function openLmdbStore(root: RootDatabase, options: AnalyticsOptions, oldestMinute: () => number, log: Logger): AnalyticsStore {
  const dbs = openBucketDbs(root);
  const feedback = openFeedback(root);
  return {
    write: lmdbWrite(root, dbs),
    buckets: async (q) => (visit) => scan(dbs.buckets, q, oldestMinute(), visit),
    users: async (q) => (visit) => scan(dbs.users, q, oldestMinute(), visit),
    feedback: async (q) => feedbackSeries(feedback, q),
    startRetention: () => startRetention(dbs, options, log),
  };
}
