/**
 * Secondary indexes of the `logs` database, in databases of their own, so a filtered list or
 * export reads the matching ids instead of every record.
 *
 *   key  [field, value, id]   → the record's workspace id (or null)
 *        ['model', 'gpt-4o', '0190f3a1-7c2e-7…']
 *
 * Time is the primary key order (ids are UUIDv7), so within one [field, value] the ids are in time
 * order too and a time window is a key range there as well. The entry's value is the record's
 * workspace: a workspace-scoped walk drops other workspaces' entries without reading a record.
 *
 * The entries are kept in partitions by id (log-parts.ts), which retention clears whole once
 * their records are gone. Entries are written with their record in one transaction
 * ({@link writeLogs}). A database written before the indexes existed is backfilled in slices after
 * start (see {@link startBackfill}); until that finishes, indexed queries may miss the older
 * records (the time scan still sees them).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Key } from 'lmdb';
import type { Logger } from '../../core/index.js';
import { edgeKey, type LogDb, type StoredLog } from './log-db.js';
import type { IndexWrite, LogIndex } from './log-parts.js';

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

/** The backfill's progress: in the partitions' registry, and before that under a key of `logs#idx` no field uses. */
export const BACKFILL_META = 'backfill';
const LEGACY_BACKFILL_KEY: Key = ['~backfill'];

/** Values longer than this are indexed by their prefix (the store's key limit is ~4 KB); the record check is exact. */
const MAX_VALUE = 256;

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
 * store full) costs the batch. Never rejects. `partSize`: records per index partition (log-parts.ts).
 */
export function writeLogs(db: LogDb, index: LogIndex, records: readonly StoredLog[], partSize: number): Promise<WriteOutcome> {
  const outcome: WriteOutcome = { failed: 0 };
  return db
    .transaction(() => writeBatch(db, index, records, partSize, outcome))
    .then(
      () => outcome,
      (err: unknown) => ({ failed: records.length, error: err }),
    );
}

/**
 * The body of {@link writeLogs}' transaction, a function of the module rather than the closure
 * handed to lmdb-js: V8 keeps a function's optimised code only while a closure of it lives, and a
 * closure per batch was compiled again (about 60 ms on a compiler thread, its loop meanwhile
 * unoptimised) after each full collection of the log thread, several times a minute under load.
 */
function writeBatch(db: LogDb, index: LogIndex, records: readonly StoredLog[], partSize: number, outcome: WriteOutcome): void {
  // Nothing here throws: lmdb-js would commit what came before a throw (no rollback).
  let write: IndexWrite;
  try {
    write = index.beginWrite(smallestId(records), partSize);
  } catch (err) {
    // The registry unreadable: nothing of the batch is written.
    outcome.failed = records.length;
    outcome.error = err;
    return;
  }
  for (const r of records) {
    try {
      db.putSync(r.id, r);
      const idx = write.route(r.id);
      for (const [field, value] of indexTerms(r)) idx.putSync([field, indexValue(value), r.id], r.workspace_id);
    } catch (err) {
      outcome.failed++;
      outcome.error ??= err;
    }
  }
  try {
    write.end();
  } catch (err) {
    // The records are written; the partition's count is saved with a later batch.
    outcome.error ??= err;
  }
}

function smallestId(records: readonly StoredLog[]): string | undefined {
  let min: string | undefined;
  for (const r of records) if (min === undefined || r.id < min) min = r.id;
  return min;
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

/** The backfill's progress; a store from before partitions kept it in `logs#idx` (slot 0). */
function backfillState(index: LogIndex): BackfillState | undefined {
  const stored = index.meta<BackfillState>(BACKFILL_META) ?? (index.slots[0]!.get(LEGACY_BACKFILL_KEY) as BackfillState | null | undefined);
  return typeof stored === 'object' && stored !== null ? stored : undefined;
}

/**
 * Indexes the records written before the indexes existed, oldest first, a slice at a time.
 * A fresh database (no records, no progress) is marked done at once. Idempotent: a slice that
 * runs twice (a stop between write and progress) puts the same entries again.
 */
export function startBackfill(db: LogDb, index: LogIndex, log: Logger): Backfill {
  let stopped = false;
  const state = backfillState(index);
  if (state?.done === true) {
    // Carried over from `logs#idx`, which retention clears once its records are gone.
    const finished = index.meta(BACKFILL_META) === undefined ? saveProgress(index, state, log) : Promise.resolve();
    return { stop: () => undefined, finished };
  }
  if (state === undefined && edgeKey(db, false) === undefined) return { stop: () => undefined, finished: saveProgress(index, { cursor: null, done: true }, log) };
  // Records from now on are indexed as they are written; the backfill stops at the last older one.
  const until = edgeKey(db, true);
  const finished = (async () => {
    let cursor = state?.cursor ?? null;
    let count = 0;
    while (!stopped) {
      const range = cursor === null ? { limit: SLICE } : { start: cursor, exclusiveStart: true, limit: SLICE };
      // What the slice's transaction did (a holder: tsc does not follow assignments in the callback).
      const slice = { last: null as string | null, n: 0 };
      await db.transaction(() => {
        const write = index.beginWrite(undefined, Infinity);
        for (const { key, value } of db.getRange(range)) {
          const id = key as string;
          if (until !== undefined && id > until) break;
          const idx = write.route(id);
          for (const [field, v] of indexTerms(value)) idx.putSync([field, indexValue(v), id], value.workspace_id);
          slice.last = id;
          slice.n++;
        }
        write.end();
      });
      const { last, n } = slice;
      count += n;
      const done = n < SLICE || last === null || (until !== undefined && last >= until);
      cursor = last ?? cursor;
      await index.putMeta(BACKFILL_META, { cursor, done });
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

function saveProgress(index: LogIndex, state: BackfillState, log: Logger): Promise<void> {
  return index.putMeta(BACKFILL_META, state).then(
    () => undefined,
    (err: unknown) => log.error('log index backfill failed', { err }),
  );
}
