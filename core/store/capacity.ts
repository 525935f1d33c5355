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

type Key = string | string[];

export interface StoreCapacity {
  /** The configured limit in bytes. */
  readonly limit: number;
  /** Bytes held by the data, as of the last measurement (1–30 s old: {@link nextMeasureIn}). */
  used(): number;
  /** True when writes that grow the store are refused. */
  full(): boolean;
  /**
   * Throws `store_full` (503) when {@link full}, measuring first when the last measurement is
   * older than {@link FRESH_MS} (admin writes are rare and may be large: a stale figure would let
   * a burst of them run far past the limit). Call it outside any write transaction: the admin
   * route wrapper does, before the handler.
   */
  assertRoom(): void;
  /** Measures now (tests, and after a bulk delete). Never call it inside a write transaction. */
  measure(): number;
  /** Stops the measuring timer. */
  close(): void;
}

/**
 * How often the data is measured, at most. One measurement reads the statistics of every open
 * database: about 1 ms for the default pipeline's ~60 databases (3 ms on a loaded 2-core machine;
 * about 2 of the 14 ms of CPU an idle gateway's main thread spent each second, when it ran every
 * second). The timer's measurement reads one database per event-loop turn, so a request waits out
 * one database's statistics (tens of µs) rather than all of them. It runs on this timer only, never
 * inline: a write may sit inside another write transaction, where reading statistics is not safe.
 * Between two measurements the store may pass its limit by what is written meanwhile.
 *
 * A store far from its limit is measured less often ({@link nextMeasureIn}): every second only once
 * half the room left could be filled within a second at the growth assumed.
 */
export const MEASURE_EVERY_MS = 1000;
/** How long a store far from its limit goes between measurements, at most. */
export const MEASURE_AT_LEAST_EVERY_MS = 30_000;
/**
 * The growth assumed of a store however quiet it was, in bytes per ms (32 MiB a second): far above
 * what the gateway writes at saturation (about 0.5 KB of log a request).
 */
const ASSUMED_GROWTH = (32 * 1024 * 1024) / 1000;

/**
 * When to measure next, in ms: the time for the store to fill half the room it has left (`room`
 * bytes, ≤ 0 when full) at four times the growth last measured (`growth`, bytes per ms), and never
 * less than {@link ASSUMED_GROWTH}; between {@link MEASURE_EVERY_MS} and
 * {@link MEASURE_AT_LEAST_EVERY_MS}. A 16 GB store holding 1 GB is measured every 30 s; one within
 * 64 MB of its limit, or full, every second.
 */
export function nextMeasureIn(room: number, growth: number): number {
  const rate = Math.max(ASSUMED_GROWTH, 4 * growth);
  const ms = room / 2 / rate;
  return Number.isFinite(ms) ? Math.min(MEASURE_AT_LEAST_EVERY_MS, Math.max(MEASURE_EVERY_MS, ms)) : MEASURE_EVERY_MS;
}
/** How old a measurement {@link StoreCapacity.assertRoom} accepts. */
const FRESH_MS = 100;
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
 * Measures the databases opened on `root` against `limit` bytes. Every database the process opens
 * (collections, and plugins' own: logs, cache, analytics) is recorded by wrapping `root.openDB`,
 * so the gateway never opens one itself to measure it.
 *
 * @example
 *   const capacity = createCapacity(root, 16 * 2 ** 30);
 *   if (capacity.full()) dropThisLogBatch();
 */
export function createCapacity(root: RootDatabase, limit: number): StoreCapacity {
  const cap = Math.max(MIN_LIMIT, limit);
  // Room kept free for what is never refused (deletes, counters): 1/32 of the limit, at most 64 MB.
  const reserve = Math.min(cap / 32, 64 * 1024 * 1024);
  const opened = new Map<string, Database<unknown, Key>>();
  const openDB = root.openDB.bind(root) as (...args: unknown[]) => Database<unknown, Key>;
  (root as unknown as { openDB: (...args: unknown[]) => Database<unknown, Key> }).openDB = function openAndRecord(...args: unknown[]) {
    const db = openDB(...args);
    const name = typeof args[0] === 'string' ? args[0] : (args[0] as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string') opened.set(name, db);
    return db;
  };
  let usedBytes = 0;
  let measuredAt = -Infinity;
  /** Growth between the last two measurements, bytes per ms (0 when the store shrank). */
  let growth = 0;
  let closed = false;

  interface Pass {
    dbs: Database<unknown, Key>[];
    next: number;
    pages: number;
    pageSize: number;
    startedAt: number;
  }

  /** A measurement begun: the main db's tree, the free list and the two meta pages counted. */
  function begin(): Pass {
    const rootStats = root.getStats() as Stats;
    const pages = pagesOf(rootStats) + pagesOf(rootStats.free) + 2;
    return { dbs: [...opened.values()], next: 0, pages, pageSize: rootStats.pageSize ?? 4096, startedAt: performance.now() };
  }

  function finish(p: Pass): number {
    const used = p.pages * p.pageSize;
    const now = performance.now();
    if (measuredAt !== -Infinity && now > measuredAt) growth = Math.max(0, (used - usedBytes) / (now - measuredAt));
    usedBytes = used;
    measuredAt = now;
    return usedBytes;
  }

  function measure(): number {
    if (closed) return usedBytes;
    const p = begin();
    for (const db of p.dbs) p.pages += pagesOf(db.getStats() as Stats);
    return finish(p);
  }

  /** The timer's measurement, spread over event-loop turns, one database per turn; at most one at a time. */
  let pass: Pass | undefined;
  function step(): void {
    const p = pass;
    if (p === undefined || closed) return void (pass = undefined);
    try {
      const db = p.dbs[p.next++];
      if (db !== undefined) p.pages += pagesOf(db.getStats() as Stats);
    } catch {
      // A closing env (close() ends the timer): tried again later, as a store left open would be.
      pass = undefined;
      return schedule();
    }
    if (p.next < p.dbs.length) return void setImmediate(step);
    pass = undefined;
    // A synchronous measure() since the pass began (assertRoom, tests) is fresher: keep it.
    if (measuredAt < p.startedAt) finish(p);
    schedule();
  }

  /** The next measurement, as {@link nextMeasureIn} says: a pass begun, read one database per turn. */
  let timer: NodeJS.Timeout | undefined;
  function schedule(): void {
    if (closed) return;
    // The first measurement a second after open, as always: a store reopened full is known full soon.
    timer = setTimeout(startPass, measuredAt === -Infinity ? MEASURE_EVERY_MS : nextMeasureIn(cap - reserve - usedBytes, growth));
    timer.unref();
  }
  function startPass(): void {
    if (closed) return;
    try {
      pass = begin();
    } catch {
      return schedule(); // a closing env, as in step()
    }
    setImmediate(step);
  }
  schedule();

  const full = (): boolean => usedBytes >= cap - reserve;
  return {
    limit: cap,
    used: () => usedBytes,
    full,
    assertRoom() {
      if (performance.now() - measuredAt > FRESH_MS) measure();
      if (full()) throw StoreErrors.full();
    },
    measure,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
