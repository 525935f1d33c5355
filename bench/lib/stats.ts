/**
 * Order statistics for benchmark samples. Percentiles use the nearest-rank method: the result is
 * always a value that was actually observed, which keeps a p99 of 60 samples honest (it is the
 * largest, not an interpolation towards a value nobody saw).
 */

/** The p-th percentile (0–100) of `values` by nearest rank; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/**
 * The median; for an even count the mean of the two middle values, so the median of three rounds
 * is the middle round and the median of two is their mean.
 *
 * @example
 * median([3, 1, 2]) // 2
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Smallest and largest value: the spread printed next to a median. */
export function spread(values: readonly number[]): { min: number; max: number } {
  if (values.length === 0) return { min: Number.NaN, max: Number.NaN };
  return { min: Math.min(...values), max: Math.max(...values) };
}

/** Rounds for display and JSON: enough digits for µs-level differences, no float noise. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
