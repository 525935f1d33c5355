/**
 * Cache entries in the gateway's LMDB env, bounded by count and bytes, oldest evicted first.
 *
 *   cache_entries        key (sha256 hex)      → CacheEntry (msgpack)
 *   cache_entries#time   [created ms, key]     → size in bytes      (eviction order)
 *
 * Reads are synchronous (a memory-mapped lookup: microseconds, no I/O on the request path).
 * Writes are asynchronous `transaction`s: lmdb-js batches every write of an event turn into
 * one commit on its write thread, so a request never waits for, nor pays, an fsync. The entry
 * and its time row change in the same transaction, so they never disagree. Until its commit
 * lands, a written entry is also held in memory and read from there: an answer just stored is a
 * hit for the very next identical request (read-your-writes) without a synchronous write.
 *
 * The count and byte total live in memory (one scan of the time index at setup) and are kept
 * by the write and eviction transactions; when a write takes them over a bound, one background
 * batch removes the oldest rows until they fit again. Several gateway processes sharing the
 * env each keep their own totals: the count is re-read from LMDB after every eviction batch
 * (mdb_stat, O(1)); the byte total only counts this process's writes until the next restart.
 */
import type { Database, RootDatabase } from 'lmdb';
import type { Logger } from '../../core/index.js';
import { CacheErrors } from './errors.js';

/** One stored answer, replayed as it was sent. */
export interface CacheEntry {
  /** Wall-clock ms when it was stored; `max_age` is counted from here. */
  created: number;
  /** The answer was an event stream (its body is the SSE text, `[DONE]` included if it came). */
  stream: boolean;
  content_type: string;
  body: Uint8Array;
  /** Tokens the original call used (what a hit saves). */
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** How long the original upstream call took, dispatch to last byte (what a hit saves). */
  latency_ms: number;
}

export interface StoreLimits {
  max_entries: number;
  max_bytes: number;
  /** True while the gateway store is at its size limit: new entries are not stored (a miss stays a miss). */
  storeFull?: () => boolean;
}

/** Rows removed per eviction transaction: bounds how long one batch holds the write lock. */
const EVICT_BATCH = 500;
/** Fixed cost counted per entry on top of its body (key, index row, msgpack framing). */
const ROW_OVERHEAD = 160;

type TimeKey = [number, string];

export const sizeOf = (entry: CacheEntry): number => entry.body.byteLength + ROW_OVERHEAD;

export class EntryStore {
  readonly #root: RootDatabase;
  readonly #entries: Database<CacheEntry, string>;
  readonly #byTime: Database<number, TimeKey>;
  readonly #limits: StoreLimits;
  readonly #log: Logger;
  #count = 0;
  #bytes = 0;
  #evicting = false;
  #closed = false;
  readonly #pending = new Set<Promise<unknown>>();
  /** Entries written but not committed yet, by key (read-your-writes). */
  readonly #unsettled = new Map<string, CacheEntry>();

  constructor(root: RootDatabase, limits: StoreLimits, log: Logger) {
    this.#root = root;
    this.#entries = root.openDB<CacheEntry, string>({ name: 'cache_entries' });
    this.#byTime = root.openDB<number, TimeKey>({ name: 'cache_entries#time' });
    this.#limits = limits;
    this.#log = log;
    // The one O(n) pass: the time index holds only sizes, so this reads no bodies.
    for (const { value } of this.#byTime.getRange()) {
      this.#count++;
      this.#bytes += value;
    }
  }

  get count(): number {
    return this.#count;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The entry under `key` if it was stored after `notBefore` (ms); older is a miss. The workspace
   * is already hashed into `key`; it is a parameter for the shared store's sake (one signature).
   */
  fresh(_workspace: string, key: string, notBefore: number): CacheEntry | undefined {
    // Almost always empty: a hit pays one size check for read-your-writes.
    const entry = (this.#unsettled.size === 0 ? undefined : this.#unsettled.get(key)) ?? this.#entries.get(key);
    return entry !== undefined && entry.created > notBefore ? entry : undefined;
  }

  /** Stores (or replaces) an entry, in the background. LMDB entries have no TTL: `max_age` and the bounds decide. */
  write(_workspace: string, key: string, entry: CacheEntry, _ttlMs: number): void {
    if (this.#closed || this.#limits.storeFull?.()) return;
    const size = sizeOf(entry);
    this.#unsettled.set(key, entry);
    const landed = (): void => {
      if (this.#unsettled.get(key) === entry) this.#unsettled.delete(key);
    };
    this.#track(
      this.#root
        .transaction(() => {
          const old = this.#entries.get(key);
          if (old !== undefined) {
            this.#byTime.remove([old.created, key]);
            this.#count--;
            this.#bytes -= sizeOf(old);
          }
          this.#entries.put(key, entry);
          this.#byTime.put([entry.created, key], size);
          this.#count++;
          this.#bytes += size;
        })
        .finally(landed)
        .then(() => this.#maybeEvict()),
    );
  }

  #over(): boolean {
    return this.#count > this.#limits.max_entries || this.#bytes > this.#limits.max_bytes;
  }

  /** One eviction batch at a time; writes landing meanwhile are covered by the re-check at its end. */
  #maybeEvict(): void {
    if (this.#evicting || this.#closed || !this.#over()) return;
    this.#evicting = true;
    this.#track(
      this.#root
        .transaction(() => {
          const victims: Array<{ key: TimeKey; size: number }> = [];
          let count = this.#count;
          let bytes = this.#bytes;
          for (const { key, value } of this.#byTime.getRange({ limit: EVICT_BATCH })) {
            if (count <= this.#limits.max_entries && bytes <= this.#limits.max_bytes) break;
            victims.push({ key, size: value });
            count--;
            bytes -= value;
          }
          for (const { key, size } of victims) {
            this.#byTime.remove(key);
            this.#entries.remove(key[1]);
            this.#count--;
            this.#bytes -= size;
          }
          // Other processes write to the same env: trust LMDB's own row count (mdb_stat, O(1)) over ours.
          const rows = (this.#byTime.getStats() as { entryCount?: unknown }).entryCount;
          if (typeof rows === 'number') this.#count = rows;
          if (this.#bytes < 0) this.#bytes = 0;
        })
        .finally(() => {
          this.#evicting = false;
        })
        .then(() => this.#maybeEvict()),
    );
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => {
      const e = CacheErrors.writeFailed(undefined, { cause: err });
      this.#log.error('cache write failed', { code: e.code, err });
    });
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }

  /** Stops writing and waits for writes already queued. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pending]);
  }
}
