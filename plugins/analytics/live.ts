/**
 * Reads that agree with traffic at once: the stored rollups (LMDB or PostgreSQL) plus this
 * process's buckets not flushed yet, so a graph read right after a request counts it instead of
 * lagging by up to `flush_ms`.
 *
 *   read ─▶ wait until no flush is being written (so a batch is either stored or still pending,
 *           never in between) ─▶ read the store ─▶ no flush started meanwhile? visit the stored
 *           values, then the pending ones (a minute bucket under its hour's key on hour segments)
 *                                                └─ one did: read again (up to MAX_READS)
 *
 * A flush moves a batch from pending to the store; seeing the generation unchanged across the
 * read means no batch moved, so nothing is counted twice. After MAX_READS reads each overtaken by
 * a flush (flushes back to back under heavy traffic), the last read is used: at worst it misses
 * the counts of the flush that overtook it, as reads did before, and still never counts twice.
 *
 * Other processes' and hosts' unflushed counts are not seen: they still lag by their `flush_ms`.
 */
import { matcher, segments, type Query, type Scanner, type Sources, type Visit } from './query.js';
import { hourOf, type PendingBucket, type Rollup } from './rollup.js';
import type { BucketKey } from './bucket.js';

const MAX_READS = 3;

export function withUnflushed<S extends Sources>(store: S, rollup: Rollup, oldestMinute: () => number): S {
  async function read<V>(query: Query, stored: (q: Query) => Promise<Scanner<V>>, valueOf: (entry: PendingBucket) => V | undefined): Promise<Scanner<V>> {
    let scanner: Scanner<V>;
    for (let reads = 1; ; reads++) {
      await rollup.settled();
      const generation = rollup.generation;
      scanner = await stored(query);
      if (rollup.generation === generation || reads >= MAX_READS) break;
    }
    // Read in one synchronous step with the pending buckets (an LMDB scanner reads when called).
    return (visit) => {
      scanner(visit);
      visitUnflushed(query, valueOf, visit);
    };
  }

  function visitUnflushed<V>(query: Query, valueOf: (entry: PendingBucket) => V | undefined, visit: Visit<V>): void {
    const parts = segments(query.from, query.to, query.step, oldestMinute());
    const matches = matcher(query.filters);
    const workspaces = query.workspaces;
    rollup.unflushed((entry) => {
      const key = entry.key;
      if (workspaces !== null && !workspaces.includes(key[0])) return;
      const value = valueOf(entry);
      if (value === undefined || !matches(key)) return;
      const minute = key[1];
      for (const part of parts) {
        if (part.db === 'minutes') {
          if (minute >= part.from && minute < part.to) visit(value, key);
          continue;
        }
        const hour = hourOf(minute);
        if (hour < part.from || hour >= part.to) continue;
        const hourKey: BucketKey = [...key];
        hourKey[1] = hour;
        visit(value, hourKey);
      }
    });
  }

  return {
    ...store,
    buckets: (query) => read(query, (q) => store.buckets(q), (entry) => entry.bucket),
    // As stored: a bucket with no named user and none over the bound has no users row.
    users: (query) => read(query, (q) => store.users(q), (entry) => (entry.users.names.length === 0 && entry.users.over === 0 ? undefined : entry.users)),
  };
}
