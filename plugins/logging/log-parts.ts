/**
 * The log indexes (log-index.ts), kept in partitions by record id, so that retention drops a
 * partition's entries whole instead of deleting them one by one.
 *
 *   logs#parts   { parts: [ {slot 3, first ''}, {slot 0, first '0191…'}, {slot 5, first '0192…'} ] }
 *                            oldest ──────────────────────────────────────────▶ newest (written)
 *   logs#idx, logs#idx@1 … logs#idx@11   the slots: one partition's entries each, or empty
 *
 * A partition holds the entries of the ids from its `first` up to the next partition's `first`
 * (the oldest one: everything below too). Ids are time-ordered (UUIDv7), so new records go to the
 * newest partition, which is rolled into a free slot once it holds `partSize` records.
 *
 * Retention (retention.ts) removes records by key alone and leaves their entries behind. Those
 * are below the oldest record kept, and every read here starts there: a walk or a count never
 * sees them. Once no record of the oldest partition is left, its slot is cleared in one step
 * (LMDB frees its pages: about 0.3 µs a record against 16 µs for deleting four entries one by one,
 * bench/README.md) and freed for a later partition.
 * - The slots are a fixed set of databases, opened once by every thread, so a database handle is
 *   never closed while another thread may read through it (LMDB forbids that); a slot is cleared
 *   and reused instead. With no free slot, the newest partition keeps growing until one is freed.
 * - A read takes the registry as it is at that moment and clips each partition to its own ids:
 *   a slot cleared or reused by the log thread meanwhile yields nothing it should not.
 * - The registry is read and written inside each write transaction: processes sharing the store
 *   agree on it.
 * - A store from before partitions keeps its `logs#idx` as the oldest partition (slot 0), cleared
 *   like the others once its records are gone.
 */
import type { Database, Key, RootDatabase } from 'lmdb';
import { countKeys, countRecords, edgeKey, LOGS_DB, openLogDb, type LogDb } from './log-db.js';

/** Index entries hold their record's workspace id (or null). */
export type IndexDb = Database<string | null, Key>;

/** Slot 0: the index database of stores from before partitions. */
export const LOG_INDEX_DB = `${LOGS_DB}#idx`;
const REGISTRY_DB = `${LOGS_DB}#parts`;
const REGISTRY_KEY = 'parts';

/** Slot databases (a store opens up to 128 databases in all). */
export const INDEX_SLOTS = 12;

/** Greater than every id (ids are lowercase hex and dashes). */
export const TOP = '\uffff';

export interface Part {
  slot: number;
  /** The smallest id of the partition ('' for the first one). */
  first: string;
  /** Records routed here (the roll's measure; the newest's is saved every sixteenth of a partition). */
  records: number;
}

interface Registry {
  /** Oldest first; new ids go to the last. */
  parts: Part[];
}

/**
 * Records per partition for a store bounded to `maxRecords`: about an eighth of it, so the bound
 * takes some ten slots and one clear stays short (the old index of 54,601 records, 218,406 entries,
 * went within a 13 ms slice).
 */
export function partSizeFor(maxRecords: number): number {
  return Math.min(125_000, Math.max(10_000, Math.ceil(maxRecords / 8)));
}

/** One [field, value]'s ids from `low` (inclusive) to `high` (exclusive), as a walk reads them. */
export interface TermRange {
  field: string;
  value: string;
  low: string;
  high: string;
  reverse?: boolean;
  /** Resume after this id (exclusive), in the range's direction. */
  after?: string;
  limit?: number;
}

export interface IndexEntry {
  id: string;
  ws: string | null;
}

/** An index write inside the caller's transaction ({@link LogIndex.beginWrite}). */
export interface IndexWrite {
  /** The database an id's entries go to (counted as one record of its partition). */
  route(id: string): IndexDb;
  /** Saves the registry's changes (its counts, a roll). */
  end(): void;
}

const opened = new WeakMap<RootDatabase, LogIndex>();

/** The log indexes of a store: one instance per environment in a process (per thread). */
export function openLogIndex(root: RootDatabase): LogIndex {
  let index = opened.get(root);
  if (index === undefined) {
    index = new LogIndex(root);
    opened.set(root, index);
  }
  return index;
}

export class LogIndex {
  readonly slots: readonly IndexDb[];
  readonly #registry: Database<unknown, string>;
  readonly #logs: LogDb;
  /** Records this thread routed to the newest partition and has not yet counted in the registry. */
  #unsaved = 0;
  /** The registry as last decoded, with its bytes: most reads find it unchanged (reading the bytes costs about 3 µs, decoding them 12). */
  #last: { bytes: Buffer; registry: Registry } | undefined;

  constructor(root: RootDatabase) {
    this.#logs = openLogDb(root);
    this.slots = Array.from({ length: INDEX_SLOTS }, (_, i) => root.openDB<string | null, Key>({ name: i === 0 ? LOG_INDEX_DB : `${LOG_INDEX_DB}@${i}` }));
    this.#registry = root.openDB<unknown, string>({ name: REGISTRY_DB });
    if (this.#registry.get(REGISTRY_KEY) === undefined) {
      this.#registry.transactionSync(() => {
        if (this.#registry.get(REGISTRY_KEY) === undefined) this.#registry.putSync(REGISTRY_KEY, initial(this.#logs));
      });
    }
  }

  /** The partitions, oldest first (a copy). */
  parts(): Part[] {
    return this.#copy().parts;
  }

  /** A value of the registry's database other than the partitions (the backfill's progress). */
  meta<T>(key: string): T | undefined {
    return key === REGISTRY_KEY ? undefined : (this.#registry.get(key) as T | undefined);
  }

  putMeta(key: string, value: unknown): Promise<boolean> {
    if (key === REGISTRY_KEY) throw new Error(`${key} is the registry's own key`);
    return this.#registry.put(key, value);
  }

  /**
   * Inside a write transaction: rolls to a new partition when the newest holds `partSize` records
   * and a slot is free (the batch's smallest id, `minId`, begins it), then routes ids.
   * The newest partition's count is saved to the registry every sixteenth of `partSize` records
   * and at a roll, not with every batch: a registry write per batch is one more page written per
   * commit, and the count only decides when to roll (several processes each add what they wrote).
   */
  beginWrite(minId: string | undefined, partSize: number): IndexWrite {
    const registry = this.#copy();
    const { parts } = registry;
    let newest = parts[parts.length - 1]!;
    let changed = false;
    if (minId !== undefined && newest.records + this.#unsaved >= partSize && minId > newest.first) {
      const slot = freeSlot(parts);
      if (slot !== undefined) {
        newest.records += this.#unsaved;
        this.#unsaved = 0;
        newest = { slot, first: minId, records: 0 };
        parts.push(newest);
        changed = true;
      }
    }
    return new PartitionWrite(this, registry, newest, changed, partSize);
  }

  /** One more record this thread routed to the newest partition ({@link PartitionWrite}). */
  countNewest(): void {
    this.#unsaved++;
  }

  /**
   * Ends a {@link PartitionWrite}: saves the registry, inside the caller's write transaction, when
   * it changed or the newest partition's count is due.
   */
  endWrite(registry: Registry, newest: Part, changed: boolean, partSize: number): void {
    if (!changed && this.#unsaved < partSize / 16) return;
    newest.records += this.#unsaved;
    this.#registry.putSync(REGISTRY_KEY, registry);
    this.#unsaved = 0;
  }

  /**
   * Inside a write transaction (retention's): clears the oldest partitions none of whose records
   * is left, the newest excepted.
   */
  releaseSync(): void {
    const registry = this.#copy();
    const { parts } = registry;
    const live = edgeKey(this.#logs, false);
    const before = parts.length;
    while (parts.length > 1 && (live === undefined || parts[1]!.first <= live)) this.slots[parts.shift()!.slot]!.clearSync();
    if (parts.length < before) this.#registry.putSync(REGISTRY_KEY, registry);
  }

  /** One term's live entries in id order (reversed: newest first), across the partitions. */
  entries(range: TermRange): IndexEntry[] {
    const out: IndexEntry[] = [];
    const limit = range.limit ?? Infinity;
    for (const p of this.#spans(range)) {
      for (const { key, value } of p.db.getRange({ ...p.lmdb, limit: limit - out.length })) out.push({ id: (key as string[])[2]!, ws: value ?? null });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** One term's live entries in [low, high), counted up to `cap` (lmdb's getKeysCount would count the whole range). */
  count(field: string, value: string, low: string, high: string, cap: number): number {
    let n = 0;
    // Forward, without a cursor: each span is [start, end).
    for (const p of this.#spans({ field, value, low, high })) {
      n += countKeys(p.db, p.lmdb.start, p.lmdb.end, cap - n);
      if (n >= cap) break;
    }
    return n;
  }

  /**
   * Each partition's share of a range, in the range's direction: its key range clipped to the
   * partition's ids and to the oldest record kept (entries below it are retention's leftovers).
   */
  *#spans(r: TermRange): Generator<{ db: IndexDb; lmdb: { start: Key; end: Key; reverse: boolean; exclusiveStart: boolean; inclusiveEnd: boolean } }> {
    const live = edgeKey(this.#logs, false);
    if (live === undefined) return;
    const { parts } = this.#stored();
    const key = (id: string): Key => [r.field, r.value, id];
    const reverse = r.reverse === true;
    for (let n = 0; n < parts.length; n++) {
      const i = reverse ? parts.length - 1 - n : n;
      // The partition's ids: [lo, hi).
      const lo = i === 0 ? live : max(parts[i]!.first, live);
      const hi = i === parts.length - 1 ? TOP : parts[i + 1]!.first;
      if (lo >= hi) continue;
      const db = this.slots[parts[i]!.slot]!;
      if (!reverse) {
        let start = r.after ?? r.low;
        let exclusiveStart = r.after !== undefined;
        if (start < lo) [start, exclusiveStart] = [lo, false];
        const end = r.high < hi ? r.high : hi;
        if (start >= end) continue;
        yield { db, lmdb: { start: key(start), end: key(end), reverse, exclusiveStart, inclusiveEnd: false } };
      } else {
        let start = r.after ?? r.high;
        let exclusiveStart = r.after !== undefined;
        if (start >= hi) [start, exclusiveStart] = [hi, true];
        let end = r.low;
        let inclusiveEnd = false;
        if (end < lo) [end, inclusiveEnd] = [lo, true];
        if (start < end || (start === end && (exclusiveStart || !inclusiveEnd))) continue;
        yield { db, lmdb: { start: key(start), end: key(end), reverse, exclusiveStart, inclusiveEnd } };
      }
    }
  }

  /** The registry as stored now (in the caller's write transaction, if any): shared, not to be changed. */
  #stored(): Registry {
    const bytes = this.#registry.getBinary(REGISTRY_KEY);
    // Absent only when another process removed the database: start over as the first open would.
    if (bytes === undefined) return initial(this.#logs);
    if (this.#last !== undefined && bytes.equals(this.#last.bytes)) return this.#last.registry;
    const registry = this.#registry.get(REGISTRY_KEY) as Registry;
    this.#last = { bytes, registry };
    return registry;
  }

  /** The registry to change and save. */
  #copy(): Registry {
    return { parts: this.#stored().parts.map((p) => ({ ...p })) };
  }
}

/**
 * One batch's {@link IndexWrite}. A class rather than closures made per batch: V8 holds a
 * function's optimised code only as long as some closure of it lives, so closures made per batch
 * (the log thread's batches are apart by more than a collection) were compiled again after each
 * full collection and ran unoptimised meanwhile; methods live as long as the class.
 */
class PartitionWrite implements IndexWrite {
  readonly #index: LogIndex;
  readonly #registry: Registry;
  readonly #newest: Part;
  #changed: boolean;
  readonly #partSize: number;

  constructor(index: LogIndex, registry: Registry, newest: Part, changed: boolean, partSize: number) {
    this.#index = index;
    this.#registry = registry;
    this.#newest = newest;
    this.#changed = changed;
    this.#partSize = partSize;
  }

  route(id: string): IndexDb {
    const part = locate(this.#registry.parts, id);
    if (part === this.#newest) this.#index.countNewest();
    else {
      part.records++;
      this.#changed = true;
    }
    return this.#index.slots[part.slot]!;
  }

  end(): void {
    this.#index.endWrite(this.#registry, this.#newest, this.#changed, this.#partSize);
  }
}

/** A store's first registry: its index database so far (slot 0) is the one partition. */
function initial(logs: LogDb): Registry {
  return { parts: [{ slot: 0, first: '', records: countRecords(logs) }] };
}

/** The partition an id belongs to (one older than all: the oldest). New ids are the newest's: searched from there. */
function locate(parts: Part[], id: string): Part {
  for (let i = parts.length - 1; i > 0; i--) if (id >= parts[i]!.first) return parts[i]!;
  return parts[0]!;
}

function freeSlot(parts: readonly Part[]): number | undefined {
  for (let slot = 0; slot < INDEX_SLOTS; slot++) if (!parts.some((p) => p.slot === slot)) return slot;
  return undefined;
}

const max = (a: string, b: string): string => (a > b ? a : b);
