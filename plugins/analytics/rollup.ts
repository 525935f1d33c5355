/**
 * Rollups as requests finish: each request is added to an in-memory bucket (no I/O), and every
 * `flush_ms` the buckets are added to LMDB in one write transaction (in distributed mode, to
 * PostgreSQL in one additive upsert instead: pg-store.ts; the fold is the same).
 *
 *   onDone ─▶ add() ─▶ pending: Map<key, bucket>            (this process, this flush interval)
 *                         │ every flush_ms, and on close
 *                         ▼
 *             one transaction: for each bucket, stored += pending, in
 *               analytics_minutes, analytics_minute_users   [ws, minute, …dims]
 *               analytics_hours, analytics_hour_users       [ws, hour's first minute, …dims]
 *               (long ranges read the hours)
 *
 * Read-modify-write of additive counts: every process sharing the data dir adds its own, and
 * none is lost, whatever the order. The transaction is lmdb's asynchronous one: the callback runs
 * on the main thread inside the write transaction (so the read and the write are atomic), but the
 * event loop never waits for another process's write lock or for the commit's fsync.
 *
 * Reads do not wait for a flush: they fold the stored buckets and the pending ones (live.ts), and
 * `generation` / `settled()` let them tell whether a batch moved from one to the other meanwhile.
 *
 * Bounds: a request whose metadata would make more than `max_metadata_sets` distinct sets in one
 * workspace-minute of this process is counted without its metadata (every other dimension stays
 * exact); a pending map that grows past MAX_PENDING is flushed at once.
 */
import type { Database, RootDatabase } from 'lmdb';
import { PROMPT_METADATA_KEY, type LogRecord, type Logger } from '../../core/index.js';
import { addRequest, emptyBucket, emptyUsers, mergeBucket, mergeUsers, metadataDimension, type Bucket, type BucketKey, type UserCounts } from './bucket.js';

/** Pending buckets before a flush is forced (a burst of high-cardinality traffic). */
const MAX_PENDING = 20_000;

/** A minute and an hour database of one kind of value, keyed alike. */
export interface Tier<V> {
  minutes: Database<V, BucketKey>;
  hours: Database<V, BucketKey>;
}

export interface BucketDbs {
  buckets: Tier<Bucket>;
  users: Tier<UserCounts>;
}

export type BucketDb = Database<unknown, BucketKey>;

/**
 * Shared msgpack structures: every value of a database has the same shape, so its field names
 * are stored once and decoding is ~5× faster (a 30-day graph decodes thousands of buckets).
 */
function openTier<V>(root: RootDatabase, minutes: string, hours: string): Tier<V> {
  const open = (name: string): Database<V, BucketKey> => root.openDB<V, BucketKey>({ name, sharedStructuresKey: Symbol.for('structures') });
  return { minutes: open(minutes), hours: open(hours) };
}

export function openBucketDbs(root: RootDatabase): BucketDbs {
  return {
    buckets: openTier<Bucket>(root, 'analytics_minutes', 'analytics_hours'),
    users: openTier<UserCounts>(root, 'analytics_minute_users', 'analytics_hour_users'),
  };
}

export interface RollupOptions {
  flush_ms: number;
  max_metadata_sets: number;
}

/**
 * What `add` needs besides the record. `provider` and `model`, when given, replace the record's
 * as the bucket's key values (MCP calls: see bucket.ts `mcpDimensions`), already bounded.
 */
export interface AddFacts {
  error: boolean;
  fallback: boolean;
  provider?: string;
  model?: string;
  /** The record's `created_at` in ms, when the caller has it (`logRecordAt`): saves parsing the string. */
  at?: number;
}

export interface Rollup {
  add(record: LogRecord, facts: AddFacts): void;
  /** Writes what is pending; resolves once it is committed. */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Counts the flushes handed to the storage: a read that saw it unchanged saw no flush start. */
  readonly generation: number;
  /** Resolves once no flush is being written (every batch handed over so far is committed, or failed). */
  settled(): Promise<void>;
  /** Visits every bucket not flushed yet (minute keys; the values are live: read them, do not keep them). */
  unflushed(visit: (entry: PendingBucket) => void): void;
}

/** What a flush hands to the storage: this process's counts of one bucket since the last flush. */
export interface PendingBucket {
  key: BucketKey;
  bucket: Bucket;
  users: UserCounts;
}

interface Pending extends PendingBucket {
  /** user → position in `users` */
  userIndex: Map<string, number>;
}

/** Adds a flush's buckets to the storage (stored += pending); resolves once committed. */
export type RollupWrite = (batch: PendingBucket[]) => Promise<void>;

export const minuteOf = (ms: number): number => Math.floor(ms / 60_000);
export const hourOf = (minute: number): number => minute - (minute % 60);

/** True when a bucket's key has these values (compared one by one: no identity string is built). */
function sameBucket(key: BucketKey, workspace: string, minute: number, provider: string, model: string, status: number, cache: string, apiKey: string, metadata: string): boolean {
  return key[1] === minute && key[4] === status && key[0] === workspace && key[2] === provider && key[3] === model && key[5] === cache && key[6] === apiKey && key[7] === metadata;
}

export function createRollup(root: RootDatabase, dbs: BucketDbs, options: RollupOptions, log: Logger): Rollup {
  return createRollupWith(lmdbWrite(root, dbs), options, log);
}

/** The embedded storage of rollups: one LMDB transaction per flush (see the top of this file). */
export function lmdbWrite(root: RootDatabase, dbs: BucketDbs): RollupWrite {
  return (batch) =>
    root.transaction(() => {
      for (const { key, bucket, users } of batch) {
        const hourKey: BucketKey = [...key];
        hourKey[1] = hourOf(key[1]);
        // Fresh copies: the same pending values are added to the minute and the hour database.
        addStored(dbs.buckets.minutes, key, (stored) => mergeBucket(stored ?? emptyBucket(), bucket));
        addStored(dbs.buckets.hours, hourKey, (stored) => mergeBucket(stored ?? emptyBucket(), bucket));
        if (users.names.length === 0 && users.over === 0) continue;
        addStored(dbs.users.minutes, key, (stored) => mergeUsers(stored ?? emptyUsers(), users));
        addStored(dbs.users.hours, hourKey, (stored) => mergeUsers(stored ?? emptyUsers(), users));
      }
    }).then(() => undefined);
}

/** The in-memory fold of a process, flushed through `write` (LMDB, or PostgreSQL in distributed mode). */
export function createRollupWith(write: RollupWrite, options: RollupOptions, log: Logger): Rollup {
  let pending = new Map<string, Pending>();
  /**
   * The bucket the previous request went to, if still pending: steady traffic goes to the same
   * bucket request after request, and finding it by its fields builds no identity string.
   */
  let last: Pending | undefined;
  /** Distinct metadata sets per `workspace minute` in this process (the cardinality bound). */
  let metadataSets = new Map<string, Set<string>>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let generation = 0;

  function metadataOf(record: LogRecord, workspace: string, minute: number): string {
    // A request rendered from a stored prompt keeps the prompt beside its metadata (`_prompt`).
    const dimension = metadataDimension(record.prompt_slug === undefined ? record.metadata : { ...record.metadata, [PROMPT_METADATA_KEY]: record.prompt_slug });
    if (dimension === '') return '';
    const slot = `${minute} ${workspace}`;
    let seen = metadataSets.get(slot);
    if (seen === undefined) metadataSets.set(slot, (seen = new Set()));
    if (seen.has(dimension)) return dimension;
    if (seen.size >= options.max_metadata_sets) return '';
    seen.add(dimension);
    return dimension;
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return writing;
    const batch = [...pending.values()];
    pending = new Map();
    last = undefined;
    // Only the current minute can still get new metadata sets; older slots are done.
    const current = minuteOf(Date.now());
    const kept = new Map<string, Set<string>>();
    for (const [slot, seen] of metadataSets) if (Number(slot.slice(0, slot.indexOf(' '))) >= current - 1) kept.set(slot, seen);
    metadataSets = kept;
    generation++;
    const done = write(batch);
    writing = done.then(
      () => undefined,
      (err: unknown) => log.error('analytics flush failed; these counts are lost', { err, buckets: batch.length }),
    );
    return writing;
  }

  return {
    add(record, facts) {
      const workspace = record.workspace_id ?? '';
      const at = facts.at ?? Date.parse(record.created_at);
      const minute = minuteOf(at);
      const provider = facts.provider ?? (record.provider ?? '').slice(0, 64);
      const model = facts.model ?? (record.model ?? '').slice(0, 128);
      const apiKey = record.api_key_id ?? '';
      const metadata = metadataOf(record, workspace, minute);
      let entry = last !== undefined && sameBucket(last.key, workspace, minute, provider, model, record.status, record.cache_status, apiKey, metadata) ? last : undefined;
      if (entry === undefined) {
        // The bucket's identity, length-prefixed so that no two keys collide; the key array itself
        // is made only for a new bucket.
        const id = `${workspace.length}:${workspace}${minute}|${provider.length}:${provider}${model.length}:${model}${record.status}|${record.cache_status}|${apiKey.length}:${apiKey}${metadata}`;
        entry = pending.get(id);
        if (entry === undefined) {
          const key: BucketKey = [workspace, minute, provider, model, record.status, record.cache_status, apiKey, metadata];
          pending.set(id, (entry = { key, bucket: emptyBucket(), users: emptyUsers(), userIndex: new Map() }));
        }
        last = entry;
      }
      addRequest(entry.bucket, entry.users, entry.userIndex, record, at, facts.error, facts.fallback);
      if (pending.size >= MAX_PENDING) {
        void flush();
        return;
      }
      if (timer === undefined) {
        timer = setTimeout(flush, options.flush_ms);
        timer.unref();
      }
    },
    flush,
    async close() {
      await flush();
    },
    get generation() {
      return generation;
    },
    async settled() {
      // A flush may start while the previous one commits: wait until the last one handed over is done.
      for (let seen = writing; ; seen = writing) {
        await seen;
        if (seen === writing) return;
      }
    },
    unflushed(visit) {
      for (const entry of pending.values()) visit(entry);
    },
  };
}

/** stored += pending (inside the write transaction, so the read sees every earlier commit). */
function addStored<V>(db: Database<V, BucketKey>, key: BucketKey, add: (stored: V | undefined) => V): void {
  void db.put(key, add(db.get(key)));
}
