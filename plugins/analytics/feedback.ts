/**
 * Feedback counts for `GET /v1/analytics/graphs/feedbacks`, read at query time from the
 * `feedback` database the logging plugin writes (`POST /v1/feedback`, admin-api.md §19).
 *
 * Feedback is small (a person's rating, not a request), so a scan of the range is fine; an
 * absent or empty database answers zeros. Records are `{id, trace_id, value, weight,
 * workspace_id, created_at}`; anything else in the database is skipped.
 */
import type { Database, Key, RootDatabase } from 'lmdb';
import type { Query, Series } from './query.js';

export const FEEDBACK_DB = 'feedback';

interface FeedbackRecord {
  workspace_id: string | null;
  created_at: string;
}

const isFeedback = (v: unknown): v is FeedbackRecord =>
  typeof v === 'object' && v !== null && typeof (v as FeedbackRecord).created_at === 'string';

export function openFeedback(root: RootDatabase): Database<unknown, Key> {
  return root.openDB<unknown, Key>({ name: FEEDBACK_DB });
}

/** Feedback per data point of the query (the metadata, status and model filters do not apply to it). */
export function feedbackSeries(db: Database<unknown, Key>, query: Query): Series<{ total: number }> {
  return countFeedback(
    (function* values() {
      for (const { value } of db.getRange()) yield value;
    })(),
    query,
  );
}

/** Feedback per data point, from records `{workspace_id, created_at}` (LMDB values or PostgreSQL rows). */
export function countFeedback(records: Iterable<unknown>, query: Query): Series<{ total: number }> {
  const first = query.from - (query.from % query.step);
  const points: Series<{ total: number }>['points'] = [];
  for (let m = first; m < query.to; m += query.step) points.push({ minute: m, acc: { total: 0 } });
  const total = { total: 0 };
  const workspaces = query.workspaces === null ? null : new Set(query.workspaces);
  const from = query.from * 60_000;
  const to = query.to * 60_000;
  for (const value of records) {
    if (!isFeedback(value)) continue;
    if (workspaces !== null && !workspaces.has(value.workspace_id ?? '')) continue;
    const at = Date.parse(value.created_at);
    if (!(at >= from && at < to)) continue;
    total.total++;
    const point = points[Math.floor((Math.floor(at / 60_000) - first) / query.step)];
    if (point !== undefined) point.acc.total++;
  }
  return { total, points };
}
