/**
 * Reading the logs through their indexes: the list route and the exports describe what they
 * want (equality terms, a workspace, an id window, a direction, a predicate) and this walks the
 * cheapest path to it, in slices that yield to the event loop.
 *
 *   terms ──probe each (bounded key count in the window)──▶ the smallest one
 *     └ none: the primary key order (time) itself
 *   walk its ids (several values: merged in id order) ─▶ workspace check on the index entry
 *     ─▶ read the record ─▶ the full predicate ─▶ chunks of records
 *
 * Every term is also in the predicate, so the index only narrows, it never decides: a stale or
 * missing entry can hide a record (until the backfill ends) but never show a wrong one.
 */
import type { LogDb, StoredLog } from './log-db.js';
import { INDEXED, indexValue, termIndexed, type IndexField } from './log-index.js';
import { TOP, type LogIndex } from './log-parts.js';

/** `field` equals one of `values`. */
export interface Term {
  field: IndexField;
  values: ReadonlyArray<string>;
}

export interface LogQuery {
  /** All must hold (each is also checked by `match`); the most selective one drives the walk. */
  terms: ReadonlyArray<Term>;
  /** Records of this workspace only, checked on the index entry before the record is read. */
  workspaceId?: string;
  /** Ids greater than this (an id or an id prefix). */
  low?: string;
  /** Ids less than this. */
  high?: string;
  newestFirst: boolean;
  /** The whole filter, on the record. */
  match(r: StoredLog): boolean;
  signal?: AbortSignal;
  /** Stop after visiting this many entries (`exhausted` stays false; `lastId` says where). */
  budget?: number;
}

/** How far a walk went; the caller reads it after (or while) iterating. */
export interface WalkState {
  /** Index entries or records looked at. */
  visited: number;
  /** The id of the last entry looked at: where a later walk resumes (exclusive). */
  lastId: string | undefined;
  /** The walk reached the end of its window. */
  exhausted: boolean;
  /** The index it walked, or `time` for the primary order. */
  path: string;
}

export interface LogSources {
  db: LogDb;
  idx: LogIndex;
}

/** A term with more values than this is not used as the walk's index (the merge would be wide). */
export const MAX_MERGE = 32;
/** Keys counted per term to compare selectivity. */
const PROBE = 2_000;
/** A slice: at most this many entries, and at most SLICE_MS of the event loop. */
const SLICE = 512;
const SLICE_MS = 2;
/** Entries per synchronous range read: the first is small (a page needs a few), then larger. */
const FIRST_READ = 64;
const READ = 256;

interface Entry {
  id: string;
  /** The record's workspace, when the entry is an index entry. */
  ws?: string | null;
  /** The record, when the entry comes from the primary order. */
  record?: StoredLog;
}

/** Ids of one source in the walk's direction, read a bounded range at a time. */
interface Stream {
  head(): Entry | undefined;
  advance(): void;
}

/**
 * A stream over bounded reads: `read(after, size)` returns the next entries after the id `after`
 * (from the start when undefined); a short read is the end. The first read is small (a first page
 * is usually all a list needs), later ones larger.
 */
function chunkedStream(read: (after: string | undefined, size: number) => Entry[]): Stream {
  let buf: Entry[] = [];
  let pos = 0;
  let done = false;
  let size = FIRST_READ;
  return {
    head() {
      if (pos >= buf.length) {
        if (done) return undefined;
        buf = read(buf[buf.length - 1]?.id, size);
        pos = 0;
        if (buf.length < size) done = true;
        size = READ;
      }
      return buf[pos];
    },
    advance() {
      pos++;
    },
  };
}

function indexStream(idx: LogIndex, field: IndexField, value: string, q: LogQuery): Stream {
  const range = { field, value: indexValue(value), low: q.low ?? '', high: q.high ?? TOP, reverse: q.newestFirst };
  const entries = chunkedStream((after, limit) => idx.entries({ ...range, after, limit }));
  // A trace id that is its record's own id has no entry (log-index.ts): that record is walked too.
  return field === INDEXED.trace_id ? merged([entries, single(value)], q.newestFirst) : entries;
}

/** One id (the record is read and matched like any other entry). */
function single(id: string): Stream {
  let done = false;
  return {
    head: () => (done ? undefined : { id }),
    advance() {
      done = true;
    },
  };
}

function primaryStream(db: LogDb, q: LogQuery): Stream {
  return chunkedStream((cursor, size) => {
    const range = q.newestFirst
      ? { start: cursor ?? q.high, end: q.low, reverse: true, limit: size, exclusiveStart: cursor !== undefined }
      : { start: cursor ?? q.low, end: q.high, limit: size, exclusiveStart: cursor !== undefined };
    const out: Entry[] = [];
    for (const { key, value } of db.getRange(range)) out.push({ id: key as string, record: value });
    return out;
  });
}

/** Several streams as one, in id order (newest first: the greatest id first). */
function merged(streams: Stream[], newestFirst: boolean): Stream {
  if (streams.length === 1) return streams[0]!;
  let best: Stream | undefined;
  const pick = (): Stream | undefined => {
    best = undefined;
    let bestId: string | undefined;
    for (const s of streams) {
      const h = s.head();
      if (h === undefined) continue;
      if (bestId === undefined || (newestFirst ? h.id > bestId : h.id < bestId)) {
        best = s;
        bestId = h.id;
      }
    }
    return best;
  };
  return {
    head: () => pick()?.head(),
    advance() {
      (best ?? pick())?.advance();
      best = undefined;
    },
  };
}

/** Index keys of `term` in the query's window, counted up to `cap`. */
function probe(idx: LogIndex, term: Term, q: LogQuery, cap: number): number {
  // A trace id may also be a record's own id, found without an entry.
  let n = term.field === INDEXED.trace_id ? term.values.length : 0;
  for (const value of term.values) {
    const v = indexValue(value);
    n += idx.count(term.field, v, q.low ?? '', q.high ?? TOP, cap - n);
    if (n >= cap) break;
  }
  return n;
}

/** The term whose index walk visits the fewest entries, or undefined for the time order. */
export function choosePath(idx: LogIndex, q: LogQuery): Term | undefined {
  let best: Term | undefined;
  let bestCount = Infinity;
  for (const term of q.terms) {
    if (term.values.length === 0 || term.values.length > MAX_MERGE) continue;
    // A value without entries (a 2xx status) cannot lead a walk: it would miss its records.
    if (term.values.some((v) => !termIndexed(term.field, v))) continue;
    const n = probe(idx, term, q, Math.min(PROBE, bestCount));
    if (n < bestCount) {
      best = term;
      bestCount = n;
    }
    if (n === 0) break;
  }
  return best;
}

/**
 * Turns for walks: however many walks run (four exports and a list), one slice runs per turn of
 * the event loop, so their total share of a turn stays one slice and requests between them wait
 * at most that long. Waiters are released first come, first served, one per check phase.
 */
const waiters: Array<() => void> = [];
let pumping = false;

function pump(): void {
  waiters.shift()?.();
  if (waiters.length > 0) setImmediate(pump);
  else pumping = false;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiters.push(resolve);
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  });
}

/**
 * The records matching the query, in chunks, in the query's direction. Waits for a turn before
 * each slice (SLICE entries or SLICE_MS, whichever first); `state` tells how far it went.
 * A consumer that stops iterating stops the walk.
 */
export async function* queryLogs(src: LogSources, q: LogQuery, state: WalkState): AsyncGenerator<StoredLog[]> {
  const term = choosePath(src.idx, q);
  state.path = term?.field ?? 'time';
  const stream = term === undefined ? primaryStream(src.db, q) : merged(term.values.map((v) => indexStream(src.idx, term.field, v, q)), q.newestFirst);
  const ws = q.workspaceId;
  const budget = q.budget ?? Infinity;
  for (let first = true; ; first = false) {
    // The first slice runs at once: a short list answers without waiting behind exports.
    if (!first) await nextTurn();
    if (q.signal?.aborted) return;
    const out: StoredLog[] = [];
    const start = performance.now();
    for (let i = 0; i < SLICE; i++) {
      if (state.visited >= budget) {
        if (out.length > 0) yield out;
        return;
      }
      const e = stream.head();
      if (e === undefined) {
        state.exhausted = true;
        if (out.length > 0) yield out;
        return;
      }
      stream.advance();
      // The same id twice in a row (a trace id that is its record's id and has an older entry too) is read once.
      if (e.id === state.lastId) continue;
      state.visited++;
      state.lastId = e.id;
      // Key bounds are exact only for whole ids; a prefix bound or a cursor may let its own id in.
      if ((q.high !== undefined && e.id >= q.high) || (q.low !== undefined && e.id <= q.low)) continue;
      if (e.ws !== undefined && ws !== undefined && e.ws !== ws) continue;
      // A record removed since its index entry was read (retention) is skipped.
      const r = e.record ?? src.db.get(e.id);
      if (r !== undefined && q.match(r)) out.push(r);
      if ((i & 15) === 15 && performance.now() - start > SLICE_MS) break;
    }
    if (out.length > 0) yield out;
  }
}

export const newWalkState = (): WalkState => ({ visited: 0, lastId: undefined, exhausted: false, path: 'time' });
