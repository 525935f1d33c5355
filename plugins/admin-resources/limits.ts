/**
 * Usage and rate limits and expiry as virtual keys and providers take them. The reference sends
 * `rate_limits` as one object on create and update but answers with an array; both are accepted,
 * and the record always holds an array.
 */
import { AdminErrors, S, type Records } from '../../core/index.js';

/** One rate limit, or an array of them (one per type and unit at most is meaningful). */
export const rateLimitsInput: S.JsonSchema = {
  description: 'a rate limit object or an array of rate limits',
  anyOf: [S.rateLimit, { type: 'array', items: S.rateLimit, maxItems: 10 }],
};

/** The stored form (an array); undefined when the body did not carry the field. */
export function normaliseRateLimits(input: Records.RateLimit | Records.RateLimit[] | undefined): Records.RateLimit[] | undefined {
  if (input === undefined) return undefined;
  return Array.isArray(input) ? input : [input];
}

/** An expiry in the past would create something dead on arrival: almost surely a mistake. */
export function assertFuture(iso: string | null | undefined, param: string): void {
  if (iso === null || iso === undefined) return;
  if (Date.parse(iso) <= Date.now()) throw AdminErrors.invalid(`${param} must be in the future.`, param);
}
