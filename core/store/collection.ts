/**
 * A typed collection over one LMDB sub-database, with secondary indexes kept in the same write
 * transaction as the record.
 *
 *   records db   "<name>"          id               → record (msgpack)
 *   index db     "<name>#<index>"  [value, id]      → 1         (non-unique)
 *                                  [value]          → id        (unique)
 *   meta db      ["version", name] → n      bumped by every write; memory caches compare it
 *                ["version", "*"]  → n      bumped by every write of every collection (see version())
 *   <env>-writes   8 random bytes, rewritten after every such write commits (see WriteSignal)
 *
 * Writes are synchronous transactions (`transactionSync`): they commit durably before returning
 * and roll back completely if the callback throws, so a failed write never leaves half a record
 * or a stale index entry. Admin writes are rare; the hot path only reads.
 *
 * A write also carries the companion record of the current scope (the audit record of the admin
 * call making it, see companion.ts) in its transaction. A write that fails for lack of room (the
 * disk full) is 503 `store_full`. The store's own size limit is enforced by the callers that grow
 * the store (admin routes, logs, cache), not here: hot-path bookkeeping such as budget usage must
 * keep counting when the store is full.
 *
 * Distributed mode (store/distributed/replica.ts) sets a write observer on every collection: each
 * write names the record it is about to change, before it changes it, so the replica can journal
 * the before-image and ship the record to PostgreSQL. On the embedded default the observer is null
 * and a write pays one null check.
 */
import { closeSync, constants, fstatSync, openSync, readSync, watch, writeSync, type FSWatcher } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';
import { StoreErrors } from './errors.js';
import { putCompanion, type Companion } from './companion.js';
import { isNoRoom } from './write-failures.js';

export interface IndexDefinition<T> {
  /** The indexed value(s) of a record; null/undefined leaves the record out of the index. */
  key(record: T): string | ReadonlyArray<string> | null | undefined;
  /** At most one record per value; a second one is a conflict (409). */
  unique?: boolean;
}

export interface CollectionDefinition<T> {
  name: string;
  indexes?: Record<string, IndexDefinition<T>>;
}

export interface ListOptions<T> {
  /** Restrict to records whose index `index` has value `value`. */
  index?: string;
  value?: string;
  filter?: (record: T) => boolean;
  offset?: number;
  limit?: number;
  /** Order by id descending (ids are time-ordered UUIDv7, so newest first). */
  newestFirst?: boolean;
}

/**
 * Told about a write before it is made (inside the write's transaction for synchronous writes),
 * so `collection.get(id)` still reads the before-image. `async`: an `append`/`removeAsync`, which
 * commits later (wait for `root.flushed` before reading its result).
 */
export type WriteObserver = (collection: Collection<{ id: string }>, id: string, async: boolean) => void;

export interface Page<T> {
  total: number;
  items: T[];
}

type Key = string | Array<string>;

/** How long a version read is reused (see `version()`). */
const VERSION_REUSE_MS = 1;

/**
 * How long an unmoved {@link WriteSignal} is trusted without reading the counter from LMDB: the
 * bound on how late a write is seen when its process died between its commit and its signal (or
 * wrote without one). Reads at this pace cost nothing measurable.
 */
const SIGNAL_TRUST_MS = 1000;

/** The meta key every collection's write bumps too: one read tells whether any collection changed. */
const ANY_WRITE: Key = ['version', '*'];

/**
 * The store-wide write counter's cross-process signal: `<env>-writes`, 8 bytes that every write
 * overwrites with random ones once its transaction has committed (every process and thread sharing
 * the data dir does). Reading them is one `pread`, about 1 µs; reading the counter from LMDB costs
 * about 10 µs when another thread has committed since (the log thread commits all the time under
 * traffic), because lmdb-js renews its read snapshot for it. So the counter is read from LMDB only
 * when the signal moved, and at least every {@link SIGNAL_TRUST_MS}.
 *
 * The signal is written in a microtask queued by the write: it runs once the synchronous code that
 * wrote has returned, which is after the outermost `transactionSync` committed (a reader that sees
 * the signal then reads the committed counter), and within the same turn of the event loop.
 *
 * The file is also watched (inotify): while no change was reported, a check costs no system call
 * at all. A system call costs more in place than its 0.75 µs in a loop: the checks it saves, about
 * 600 a second under load, were 2 % of the CPU per request (`bench/ab.sh`). The kernel queues the
 * change event when the bytes are written, before the writer answers anyone, so a request that
 * follows the write arrives on this event loop after the event and is served after it: a key
 * revoked elsewhere is still refused on the next request. Where the file cannot be watched
 * (inotify's limit reached, say) every check reads the file.
 */
class WriteSignal {
  readonly #fd: number;
  readonly #seen = Buffer.alloc(8);
  readonly #read = Buffer.alloc(8);
  #pending = false;
  #closed = false;
  /** Null when the file is not watched: then every check reads it. */
  #watcher: FSWatcher | null = null;
  /** A change was reported since the last check (or nothing is known yet). */
  #changed = true;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  #watch(file: string): void {
    try {
      const watcher = watch(file, { persistent: false }, () => {
        this.#changed = true;
      });
      watcher.on('error', () => this.#unwatch());
      this.#watcher = watcher;
    } catch {
      // No watch (inotify's limit reached, say): every check reads the file.
    }
  }

  #unwatch(): void {
    this.#watcher?.close();
    this.#watcher = null;
    this.#changed = true;
  }

  /** The signal beside the env at `envPath`; null where the file cannot be opened (a read-only dir): then every read goes to LMDB. */
  static open(envPath: string): WriteSignal | null {
    let fd: number | undefined;
    try {
      fd = openSync(`${envPath}-writes`, constants.O_RDWR | constants.O_CREAT, 0o600);
      // A new file: 8 bytes to compare from the start (a short one would read as moved every time).
      if (fstatSync(fd).size < 8) writeSync(fd, randomBytes(8), 0, 8, 0);
      const signal = new WriteSignal(fd);
      signal.#watch(`${envPath}-writes`);
      return signal;
    } catch {
      if (fd !== undefined) closeSync(fd);
      return null;
    }
  }

  /** True when the signal changed since the last call (or cannot be read); it is then taken as seen. */
  moved(): boolean {
    if (this.#closed) return true;
    if (this.#watcher !== null) {
      if (!this.#changed) return false;
      this.#changed = false;
    }
    try {
      const n = readSync(this.#fd, this.#read, 0, 8, 0);
      if (n === 8 && this.#read.equals(this.#seen)) return false;
      this.#read.copy(this.#seen);
      return true;
    } catch {
      return true;
    }
  }

  /** Called inside a write's transaction: the signal moves once that transaction has committed. */
  raise(): void {
    if (this.#pending) return;
    this.#pending = true;
    queueMicrotask(() => this.#write());
  }

  #write(): void {
    // Closed: the descriptor's number may already name another file (close wrote what was pending).
    if (!this.#pending || this.#closed) return;
    this.#pending = false;
    try {
      writeSync(this.#fd, randomBytes(8), 0, 8, 0);
    } catch {
      // A full or failing disk: readers still read LMDB every SIGNAL_TRUST_MS.
    }
  }

  /** The store is closing, its writes committed: a signal still pending goes out now. */
  close(): void {
    if (this.#closed) return;
    this.#write();
    this.#closed = true;
    this.#unwatch();
    closeSync(this.#fd);
  }
}

/**
 * The store-wide write counter as last read, shared by the collections of one meta database: a
 * request asks five or six collections for their version, and when none was written (the usual
 * case) that costs one signal read a millisecond instead of an LMDB read per collection.
 */
class WriteCounter {
  #value = 0;
  /** When the signal (or, without one, LMDB) was last asked. */
  #checkedAt = -Infinity;
  /** When the counter was last read from LMDB. */
  #readAt = -Infinity;
  constructor(
    readonly meta: Database<number, Key>,
    readonly signal: WriteSignal | null,
  ) {}

  /** The counter, checked at most once per {@link VERSION_REUSE_MS}. */
  current(now: number): number {
    if (now - this.#checkedAt < VERSION_REUSE_MS) return this.#value;
    this.#checkedAt = now;
    // The signal is read before the counter: a write committed after that read moves it again.
    if (this.signal !== null && !this.signal.moved() && now - this.#readAt < SIGNAL_TRUST_MS) return this.#value;
    this.#value = this.meta.get(ANY_WRITE) ?? 0;
    this.#readAt = now;
    return this.#value;
  }

  /** Inside a write's transaction: the next read sees it at once in this process, and the others are signalled. */
  bump(): void {
    this.meta.putSync(ANY_WRITE, (this.meta.get(ANY_WRITE) ?? 0) + 1);
    this.#checkedAt = -Infinity;
    this.#readAt = -Infinity;
    this.signal?.raise();
  }
}

const counters = new WeakMap<Database<number, Key>, WriteCounter>();

function writeCounter(root: RootDatabase, meta: Database<number, Key>): WriteCounter {
  let counter = counters.get(meta);
  if (counter === undefined) {
    const path = envPath(root);
    counters.set(meta, (counter = new WriteCounter(meta, path === undefined ? null : WriteSignal.open(path))));
  }
  return counter;
}

/** The path lmdb-js opened the env at (it keeps it on the database; its typings do not say so), if it does. */
function envPath(root: RootDatabase): string | undefined {
  const path = (root as unknown as { path?: unknown }).path;
  return typeof path === 'string' && path.length > 0 ? path : undefined;
}

/** Closes the write signal of the collections over `meta` (the store is closing). */
export function closeWriteSignal(meta: Database<number, Key>): void {
  counters.get(meta)?.signal?.close();
}

/**
 * Longest lookup key, in UTF-8 bytes, that reaches LMDB (its limit is 1978 bytes, less the
 * encoding and a composite index key's id). Callers bound ids far below this (MAX_ID_LENGTH);
 * this is the defence behind them: a longer key cannot exist, so it is simply not found, never
 * an LMDB error surfacing as a 500.
 */
const MAX_KEY_BYTES = 1024;

/** True when `key` could not be a stored key (checked cheaply: most keys are short ASCII). */
function oversized(key: string): boolean {
  return key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES;
}

/** Remembers what a lookup found (a miss too, as null) and returns it; past 10,000 entries a cache starts over. */
function remember<T>(cache: Map<string, T | null>, key: string, found: T | undefined): T | undefined {
  if (cache.size > 10_000) cache.clear();
  cache.set(key, found ?? null);
  return found;
}

export class Collection<T extends { id: string }> {
  readonly name: string;
  readonly #root: RootDatabase;
  readonly #db: Database<T, string>;
  readonly #meta: Database<number, Key>;
  readonly #writes: WriteCounter;
  readonly #indexes: Array<{ name: string; def: IndexDefinition<T>; db: Database<unknown, Key> }>;
  /** `cached` by id, and `cachedBy` per index by value (no key string built per lookup). */
  readonly #cache = new Map<string, T | null>();
  readonly #cacheBy = new Map<string, Map<string, T | null>>();
  #cacheVersion = -1;
  #observer: WriteObserver | null = null;

  constructor(root: RootDatabase, meta: Database<number, Key>, def: CollectionDefinition<T>) {
    this.name = def.name;
    this.#root = root;
    this.#meta = meta;
    this.#writes = writeCounter(root, meta);
    this.#db = root.openDB<T, string>({ name: def.name });
    this.#indexes = Object.entries(def.indexes ?? {}).map(([name, idx]) => ({
      name,
      def: idx,
      db: root.openDB<unknown, Key>({ name: `${def.name}#${name}` }),
    }));
  }

  /** Distributed mode: the replica's journal (see {@link WriteObserver}); null on the embedded default. */
  observe(observer: WriteObserver | null): void {
    this.#observer = observer;
  }

  #observed(id: string, async: boolean): void {
    this.#observer!(this as unknown as Collection<{ id: string }>, id, async);
  }

  get(id: string): T | undefined {
    if (typeof id !== 'string' || oversized(id)) return undefined;
    return this.#db.get(id);
  }

  /** The record whose unique index `index` has `value`. */
  getBy(index: string, value: string): T | undefined {
    const idx = this.#index(index);
    if (typeof value !== 'string' || oversized(value)) return undefined;
    if (idx.def.unique) {
      const id = idx.db.get([value]) as string | undefined;
      return id === undefined ? undefined : this.#db.get(id);
    }
    for (const { key } of idx.db.getRange({ start: [value], end: [value, '\uffff'], limit: 1 })) {
      return this.#db.get((key as string[])[1]!);
    }
    return undefined;
  }

  /**
   * A memory-cached `getBy` for the hot path (auth, virtual keys). The cache is dropped whenever
   * the collection's version changed, including by another process sharing the env (seen within
   * a millisecond, see {@link version}).
   */
  cachedBy(index: string, value: string): T | undefined {
    this.#syncCache();
    let cache = this.#cacheBy.get(index);
    if (cache === undefined) this.#cacheBy.set(index, (cache = new Map()));
    const hit = cache.get(value);
    return hit !== undefined ? (hit ?? undefined) : remember(cache, value, this.getBy(index, value));
  }

  /** A memory-cached `get` for the hot path (budgets, policies), consistent like {@link cachedBy}. Never mutate the result. */
  cached(id: string): T | undefined {
    this.#syncCache();
    const hit = this.#cache.get(id);
    return hit !== undefined ? (hit ?? undefined) : remember(this.#cache, id, this.get(id));
  }

  #syncCache(): void {
    const version = this.version();
    if (version !== this.#cacheVersion) {
      this.#cache.clear();
      this.#cacheBy.clear();
      this.#cacheVersion = version;
    }
  }

  /**
   * The collection's write counter. A read is reused for {@link VERSION_REUSE_MS}: a request's
   * hooks ask several times, and a write elsewhere is then seen within a millisecond instead of
   * costing a check per question (a write whose process died before signalling it, within
   * {@link SIGNAL_TRUST_MS}). A write through this collection is seen at once.
   *
   * The collection's own counter is read only when the store-wide one moved since it was last
   * read. Every write bumps the store-wide counter with or after its collection's, and that one is
   * read before the collection's: while it stands still, so did every collection's counter.
   */
  version(): number {
    const now = performance.now();
    if (now - this.#versionReadAt < VERSION_REUSE_MS) return this.#version;
    const anyWrite = this.#writes.current(now);
    if (anyWrite !== this.#anyWriteSeen) {
      this.#version = this.#readVersion();
      this.#anyWriteSeen = anyWrite;
    }
    this.#versionReadAt = now;
    return this.#version;
  }

  #version = 0;
  #versionReadAt = -Infinity;
  /** The store-wide counter when {@link #version} was read (NaN: read it again). */
  #anyWriteSeen = Number.NaN;

  #readVersion(): number {
    return this.#meta.get(['version', this.name]) ?? 0;
  }

  list(options: ListOptions<T> = {}): Page<T> {
    const offset = options.offset ?? 0;
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const items: T[] = [];
    let total = 0;
    const take = (record: T | undefined): void => {
      if (record === undefined || (options.filter && !options.filter(record))) return;
      if (total >= offset && items.length < limit) items.push(record);
      total++;
    };
    if (options.index !== undefined && options.value !== undefined) {
      const idx = this.#index(options.index);
      if (oversized(options.value)) return { total, items };
      if (idx.def.unique) take(this.getBy(options.index, options.value));
      else {
        const range = idx.db.getRange({ start: [options.value], end: [options.value, '\uffff'], reverse: false });
        const ids: string[] = [];
        for (const { key } of range) ids.push((key as string[])[1]!);
        if (options.newestFirst) ids.reverse();
        for (const id of ids) take(this.#db.get(id));
      }
    } else {
      for (const { value } of this.#db.getRange({ reverse: options.newestFirst ?? false })) take(value);
    }
    return { total, items };
  }

  /** Inserts a new record; an existing id or a unique-index clash is a conflict. */
  insert(record: T): T {
    return this.#write(() => {
      if (this.#db.get(record.id) !== undefined) throw StoreErrors.conflict(`${this.name} ${record.id} already exists.`);
      if (this.#observer !== null) this.#observed(record.id, false);
      this.#writeIndexes(undefined, record);
      this.#db.putSync(record.id, record);
      this.#bump();
      return record;
    });
  }

  /**
   * Read-modify-write in one transaction: `change` gets the current record and returns the new
   * one (or throws to abort with nothing written). Concurrent updates serialize; none is lost.
   */
  update(id: string, change: (current: T) => T): T {
    if (oversized(id)) throw StoreErrors.notFound(`The ${this.name} record does not exist.`);
    return this.#write(() => {
      const current = this.#db.get(id);
      if (current === undefined) throw StoreErrors.notFound(`The ${this.name} record does not exist.`);
      const next = change(structuredClone(current));
      if (next.id !== id) throw StoreErrors.conflict('A record id cannot change.');
      if (this.#observer !== null) this.#observed(id, false);
      this.#writeIndexes(current, next);
      this.#db.putSync(id, next);
      this.#bump();
      return next;
    });
  }

  /**
   * Appends a record without a synchronous transaction: for high-volume, write-once records in
   * collections without indexes (audit, logs). LMDB batches it with the other writes of this
   * event-loop turn; the promise resolves when it is committed.
   */
  append(record: T): Promise<boolean> {
    if (this.#indexes.length > 0) throw new Error(`collection ${this.name} has indexes: use insert()`);
    if (this.#observer !== null) this.#observed(record.id, true);
    return this.#db.put(record.id, record);
  }

  /** The number of records, from LMDB's page statistics (no scan). */
  count(): number {
    return (this.#db.getStats() as { entryCount?: number }).entryCount ?? 0;
  }

  /** Up to `limit` ids in key order: oldest first, as ids are UUIDv7. */
  oldestIds(limit: number): string[] {
    return [...this.#db.getKeys({ limit })];
  }

  /**
   * Removes a record without a synchronous transaction (retention of write-once records in
   * collections without indexes); batched by LMDB like {@link append}.
   */
  removeAsync(id: string): Promise<boolean> {
    if (this.#indexes.length > 0) throw new Error(`collection ${this.name} has indexes: use delete()`);
    if (this.#observer !== null) this.#observed(id, true);
    return this.#db.remove(id);
  }

  /** {@link append}, committed before it returns (a record that must be durable when the caller answers). */
  appendSync(record: T): void {
    if (this.#indexes.length > 0) throw new Error(`collection ${this.name} has indexes: use insert()`);
    if (this.#observer !== null) this.#observed(record.id, false);
    try {
      this.#db.putSync(record.id, record);
    } catch (err) {
      if (isNoRoom(err)) throw StoreErrors.full(err);
      throw err;
    }
  }

  /**
   * A companion record of this collection (see companion.ts): written under `id` with the other
   * collections' writes of a scope. For collections without indexes (the audit trail).
   */
  companion(id: string, value: () => T): Companion {
    if (this.#indexes.length > 0) throw new Error(`collection ${this.name} has indexes: it cannot hold companions`);
    const before = (): void => {
      if (this.#observer !== null) this.#observed(id, false);
    };
    return { db: this.#db as Database<unknown, string>, key: id, value, before };
  }

  /** Removes a record and its index entries; false when it did not exist. */
  delete(id: string): boolean {
    if (oversized(id)) return false;
    return this.#write(() => {
      const current = this.#db.get(id);
      if (current === undefined) return false;
      if (this.#observer !== null) this.#observed(id, false);
      this.#writeIndexes(current, undefined);
      this.#db.removeSync(id);
      this.#bump();
      return true;
    });
  }

  /**
   * Distributed mode: sets a record (or removes it, `value` undefined) as PostgreSQL has it, with
   * its indexes and a version bump, without a conflict check or the observer. Call it inside a
   * `root.transactionSync` (a catch-up page, a restore). A unique index entry is taken over, and
   * an old one is removed only while it still names this record: changes of one commit may come in
   * any order (X leaves slug `a`, Y takes it) and end the same.
   */
  applyReplicated(id: string, value: T | undefined): void {
    const current = this.#db.get(id);
    for (const idx of this.#indexes) {
      const old = values(current ? idx.def.key(current) : undefined);
      const now = values(value ? idx.def.key(value) : undefined);
      for (const v of old) {
        if (now.includes(v)) continue;
        if (!idx.def.unique) idx.db.removeSync([v, id]);
        else if (idx.db.get([v]) === id) idx.db.removeSync([v]);
      }
      for (const v of now) idx.db.putSync(idx.def.unique ? [v] : [v, id], idx.def.unique ? id : 1);
    }
    if (value === undefined) {
      if (current !== undefined) this.#db.removeSync(id);
    } else this.#db.putSync(id, value);
    this.#bump();
  }

  /** Distributed mode: empties the collection and its indexes (a replica reloaded from PostgreSQL). */
  clearReplica(): void {
    this.#db.clearSync();
    for (const idx of this.#indexes) idx.db.clearSync();
    this.#bump();
  }

  /**
   * One write transaction: `body` and the scope's companion record commit together or not at all.
   * A failure for lack of room (disk full, EIO after it) becomes 503 `store_full`.
   */
  #write<R>(body: () => R): R {
    try {
      return this.#root.transactionSync(() => {
        const result = body();
        putCompanion(this.#db as Database<unknown, string>);
        return result;
      });
    } catch (err) {
      if (isNoRoom(err)) throw StoreErrors.full(err);
      throw err;
    }
  }

  #index(name: string): { name: string; def: IndexDefinition<T>; db: Database<unknown, Key> } {
    const idx = this.#indexes.find((i) => i.name === name);
    if (!idx) throw new Error(`collection ${this.name} has no index ${name}`);
    return idx;
  }

  #writeIndexes(before: T | undefined, after: T | undefined): void {
    for (const idx of this.#indexes) {
      const old = values(before ? idx.def.key(before) : undefined);
      const now = values(after ? idx.def.key(after) : undefined);
      for (const v of old) if (!now.includes(v)) idx.db.removeSync(idx.def.unique ? [v] : [v, before!.id]);
      for (const v of now) {
        if (old.includes(v)) continue;
        if (idx.def.unique) {
          const owner = idx.db.get([v]);
          if (owner !== undefined && owner !== after!.id) {
            // The value is the caller's: the message names the field only.
            throw StoreErrors.conflict(`This ${idx.name} is already taken in ${this.name}.`, idx.name);
          }
          idx.db.putSync([v], after!.id);
        } else idx.db.putSync([v, after!.id], 1);
      }
    }
  }

  #bump(): void {
    this.#versionReadAt = -Infinity;
    this.#anyWriteSeen = Number.NaN;
    this.#meta.putSync(['version', this.name], this.#readVersion() + 1);
    this.#writes.bump();
  }
}

function values(v: string | ReadonlyArray<string> | null | undefined): string[] {
  if (v === null || v === undefined) return [];
  return typeof v === 'string' ? [v] : [...v];
}
