/**
 * Retention: a background sweep removes the oldest records, by age (`retention_days`) and by
 * count (`max_records`). Ids are time-ordered, so the oldest records are the first keys and a
 * sweep reads only what it removes. Each slice is bounded (`limit`), so a large backlog (a lowered
 * limit, a long stop, or simply more requests a minute than one slice holds) is worked off in
 * several short transactions, one after the other, instead of in one long one.
 * A record's index entries stay until their whole partition goes (log-parts.ts), in the same
 * transaction as the partition's last records.
 */
import type { Database } from 'lmdb';
import { countRecords } from './log-db.js';
import type { LogIndex } from './log-parts.js';
import { idPrefix } from './scan.js';

export interface SweepOptions {
  /** Records whose id is older than this (ms since epoch) go. */
  cutoffMs: number;
  maxRecords: number;
  /** At most this many removals per run. */
  limit: number;
}

/**
 * Removes the oldest records past the age or count bound, in one write transaction; resolves with
 * how many it removed. Records go by key alone, without being read (about 6 µs each); with
 * `index`, the index partitions left without records are cleared after them. Inside lmdb-js's
 * transaction callback with synchronous removes, as the writes are (log-index.ts `writeLogs`).
 * A removal LMDB refuses ends the slice; what came before it is kept (lmdb-js commits a
 * transaction whose callback threw) and the error rejects the sweep.
 */
export function sweep(db: Database<unknown, string>, options: SweepOptions, index?: LogIndex): Promise<number> {
  const slice: Slice = { removed: 0, failure: undefined };
  return db
    .transaction(() => removeOldest(db, options, index, slice))
    .then(() => {
      if (slice.failure !== undefined) throw slice.failure;
      return slice.removed;
    });
}

/** What one {@link sweep} removed, and why it stopped short. */
interface Slice {
  removed: number;
  failure: unknown;
}

/** The body of {@link sweep}'s transaction: a function of the module, as log-index.ts `writeBatch` is (why there). */
function removeOldest(db: Database<unknown, string>, options: SweepOptions, index: LogIndex | undefined, slice: Slice): void {
  const excess = Math.max(0, countRecords(db) - options.maxRecords);
  const cutoff = idPrefix(options.cutoffMs);
  try {
    for (const key of db.getKeys({ limit: options.limit })) {
      // Past the count excess, only records older than the age cutoff go; keys are in time order.
      if (slice.removed >= excess && key >= cutoff) break;
      db.removeSync(key);
      slice.removed++;
    }
    index?.releaseSync();
  } catch (err) {
    slice.failure = err;
  }
}

export interface Sweeper {
  stop(): void;
}

/** One slice of removals, wherever it runs (the log thread: LogWriter.sweep). */
export type SweepSlice = (options: SweepOptions) => Promise<number>;

/**
 * Runs slices of at most `limit` removals until one comes back short (the bounds are met), with
 * `pauseMs` between them so the writes queued meanwhile go first; resolves with the total removed.
 * Under load past `max_records` every minute adds more records than one slice removes: a sweep
 * that stopped after one slice would let the store grow past its bound without end.
 */
export async function sweepAll(slice: SweepSlice, options: SweepOptions, pauseMs: number, stopped: () => boolean = () => false): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await slice(options);
    total += removed;
    if (removed < options.limit || stopped()) return total;
    await new Promise<void>((resolve) => setTimeout(resolve, pauseMs));
    if (stopped()) return total;
  }
}

/** Runs {@link sweepAll} every `everyMs` (unref'd: it never keeps the process alive). */
export function startSweeper(
  slice: SweepSlice,
  options: { everyMs: number; pauseMs: number; retentionMs: number; maxRecords: number; limit: number; onError(err: unknown): void },
): Sweeper {
  let running = false;
  let stopped = false;
  const run = (): void => {
    if (running) return;
    running = true;
    sweepAll(slice, { cutoffMs: Date.now() - options.retentionMs, maxRecords: options.maxRecords, limit: options.limit }, options.pauseMs, () => stopped)
      .catch(options.onError)
      .finally(() => (running = false));
  };
  const timer = setInterval(run, options.everyMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
