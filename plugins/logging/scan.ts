/**
 * Reading a database of UUIDv7-keyed records without holding the event loop.
 *
 * Ids are UUIDv7: the first 48 bits are the creation time in ms, so a time window is a key range
 * and key order is time order. A scan walks the range in chunks of synchronous reads (one short
 * read transaction each) and yields to the event loop between them, so a query over a million
 * records never stalls live traffic for longer than one chunk.
 *
 *   key  0190f3a1-7c2e-7…   ─┐ idPrefix(ms) = first 12 hex digits, dash included
 *        0190f3a1-7c2f-7…    │ forward: oldest first; reverse: newest first
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The part of an lmdb Database a scan needs (keeps the scanner testable and typed). */
export interface RangeSource<T> {
  getRange(options: { start?: string; end?: string; reverse?: boolean; limit?: number; exclusiveStart?: boolean }): Iterable<{ key: unknown; value: T }>;
}

const CHUNK = 1000;

/**
 * How far an id's time may sit from the record's `created_at`: both are taken at the request's
 * start, but `uuidv7` runs ahead of the clock by a few ms under bursts (monotonic ids). Key
 * bounds are widened by this much; the exact time filter runs on `created_at`.
 */
export const ID_SLACK_MS = 60_000;

/** The key prefix of ids made at `ms`: ids of that millisecond sort after it, earlier ones before. */
export function idPrefix(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}`;
}

export interface ScanRange {
  /** Keys greater than this (an {@link idPrefix}), or from the first key. */
  low?: string;
  /** Keys less than this, or up to the last key. */
  high?: string;
  newestFirst: boolean;
  /** Checked between chunks: an aborted scan ends early. */
  signal?: AbortSignal;
}

/** The key range of records created between `fromMs` and `toMs` (either open), with slack. */
export function timeRange(fromMs: number | undefined, toMs: number | undefined): { low?: string; high?: string } {
  const out: { low?: string; high?: string } = {};
  if (fromMs !== undefined) out.low = idPrefix(fromMs - ID_SLACK_MS);
  if (toMs !== undefined) out.high = idPrefix(toMs + ID_SLACK_MS + 1);
  return out;
}

/**
 * The records of a key range, in chunks, yielding to the event loop between chunks.
 *
 * @example
 *   for await (const chunk of scan(db, { newestFirst: true })) for (const r of chunk) …
 */
export async function* scan<T>(db: RangeSource<T>, range: ScanRange): AsyncGenerator<T[]> {
  let cursor: string | undefined;
  for (;;) {
    if (range.signal?.aborted) return;
    const options = range.newestFirst
      ? { reverse: true, start: cursor ?? range.high, end: range.low, limit: CHUNK, exclusiveStart: cursor !== undefined }
      : { start: cursor ?? range.low, end: range.high, limit: CHUNK, exclusiveStart: cursor !== undefined };
    const chunk: T[] = [];
    for (const { key, value } of db.getRange(options)) {
      cursor = key as string;
      chunk.push(value);
    }
    if (chunk.length > 0) yield chunk;
    if (chunk.length < CHUNK) return;
    await nextTurn();
  }
}
