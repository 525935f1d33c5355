/**
 * Provider-looking ids (`chatcmpl-…`, `resp_…`) that are unique without per-request crypto:
 * a random tag drawn once per process plus a counter.
 */

import { randomBytes } from 'node:crypto';

const RUN_TAG = randomBytes(4).toString('hex');
let sequence = 0;

/** A unique id with the provider's prefix, e.g. `mockId('chatcmpl-')`. */
export function mockId(prefix: string): string {
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  return prefix + RUN_TAG + sequence.toString(36).padStart(8, '0');
}

/** Seconds since the epoch, the unit of OpenAI's `created` fields. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
