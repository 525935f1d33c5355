/**
 * GET /v1/logs: one page of records, newest first, read through the most selective index, with
 * bounded work whatever the filters and however many records there are.
 *
 *   page      `page_size` records after skipping `current_page × page_size` matches, from the
 *             start or from `cursor` (the `next_cursor` of the page before: the id the walk
 *             stopped at, opaque to the caller);
 *   total     the matches from the cursor on (all of them without one). Exact, from the index
 *             alone, when the filter is at most one indexed field besides the workspace and has
 *             no time bounds and no metadata; otherwise counted while walking, past the page up
 *             to TOTAL_BOUND more matches. `total_exact` says whether it is exact (the count or
 *             the walk reached the end) or a lower bound (the walk stopped at the bound);
 *   has_more  more matches may follow; `next_cursor` continues after this page (null at the end).
 *
 * The walk visits at most VISIT_BUDGET entries: a filter that matches almost nothing in a huge
 * window answers a short (or empty) page with `has_more` and a cursor where it stopped, instead
 * of reading every record.
 */
import { S, type Records } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { countRecords } from './log-db.js';
import { logFilter, type LogFilter, type LogListQuery } from './log-filters.js';
import { INDEXED } from './log-index.js';
import { MAX_MERGE, newWalkState, queryLogs, TOP, type LogSources } from './log-query.js';
import { timeRange } from './scan.js';
import { logSchema } from './views.js';

/** Matches counted past the page for `total` before the walk stops counting. */
export const TOTAL_BOUND = 1_000;
/** Index entries read to count a workspace's share of one field's value (value checks, no records). */
const COUNT_SCAN = 200_000;
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
  const counted = indexCount(src, filter, high);
  const state = newWalkState();
  const data: StoredLog[] = [];
  let matched = 0;
  // With an exact count the walk only fills the page; without one it counts on past it.
  const stopAt = counted !== undefined ? pageEnd : pageEnd + limits.total;
  const walk = queryLogs(src, { terms: filter.terms, workspaceId: filter.workspaceId, low: range.low, high, newestFirst: true, match: filter.match, budget: limits.visit }, state);
  if (stopAt > 0) {
    outer: for await (const chunk of walk) {
      for (const record of chunk) {
        matched++;
        if (matched > offset && data.length < query.page_size) data.push(record);
        if (matched >= stopAt) break outer;
      }
    }
  }
  const pageFull = data.length === query.page_size && query.page_size > 0;
  // A match past the page, or a walk that stopped before the end of the window.
  const hasMore = counted !== undefined ? counted > pageEnd : matched > pageEnd || !state.exhausted;
  let next: string | null = null;
  if (hasMore) next = pageFull ? data[data.length - 1]!.id : (state.lastId ?? null);
  const total = counted ?? matched;
  return { object: 'list', total, total_exact: counted !== undefined || state.exhausted, has_more: hasMore, next_cursor: next, data };
}

/**
 * The exact number of matches from the index alone (no record read), when the filter allows it:
 * no time bounds, no metadata, at most one indexed field besides the workspace. Undefined
 * otherwise (the walk counts then).
 */
function indexCount(src: LogSources, filter: LogFilter, high: string | undefined): number | undefined {
  if (!filter.covered || filter.fromMs !== undefined || filter.toMs !== undefined) return undefined;
  const others = filter.terms.filter((t) => t.field !== INDEXED.workspace);
  const ws = filter.workspaceId;
  const count = (field: string, value: string): number => src.idx.getKeysCount({ start: [field, value, ''], end: [field, value, high ?? TOP] });
  if (others.length === 0) {
    if (ws !== undefined) return count(INDEXED.workspace, ws);
    return high === undefined ? countRecords(src.db) : src.db.getKeysCount({ end: high });
  }
  if (others.length > 1 || others[0]!.values.length > MAX_MERGE) return undefined;
  const term = others[0]!;
  if (ws === undefined) return term.values.reduce((n, v) => n + count(term.field, v), 0);
  // The entries' values are their records' workspaces: counted without reading a record.
  let n = 0;
  let seen = 0;
  for (const v of term.values) {
    for (const { value } of src.idx.getRange({ start: [term.field, v, ''], end: [term.field, v, high ?? TOP] })) {
      if (++seen > COUNT_SCAN) return undefined;
      if (value === ws) n++;
    }
  }
  return n;
}
