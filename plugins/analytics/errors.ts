/**
 * The analytics API's errors: a time range or filter it cannot answer, and (distributed mode)
 * a rollup store that does not answer.
 */
import { defineError } from '../../core/index.js';

export const AnalyticsErrors = {
  invalidRange: defineError(400, 'invalid_request_error', 'invalid_time_range', 'The time range is not valid.'),
  invalidFilter: defineError(400, 'invalid_request_error', 'invalid_filter', 'A filter has a value that cannot be read.'),
  /** A filter on single requests (cost, tokens, trace): rollups cannot apply it, and ignoring it would answer for everything. */
  unsupportedFilter: defineError(400, 'invalid_request_error', 'unsupported_filter', 'This filter cannot be applied to analytics rollups.'),
  /** PostgreSQL did not answer; the original failure is the `cause` (logged, never sent). */
  unavailable: defineError(503, 'server_error', 'analytics_unavailable', 'The analytics store is unreachable; retry later.'),
};
