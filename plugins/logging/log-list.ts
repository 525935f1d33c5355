/**
 * GET /v1/logs: one page of records, newest first, read through the most selective index, with
 * bounded work whatever the filters and however many records there are.
 *
 *   page      `page_size` records after skipping `current_page × page_size` matches, from the
 *             start or from `cursor` (the `next_cursor` of the page before: the id the walk
 *             stopped at, opaque to the caller);
 *   total     the matches from the cursor on (all of them without one). From the index alone
 *             when the filter is at most one indexed field besides the workspace, with no time
 *             bounds and no metadata (exact up to EXACT_BOUND, and always for no filter at all);
 *             otherwise counted while walking, past the page up to TOTAL_BOUND more matches or
 *             COUNT_MS. `total_exact` says whether it is exact; if not, it is a lower bound;
 *   has_more  more matches may follow; `next_cursor` continues after this page (null at the end).
 *
 * The walk visits at most VISIT_BUDGET entries: a filter that matches almost nothing in a huge
 * window answers a short (or empty) page with `has_more` and a cursor where it stopped, instead
 * of reading every record.
 */
import { S, type Records } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { countKeys, countRecords } from './log-db.js';
import { logFilter, type LogFilter, type LogListQuery } from './log-filters.js';
import { INDEXED, termIndexed } from './log-index.js';
import { MAX_MERGE, newWalkState, queryLogs, type LogSources } from './log-query.js';
import { TOP } from './log-parts.js';
import { timeRange } from './scan.js';
import { logSchema } from './views.js';

/** Matches counted past the page for `total` before the walk stops counting. */
export const TOTAL_BOUND = 1_000;
/** Past the page, the walk counts for at most this long. */
const COUNT_MS = 10;
/** Index entries an index count reads; past it the count is a lower bound. */
export const EXACT_BOUND = 2_000;
/** Entries one request may visit, counting included. */
export const VISIT_BUDGET = 100_000;

export const logListSchema: S.JsonSchema = {
  type: 'object',
  properties: {
    object: { type: 'string', const: 'list' },
    total: { type: 'integer' },
    total_exact: { type: 'boolean' },
    has_more: { type: 'boolean' },
    next_cursor: { type: 'string', nullable: true },
    data: { type: 'array', items: logSchema },
  },
  required: ['object', 'total', 'total_exact', 'has_more', 'next_cursor', 'data'],
};

export interface LogPage {
  object: 'list';
  total: number;
  total_exact: boolean;
  has_more: boolean;
  next_cursor: string | null;
  data: StoredLog[];
}

export interface ListLimits {
  visit: number;
  total: number;
}

export async function listLogs(src: LogSources, query: LogListQuery, workspace: Records.Workspace | null, limits: ListLimits = { visit: VISIT_BUDGET, total: TOTAL_BOUND }): Promise<LogPage> {
  const filter = logFilter(query, workspace);
  const range = timeRange(filter.fromMs, filter.toMs);
  const high = query.cursor !== undefined && (range.high === undefined || query.cursor < range.high) ? query.cursor : range.high;
  const offset = query.current_page * query.page_size;
  const pageEnd = offset + query.page_size;
  const count = indexCount(src, filter, high);
  const counted = count?.exact === true ? count.n : undefined;
  const state = newWalkState();
  const data: StoredLog[] = [];
  let matched = 0;
  // With an exact count the walk only fills the page; without one it counts on past it, briefly.
  const stopAt = counted !== undefined ? pageEnd : pageEnd + limits.total;
  const walk = queryLogs(src, { terms: filter.terms, workspaceId: filter.workspaceId, low: range.low, high, newestFirst: true, match: filter.match, budget: limits.visit }, state);
  let countUntil = Infinity;
  if (stopAt > 0) {
    outer: for await (const chunk of walk) {
      for (const record of chunk) {
        matched++;
        if (matched > offset && data.length < query.page_size) data.push(record);
        if (matched === pageEnd) countUntil = performance.now() + COUNT_MS;
        if (matched >= stopAt) break outer;
      }
      if (performance.now() > countUntil) break;
    }
  }
  const pageFull = data.length === query.page_size && query.page_size > 0;
  // A match past the page, or a walk that stopped before the end of the window.
  const hasMore = counted !== undefined ? counted > pageEnd : matched > pageEnd || !state.exhausted;
  let next: string | null = null;
  if (hasMore) next = pageFull ? data[data.length - 1]!.id : (state.lastId ?? null);
  const exact = counted !== undefined || state.exhausted;
  // A lower bound: whichever count went further.
  const total = counted ?? Math.max(matched, count?.n ?? 0);
  return { object: 'list', total, total_exact: exact, has_more: hasMore, next_cursor: next, data };
}

/**
 * The number of matches from the index alone (no record read), when the filter allows it: no
 * time bounds, no metadata, at most one indexed field besides the workspace. Exact up to
 * EXACT_BOUND entries read, a lower bound past it; undefined when the filter does not allow it.
 */
function indexCount(src: LogSources, filter: LogFilter, high: string | undefined): { n: number; exact: boolean } | undefined {
  if (!filter.covered || filter.fromMs !== undefined || filter.toMs !== undefined) return undefined;
  const others = filter.terms.filter((t) => t.field !== INDEXED.workspace);
  // Entries are sparse for these (log-index.ts): a 2xx status has none, a trace id none where it is its record's id.
  if (others.some((t) => t.field === INDEXED.trace_id || t.values.some((v) => !termIndexed(t.field, v)))) return undefined;
  const ws = filter.workspaceId;
  const bounded = (n: number): { n: number; exact: boolean } => ({ n, exact: n < EXACT_BOUND });
  const keys = (field: string, value: string, cap: number): number => src.idx.count(field, value, '', high ?? TOP, cap);
  if (others.length === 0) {
    if (ws !== undefined) return bounded(keys(INDEXED.workspace, ws, EXACT_BOUND));
    // The whole database: LMDB keeps its entry count.
    if (high === undefined) return { n: countRecords(src.db), exact: true };
    return bounded(countKeys(src.db, undefined, high, EXACT_BOUND));
  }
  if (others.length > 1 || others[0]!.values.length > MAX_MERGE) return undefined;
  const term = others[0]!;
  if (ws === undefined) {
    let n = 0;
    for (const v of term.values) n += keys(term.field, v, EXACT_BOUND - n);
    return bounded(n);
  }
  // The entries' values are their records' workspaces: counted without reading a record.
  let n = 0;
  let seen = 0;
  for (const v of term.values) {
    for (const e of src.idx.entries({ field: term.field, value: v, low: '', high: high ?? TOP, limit: EXACT_BOUND - seen })) {
      seen++;
      if (e.ws === ws) n++;
    }
    if (seen >= EXACT_BOUND) return { n, exact: false };
  }
  return { n, exact: true };
}
