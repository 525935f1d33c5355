/**
 * The store's size limit (`store.map_size`), enforced by the gateway.
 *
 * LMDB's map size is a hard limit (MDB_MAP_FULL) in plain LMDB, but lmdb-js grows the map on
 * demand (its mdb_page_alloc resizes instead of failing), so a configured size alone bounds
 * nothing. The gateway therefore measures the data held and refuses the writes that grow the
 * store once it is near the limit:
 *
 *   used = pages of every database tree (branch + leaf + overflow), of the main db and the free list
 *   full = used ≥ limit − reserve          (reserve: room for deletes and hot-path counters)
 *
 * Free pages inside the file are not "used": LMDB reuses them, so records removed by retention or
 * a DELETE make room again and writes resume. Only what grows the store is refused (admin writes
 * answer 503 `store_full`, log records are dropped and counted, cache entries are not stored);
 * counters and deletes, which mostly reuse pages, go on. A real full disk is handled where the
 * write fails (write-failures.ts).
 */
import type { Database, RootDatabase } from 'lmdb';
import { StoreErrors } from './errors.js';

export interface StoreCapacity {
  /** The configured limit in bytes. */
  readonly limit: number;
  /** Bytes held by the data (measured at most every {@link MEASURE_REUSE_MS}). */
  used(): number;
  /** True when writes that grow the store are refused. */
  full(): boolean;
  /** Throws `store_full` (503) when {@link full}. */
  assertRoom(): void;
  /** Stops the discovery timer. */
  close(): void;
}

/** How long a measurement is reused: measuring costs ~15 µs per database. */
const MEASURE_REUSE_MS = 100;
/** How often databases opened since (by plugins) are looked for. */
const DISCOVER_EVERY_MS = 1000;
/** The smallest limit honoured: an empty gateway store already takes a few hundred KB. */
const MIN_LIMIT = 1024 * 1024;

interface Stats {
  treeBranchPageCount?: number;
  treeLeafPageCount?: number;
  overflowPages?: number;
  pageSize?: number;
  free?: Stats;
}

const pagesOf = (s: Stats | undefined): number => (s ? (s.treeBranchPageCount ?? 0) + (s.treeLeafPageCount ?? 0) + (s.overflowPages ?? 0) : 0);

/**
 * Measures the store under `root` against `limit` bytes.
 *
 * @example
 *   const capacity = createCapacity(root, 16 * 2 ** 30);
 *   if (capacity.full()) dropThisLogBatch();
 */
export function createCapacity(root: RootDatabase, limit: number): StoreCapacity {
  const cap = Math.max(MIN_LIMIT, limit);
  // Room kept free for what is never refused (deletes, counters): 1/32 of the limit, at most 64 MB.
  const reserve = Math.min(cap / 32, 64 * 1024 * 1024);
  // Named databases are listed in the main database. Their handles are opened by the discovery
  // timer only, never inline: a measurement may run inside a write transaction, and a handle
  // opened there would be discarded if that transaction aborted.
  const handles = new Map<string, Database<unknown, string> | null>();
  let measuredAt = -Infinity;
  let usedBytes = 0;

  function discover(): void {
    for (const key of root.getKeys()) {
      if (typeof key !== 'string' || handles.has(key)) continue;
      try {
        // `create: false`: discovery never adds a database.
        handles.set(key, root.openDB<unknown, string>({ name: key, create: false } as { name: string }));
      } catch {
        handles.set(key, null); // a plain key of the main database, not a named database
      }
    }
  }

  function measure(): number {
    const rootStats = root.getStats() as Stats;
    let pages = pagesOf(rootStats) + pagesOf(rootStats.free) + 2; // + the two meta pages
    for (const db of handles.values()) if (db !== null) pages += pagesOf(db.getStats() as Stats);
    return pages * (rootStats.pageSize ?? 4096);
  }

  discover();
  const timer = setInterval(() => {
    try {
      discover();
      measuredAt = -Infinity;
    } catch {
      // a closing env: the next tick or close() ends it
    }
  }, DISCOVER_EVERY_MS);
  timer.unref();

  function used(): number {
    const now = performance.now();
    if (now - measuredAt >= MEASURE_REUSE_MS) {
      usedBytes = measure();
      measuredAt = now;
    }
    return usedBytes;
  }

  const full = (): boolean => used() >= cap - reserve;
  return {
    limit: cap,
    used,
    full,
    assertRoom() {
      if (full()) throw StoreErrors.full();
    },
    close() {
      clearInterval(timer);
    },
  };
}
