/**
 * Semantic vectors by hard partition, in memory for the lookup and mirrored in LMDB for restarts.
 *
 *   memory   partition id → { keys[], created[], vectors[] }   time-ordered, unit Float32Arrays
 *   LMDB     cache_vectors  [partition id, created ms, entry key] → float32 bytes
 *
 * A lookup scans one partition linearly (dot products of unit vectors = cosine similarity); it
 * never looks at another partition, so a workspace, route, target, model or namespace never sees
 * another's answers. Bounds: `max_per_partition` vectors per partition (the partition's oldest
 * goes), and `max_vectors` overall (the oldest vector of the least recently written partition
 * goes), because namespaces are chosen by callers and could otherwise grow memory without end.
 *
 * Vectors are kept per process: a vector another process stores is seen here after a restart.
 * In distributed mode there is no LMDB mirror (`root` undefined): the index lives in memory only,
 * fed from Valkey by the vector feed (shared-vectors.ts), which also gives each vector its expiry.
 */
import type { Database, RootDatabase } from 'lmdb';
import type { Logger } from '../../core/index.js';
import { CacheErrors } from './errors.js';

export interface SemanticLimits {
  max_per_partition: number;
  max_vectors: number;
}

interface Partition {
  keys: string[];
  created: number[];
  vectors: Float32Array[];
  /** When the entry behind each vector expires (ms); Infinity when only `max_age` decides. */
  expires: number[];
}

export interface Match {
  key: string;
  created: number;
  score: number;
}

type VectorKey = [string, number, string];

export class SemanticIndex {
  readonly #db: Database<Buffer, VectorKey> | undefined;
  readonly #limits: SemanticLimits;
  readonly #log: Logger;
  /** Map order = least recently written first: the global bound evicts from the front. */
  readonly #partitions = new Map<string, Partition>();
  #total = 0;
  #closed = false;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(root: RootDatabase | undefined, limits: SemanticLimits, log: Logger) {
    this.#db = root?.openDB<Buffer, VectorKey>({ name: 'cache_vectors', encoding: 'binary' });
    this.#limits = limits;
    this.#log = log;
    if (this.#db !== undefined) this.#load(this.#db);
  }

  get size(): number {
    return this.#total;
  }

  /** Rebuilds the partitions from LMDB (rows come sorted by partition, then time). */
  #load(db: Database<Buffer, VectorKey>): void {
    const last: Array<[string, number]> = [];
    for (const { key, value } of db.getRange()) {
      const [pid, created, entry] = key;
      // A copy: LMDB may hand out a view into a reused buffer, and Float32Array needs alignment.
      const bytes = new Uint8Array(value);
      if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) continue;
      let p = this.#partitions.get(pid);
      if (p === undefined) {
        p = { keys: [], created: [], vectors: [], expires: [] };
        this.#partitions.set(pid, p);
      }
      p.keys.push(entry);
      p.created.push(created);
      p.vectors.push(new Float32Array(bytes.buffer));
      p.expires.push(Infinity);
      this.#total++;
    }
    for (const [pid, p] of this.#partitions) last.push([pid, p.created[p.created.length - 1] ?? 0]);
    // Restore "least recently written first" so the global bound keeps evicting the stalest.
    last.sort((a, b) => a[1] - b[1]);
    for (const [pid] of last) {
      const p = this.#partitions.get(pid)!;
      this.#partitions.delete(pid);
      this.#partitions.set(pid, p);
      while (p.keys.length > this.#limits.max_per_partition) this.#shift(pid, p);
    }
    while (this.#total > this.#limits.max_vectors) this.#evictStalest();
  }

  /**
   * The closest vector of `pid` with similarity ≥ `threshold` stored after `notBefore` (ms).
   * `query` must be unit length; vectors of another dimension (a changed model) are skipped.
   */
  search(pid: string, query: Float32Array, threshold: number, notBefore: number): Match | undefined {
    const p = this.#partitions.get(pid);
    if (p === undefined) return undefined;
    let best: Match | undefined;
    const n = query.length;
    for (let i = 0; i < p.vectors.length; i++) {
      if (p.created[i]! <= notBefore) continue;
      const v = p.vectors[i]!;
      if (v.length !== n) continue;
      let dot = 0;
      for (let j = 0; j < n; j++) dot += v[j]! * query[j]!;
      if (dot >= threshold && (best === undefined || dot > best.score)) best = { key: p.keys[i]!, created: p.created[i]!, score: dot };
    }
    return best;
  }

  /** Adds (or replaces) the vector of entry `key`, in memory now and in LMDB in the background. */
  add(pid: string, key: string, created: number, vector: Float32Array, expires = Infinity): void {
    if (this.#closed) return;
    let p = this.#partitions.get(pid);
    if (p === undefined) p = { keys: [], created: [], vectors: [], expires: [] };
    else this.#partitions.delete(pid); // re-inserted below: now the most recently written
    this.#partitions.set(pid, p);
    const at = p.keys.indexOf(key);
    if (at !== -1) this.#removeAt(pid, p, at);
    p.keys.push(key);
    p.created.push(created);
    p.vectors.push(vector);
    p.expires.push(expires);
    this.#total++;
    if (this.#db !== undefined) this.#track(this.#db.put([pid, created, key], Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)));
    while (p.keys.length > this.#limits.max_per_partition) this.#shift(pid, p);
    while (this.#total > this.#limits.max_vectors) this.#evictStalest();
  }

  /** Forgets the vector of an entry that is gone (evicted or replaced with another time). */
  drop(pid: string, key: string, created: number): void {
    const p = this.#partitions.get(pid);
    if (p === undefined) return;
    for (let i = 0; i < p.keys.length; i++) {
      if (p.keys[i] === key && p.created[i] === created) return this.#removeAt(pid, p, i);
    }
  }

  /** Forgets every vector whose entry expired before `now` (ms); returns how many. */
  dropExpired(now: number): number {
    let dropped = 0;
    for (const [pid, p] of [...this.#partitions]) {
      for (let i = p.keys.length - 1; i >= 0; i--) {
        if (p.expires[i]! > now) continue;
        this.#removeAt(pid, p, i);
        dropped++;
      }
    }
    return dropped;
  }

  #shift(pid: string, p: Partition): void {
    this.#removeAt(pid, p, 0);
  }

  #evictStalest(): void {
    const first = this.#partitions.entries().next();
    if (first.done === true) return;
    const [pid, p] = first.value;
    this.#removeAt(pid, p, 0);
  }

  #removeAt(pid: string, p: Partition, i: number): void {
    const key = p.keys[i]!;
    const created = p.created[i]!;
    p.keys.splice(i, 1);
    p.created.splice(i, 1);
    p.vectors.splice(i, 1);
    p.expires.splice(i, 1);
    this.#total--;
    if (p.keys.length === 0) this.#partitions.delete(pid);
    if (!this.#closed && this.#db !== undefined) this.#track(this.#db.remove([pid, created, key]));
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => {
      const e = CacheErrors.writeFailed(undefined, { cause: err });
      this.#log.error('cache vector write failed', { code: e.code, err });
    });
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pending]);
  }
}
