/**
 * Secondary indexes of the `logs` database, in a sub-database of their own (`logs#idx`), so a
 * filtered list or export reads the matching ids instead of every record.
 *
 *   key  [field, value, id]   → the record's workspace id (or null)
 *        ['model', 'gpt-4o', '0190f3a1-7c2e-7…']
 *
 * Time is the primary key order (ids are UUIDv7), so within one [field, value] the ids are in time
 * order too and a time window is a key range there as well. The entry's value is the record's
 * workspace: a workspace-scoped walk drops other workspaces' entries without reading a record.
 *
 * Entries are written with their record in one transaction ({@link writeLogs}) and removed with it
 * by retention. A database written before the
 * indexes existed is backfilled in slices after start (see {@link startBackfill}); until that
 * finishes, indexed queries may miss the older records (the time scan still sees them).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database, Key } from 'lmdb';
import type { Logger, Store } from '../../core/index.js';
import { LOGS_DB, type LogDb, type StoredLog } from './log-db.js';

/** The indexed fields, by their short key name. */
export const INDEXED = {
  workspace: 'ws',
  status: 'st',
  model: 'md',
  provider: 'pv',
  api_key_id: 'ak',
  trace_id: 'tr',
} as const;

export type IndexField = (typeof INDEXED)[keyof typeof INDEXED];

/** Index entries hold a workspace id (or null); one key holds the backfill's progress. */
export type IndexDb = Database<string | null | BackfillState, Key>;

export const LOG_INDEX_DB = `${LOGS_DB}#idx`;

/** The backfill's progress, under a key no field uses. */
const BACKFILL_KEY: Key = ['~backfill'];

/** Values longer than this are indexed by their prefix (the store's key limit is ~4 KB); the record check is exact. */
const MAX_VALUE = 256;

export function openLogIndex(store: Store): IndexDb {
  return store.root.openDB<string | null | BackfillState, Key>({ name: LOG_INDEX_DB });
}

/**
 * Statuses 200–299 are not indexed: they are most records, so a walk through their entries would
 * read about as much as the time order, and leaving them out saves a write per request.
 */
export const statusIndexed = (status: number | string): boolean => {
  const n = Number(status);
  return !(n >= 200 && n < 300);
};

/**
 * True when a walk through [field, value] entries finds every record with that value. A status
 * 2xx has no entries; a trace id has entries only where it differs from the record's own id (a
 * request without a client trace id is traced under its id), and the walk adds that record itself.
 */
export function termIndexed(field: IndexField, value: string): boolean {
  return field !== INDEXED.status || statusIndexed(value);
}

/**
 * The [field, value] pairs a record is indexed under (null fields are not indexed, nor a 2xx
 * status, nor a trace id equal to the record's id: see {@link termIndexed}).
 */
export function indexTerms(r: StoredLog): Array<[IndexField, string]> {
  const out: Array<[IndexField, string]> = [];
  if (statusIndexed(r.status)) out.push([INDEXED.status, String(r.status)]);
  if (r.workspace_id !== null) out.push([INDEXED.workspace, r.workspace_id]);
  if (r.model !== null) out.push([INDEXED.model, r.model]);
  if (r.provider !== null) out.push([INDEXED.provider, r.provider]);
  if (r.api_key_id !== null) out.push([INDEXED.api_key_id, r.api_key_id]);
  if (r.trace_id !== r.id) out.push([INDEXED.trace_id, r.trace_id]);
  return out;
}

/** What records written before sparse entries were indexed under: every status and trace id. */
function legacyTerms(r: StoredLog): Array<[IndexField, string]> {
  const out = indexTerms(r);
  if (!statusIndexed(r.status)) out.push([INDEXED.status, String(r.status)]);
  if (r.trace_id === r.id) out.push([INDEXED.trace_id, r.trace_id]);
  return out;
}

/**
 * Where sparse entries begin: the first record id indexed without its 2xx status and own trace
 * id. Older records may still have those entries, which their removal takes too.
 */
const SPARSE_KEY: Key = ['~sparse'];
const sparseSince = new WeakMap<IndexDb, string | undefined>();

/**
 * Where sparse entries begin in this database, read once per process; undefined before the first
 * sparse write (then every record is removed with its legacy entries too, which is always safe).
 */
function sparseStart(idx: IndexDb): string | undefined {
  if (sparseSince.has(idx)) return sparseSince.get(idx);
  const stored = idx.get(SPARSE_KEY);
  const since = typeof stored === 'string' ? stored : undefined;
  sparseSince.set(idx, since);
  return since;
}

/** The entries a stored record may have: its own terms, and the legacy ones for records from before sparse entries. */
function storedTerms(idx: IndexDb, r: StoredLog): Array<[IndexField, string]> {
  const since = sparseStart(idx);
  return since === undefined || r.id < since ? legacyTerms(r) : indexTerms(r);
}

/** The index value of a filter value: what {@link indexTerms} stored for it. */
export const indexValue = (value: string): string => value.slice(0, MAX_VALUE);

/** What a {@link writeLogs} batch cost: the records not written, and the first error. */
export interface WriteOutcome {
  failed: number;
  error?: unknown;
}

/**
 * Records and their index entries in one write transaction, written inside its callback with no
 * write queue and no promise per entry (which cost more than the writes: `bench/ab.sh`, closing
 * note of issue 13). The transaction is lmdb-js's asynchronous one: its commit (and fsync) is made
 * off the calling thread, and batches that arrive meanwhile share the next commit. A record LMDB
 * refuses (a key past its size limit, say) costs only itself; a transaction that cannot commit (the
 * store full) costs the batch. Never rejects.
 */
export function writeLogs(db: LogDb, idx: IndexDb, records: readonly StoredLog[]): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { failed: 0 };
  return db
    .transaction(() => {
      // Nothing here throws: lmdb-js would commit what came before a throw (no rollback).
      for (const r of records) {
        try {
          putLogSync(db, idx, r);
        } catch (err) {
          outcome.failed++;
          outcome.error ??= err;
        }
      }
    })
    .then(
      () => outcome,
      (err: unknown) => {
        // What the transaction marked is read again from the database.
        sparseSince.delete(idx);
        return { failed: records.length, error: err };
      },
    );
}

/** A record and its index entries, inside the caller's write transaction (see {@link writeLogs}). Throws what LMDB throws. */
function putLogSync(db: LogDb, idx: IndexDb, r: StoredLog): void {
  if (sparseSince.get(idx) === undefined && sparseStart(idx) === undefined) {
    idx.putSync(SPARSE_KEY, r.id);
    sparseSince.set(idx, r.id);
  }
  db.putSync(r.id, r);
  for (const [field, value] of indexTerms(r)) idx.putSync([field, indexValue(value), r.id], r.workspace_id);
}

/**
 * Removes a record and its index entries, inside the caller's write transaction (retention.ts
 * `sweep`): no write queue and no promise per entry, as for {@link writeLogs}. Index entries go
 * first, so a throw between them leaves the record findable by its id rather than an entry
 * pointing at nothing. Throws what LMDB throws.
 */
export function removeLogSync(db: LogDb, idx: IndexDb, r: StoredLog): void {
  for (const [field, value] of storedTerms(idx, r)) idx.removeSync([field, indexValue(value), r.id]);
  db.removeSync(r.id);
}

/** The first (or last) key of a database, without reading further. */
function edgeKey(db: LogDb, reverse: boolean): string | undefined {
  for (const key of db.getKeys({ reverse, limit: 1 })) return key;
  return undefined;
}

export interface BackfillState {
  /** The last record id indexed; null before the first slice. */
  cursor: string | null;
  done: boolean;
}

const SLICE = 500;
/** Pause between slices: the backfill takes a small share of the event loop and the writer. */
const PAUSE_MS = 5;

export interface Backfill {
  stop(): void;
  /** Resolves when the backfill finished or was stopped. */
  readonly finished: Promise<void>;
}

/**
 * Indexes the records written before the indexes existed, oldest first, a slice at a time.
 * A fresh database (no records, no progress) is marked done at once. Idempotent: a slice that
 * runs twice (a stop between write and progress) puts the same entries again.
 */
export function startBackfill(db: LogDb, idx: IndexDb, log: Logger): Backfill {
  let stopped = false;
  const stored = idx.get(BACKFILL_KEY);
  const state = typeof stored === 'object' && stored !== null ? stored : undefined;
  if (state?.done === true) return { stop: () => undefined, finished: Promise.resolve() };
  if (state === undefined && edgeKey(db, false) === undefined) {
    const finished = idx.put(BACKFILL_KEY, { cursor: null, done: true }).then(
      () => undefined,
      (err: unknown) => log.error('log index backfill failed', { err }),
    );
    return { stop: () => undefined, finished };
  }
  // Records from now on are indexed as they are written; the backfill stops at the last older one.
  const until = edgeKey(db, true);
  const finished = (async () => {
    let cursor = state?.cursor ?? null;
    let count = 0;
    while (!stopped) {
      const range = cursor === null ? { limit: SLICE } : { start: cursor, exclusiveStart: true, limit: SLICE };
      let last: string | null = null;
      let n = 0;
      const writes: Array<Promise<boolean>> = [];
      for (const { key, value } of db.getRange(range)) {
        const id = key as string;
        if (until !== undefined && id > until) break;
        const ws = value.workspace_id;
        for (const [field, v] of indexTerms(value)) writes.push(idx.put([field, indexValue(v), id], ws));
        last = id;
        n++;
      }
      await Promise.all(writes);
      count += n;
      const done = n < SLICE || last === null || (until !== undefined && last >= until);
      await idx.put(BACKFILL_KEY, { cursor: last ?? cursor, done });
      cursor = last ?? cursor;
      if (done) {
        log.info('log indexes backfilled', { records: count });
        return;
      }
      await sleep(PAUSE_MS);
    }
  })().catch((err: unknown) => log.error('log index backfill failed', { err }));
  return {
    stop: () => {
      stopped = true;
    },
    finished,
  };
}
