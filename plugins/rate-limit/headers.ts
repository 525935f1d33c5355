/**
 * The OpenAI-style rate-limit headers, for the tightest limit of each type that applied:
 *
 *   x-ratelimit-limit-requests: 5          x-ratelimit-limit-tokens: 1000
 *   x-ratelimit-remaining-requests: 3      x-ratelimit-remaining-tokens: 340
 *   x-ratelimit-reset-requests: 24s        x-ratelimit-reset-tokens: 39.6s   (until the limit is full again)
 */
import type { CounterState } from '../../core/index.js';
import type { AppliedLimit, LimitType } from './limits.js';
import { formatDuration } from './units.js';

const TYPES: ReadonlyArray<LimitType> = ['requests', 'tokens'];

/**
 * Writes the headers into `out`. `failed`, when given, is the limit that refused the request:
 * its type reports that limit rather than the tightest one.
 */
export function writeRateHeaders(
  out: Record<string, string>,
  report: { applied: ReadonlyArray<AppliedLimit>; states: ReadonlyArray<CounterState>; failed?: number },
): void {
  const { applied, states, failed } = report;
  for (const type of TYPES) {
    let pick = -1;
    if (failed !== undefined && applied[failed]!.limit.type === type) pick = failed;
    else {
      for (let i = 0; i < applied.length; i++) {
        if (applied[i]!.limit.type !== type) continue;
        if (pick === -1 || tighter(states[i]!, states[pick]!)) pick = i;
      }
    }
    if (pick === -1) continue;
    out[`x-ratelimit-limit-${type}`] = String(applied[pick]!.limit.value);
    out[`x-ratelimit-remaining-${type}`] = String(states[pick]!.remaining);
    out[`x-ratelimit-reset-${type}`] = formatDuration(states[pick]!.resetMs);
  }
}

function tighter(a: CounterState, b: CounterState): boolean {
  return a.remaining < b.remaining || (a.remaining === b.remaining && a.resetMs > b.resetMs);
}
