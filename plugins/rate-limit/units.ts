/**
 * Limit units and the durations the `x-ratelimit-reset-*` headers carry.
 */
import type { Records } from '../../core/index.js';

/** The period each unit counts over, in ms. `rps` and `rpw` exist on API keys only. */
export const PERIOD_MS: Readonly<Record<Records.RateUnit, number>> = {
  rps: 1_000,
  rpm: 60_000,
  rph: 3_600_000,
  rpd: 86_400_000,
  rpw: 604_800_000,
};

export const UNIT_WORD: Readonly<Record<Records.RateUnit, string>> = {
  rps: 'second',
  rpm: 'minute',
  rph: 'hour',
  rpd: 'day',
  rpw: 'week',
};

/**
 * A duration as OpenAI writes its reset headers (Go's duration syntax), rounded up to the ms.
 *
 * @example
 *   formatDuration(12_000) // '12s'
 *   formatDuration(360_000) // '6m0s'
 *   formatDuration(17.2) // '18ms'
 */
export function formatDuration(ms: number): string {
  const total = Math.ceil(Math.max(0, ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${(total % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
