/**
 * Retention: a background sweep removes the oldest records, by age (`retention_days`) and by
 * count (`max_records`). Ids are time-ordered, so the oldest records are the first keys and a
 * sweep reads only what it removes. Each run is bounded (`limit`), so a large backlog (a lowered
 * limit, a long stop) is worked off over several runs instead of in one long transaction.
 */
import type { Database } from 'lmdb';
import { countRecords } from './log-db.js';
import { idPrefix } from './scan.js';

export interface SweepOptions {
  /** Records whose id is older than this (ms since epoch) go. */
  cutoffMs: number;
  maxRecords: number;
  /** At most this many removals per run. */
  limit: number;
}

/** Removes the oldest records past the age or count bound; returns how many it removed. */
export async function sweep(db: Database<unknown, string>, options: SweepOptions): Promise<number> {
  const excess = Math.max(0, countRecords(db) - options.maxRecords);
  const cutoff = idPrefix(options.cutoffMs);
  const removals: Array<Promise<boolean>> = [];
  for (const key of db.getKeys({ limit: options.limit })) {
    // Past the count excess, only records older than the age cutoff go; keys are in time order.
    if (removals.length >= excess && key >= cutoff) break;
    removals.push(db.remove(key));
  }
  await Promise.all(removals);
  return removals.length;
}

export interface Sweeper {
  stop(): void;
}

/** Runs {@link sweep} every `everyMs` (unref'd: it never keeps the process alive). */
export function startSweeper(db: Database<unknown, string>, options: { everyMs: number; retentionMs: number; maxRecords: number; limit: number; onError(err: unknown): void }): Sweeper {
  let running = false;
  const run = (): void => {
    if (running) return;
    running = true;
    sweep(db, { cutoffMs: Date.now() - options.retentionMs, maxRecords: options.maxRecords, limit: options.limit })
      .catch(options.onError)
      .finally(() => (running = false));
  };
  const timer = setInterval(run, options.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
