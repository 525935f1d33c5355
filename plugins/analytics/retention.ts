/**
 * Retention: minute buckets are kept `minute_retention_days`, hour buckets
 * `hour_retention_days`; older ones are removed in the background, a bounded batch at a time.
 *
 * Removals are asynchronous LMDB writes (batched by lmdb-js, committed off the event loop). Each
 * process sharing the data dir prunes on its own clock; removing a key twice is harmless.
 */
import type { Logger } from '../../core/index.js';
import type { BucketKey } from './bucket.js';
import { minuteOf, type BucketDb, type BucketDbs, type Tier } from './rollup.js';
import { workspacesIn } from './query.js';

/** Keys removed per database per run: bounds how long one run keeps the event loop. */
const BATCH = 5_000;
const EVERY_MS = 60 * 60_000;
/** After a run that hit the batch bound, the next one comes sooner. */
const SOON_MS = 5_000;

export interface RetentionOptions {
  minute_retention_days: number;
  hour_retention_days: number;
}

/** The oldest minute still kept in the minutes database. */
export const oldestMinute = (days: number, now = Date.now()): number => minuteOf(now) - days * 1440;

/** Removes keys of `db` older than `before` (minutes); returns how many. */
export function prune(db: BucketDb, before: number, limit = BATCH): number {
  let removed = 0;
  for (const ws of workspacesIn(db)) {
    for (const key of db.getKeys({ start: [ws, 0] as unknown as BucketKey, end: [ws, before] as unknown as BucketKey, limit: limit - removed })) {
      void db.remove(key);
      removed++;
    }
    if (removed >= limit) break;
  }
  return removed;
}

/** Starts the pruning timer; returns the function that stops it. */
export function startRetention(dbs: BucketDbs, options: RetentionOptions, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number): void => {
    timer = setTimeout(run, ms);
    timer.unref();
  };
  function run(): void {
    let removed = 0;
    try {
      for (const tier of [dbs.buckets, dbs.users] as Array<Tier<unknown>>) {
        removed += prune(tier.minutes as BucketDb, oldestMinute(options.minute_retention_days));
        removed += prune(tier.hours as BucketDb, oldestMinute(options.hour_retention_days));
      }
    } catch (err) {
      log.warn('analytics retention failed; retrying later', { err });
    }
    schedule(removed >= BATCH ? SOON_MS : EVERY_MS);
  }
  schedule(SOON_MS);
  return () => clearTimeout(timer);
}
