/**
 * GET /v1/logs: one page of records, newest first, read through the most selective index, with
 * bounded work whatever the filters and however many records there are.
 *
 *   page      `page_size` records after skipping `current_page × page_size` matches, from the
 *             start or from `cursor` (the `next_cursor` of the page before: the id the walk
 *             stopped at, opaque to the caller);
 *   total     matches counted while walking: past the page the walk goes on counting up to
 *             TOTAL_BOUND matches; `total_exact` says whether it reached the end of the window
 *             (then `total` is exact) or stopped at the bound (then it is a lower bound);
 *   has_more  more matches may follow; `next_cursor` continues after this page (null at the end).
 *
 * The walk visits at most VISIT_BUDGET entries: a filter that matches almost nothing in a huge
 * window answers a short (or empty) page with `has_more` and a cursor where it stopped, instead
 * of reading every record.
 */
import { S, type Records } from '../../core/index.js';
import type { StoredLog } from './log-db.js';
import { logFilter, type LogListQuery } from './log-filters.js';
import { newWalkState, queryLogs, type LogSources } from './log-query.js';
import { timeRange } from './scan.js';
import { logSchema } from './views.js';

/** Matches counted for `total` before the walk stops counting. */
export const TOTAL_BOUND = 10_000;
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
  const state = newWalkState();
  const data: StoredLog[] = [];
  let matched = 0;
  const walk = queryLogs(src, { terms: filter.terms, workspaceId: filter.workspaceId, low: range.low, high, newestFirst: true, match: filter.match, budget: limits.visit }, state);
  outer: for await (const chunk of walk) {
    for (const record of chunk) {
      matched++;
      if (matched > offset && data.length < query.page_size) data.push(record);
      if (matched >= offset + query.page_size + limits.total) break outer;
    }
  }
  const pageEnd = offset + query.page_size;
  // A match past the page, or a walk that stopped before the end of the window.
  const hasMore = matched > pageEnd || !state.exhausted;
  const pageFull = data.length === query.page_size && query.page_size > 0;
  let next: string | null = null;
  if (hasMore) next = pageFull ? data[data.length - 1]!.id : (state.lastId ?? null);
  return { object: 'list', total: matched, total_exact: state.exhausted, has_more: hasMore, next_cursor: next, data };
}
