/**
 * Retry pacing: exponential backoff with full jitter (a random wait between 0 and
 * min(cap, base·2^n)), or what the upstream asks with `retry-after-ms` / `retry-after` (seconds
 * or an HTTP date) when the config says to honour it. The total wait of one request is bounded:
 * a retry that would exceed the budget is not made.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const BACKOFF_BASE_MS = 100;
export const BACKOFF_CAP_MS = 5_000;
/** At most this long is waited in total across the retries of one request. */
export const MAX_TOTAL_RETRY_WAIT_MS = 30_000;
/** A retry-after longer than this is not honoured: the request gives up instead. */
export const MAX_RETRY_AFTER_MS = 30_000;

export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** The wait an upstream asked for, in ms, or undefined when it asked for none (or nonsense). */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (typeof ms === 'string' && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const after = headers['retry-after'];
  if (typeof after !== 'string') return undefined;
  const value = after.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // Only an HTTP date (RFC 9110 IMF-fixdate); V8's Date.parse alone reads "1.5" or "-1" as dates.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
