/**
 * The rate-limit plugin's errors. One code, `rate_limit_exceeded` (type `rate_limit_error`, 429),
 * for every limit kind: clients and SDKs (OpenAI's `RateLimitError`) match on it, and the
 * `retry-after` and `x-ratelimit-*` headers say how long to wait and which budget ran out.
 */
import { defineError } from '../../core/index.js';

export const RateLimitErrors = {
  exceeded: defineError(429, 'rate_limit_error', 'rate_limit_exceeded', 'Rate limit exceeded.'),
};
