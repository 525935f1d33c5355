/**
 * The latency histogram of a bucket: fixed, log-spaced bins, so histograms from any minute, any
 * process and any dimension merge by adding counts, and percentiles come from the merged counts.
 *
 *   bin i covers [0.1 ms × 10^(i/10), 0.1 ms × 10^((i+1)/10)),  i = 0 … 60
 *   ten bins a decade from 0.1 ms to ~126 s; below and above are clamped to the first and last
 *
 * A percentile is reported as its bin's geometric midpoint, so it is within one bin (±12 %) of
 * the true value. Stored sparse, as `[bin, count, bin, count, …]`: a bucket usually touches a
 * handful of bins.
 */

export const BINS_PER_DECADE = 10;
export const MIN_MS = 0.1;
/** 61 bins: the last covers 100–126 s, so 120 s (the longest request we expect) still has its own bin. */
export const BIN_COUNT = 61;

/** The bin of a latency. */
export function binOf(ms: number): number {
  if (!(ms > MIN_MS)) return 0;
  const i = Math.floor(BINS_PER_DECADE * Math.log10(ms / MIN_MS));
  return i >= BIN_COUNT ? BIN_COUNT - 1 : i;
}

/** What a percentile in this bin is reported as: the bin's geometric midpoint (ms). */
export const binMidpoint = (bin: number): number => MIN_MS * 10 ** ((bin + 0.5) / BINS_PER_DECADE);

/** Adds `n` to `bin` in a sparse `[bin, count, …]` list. */
export function addToPairs(pairs: number[], bin: number, n: number): void {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] === bin) {
      pairs[i + 1]! += n;
      return;
    }
  }
  pairs.push(bin, n);
}

/** Adds a sparse list into another (a flush merging into the stored bucket). */
export function mergePairs(into: number[], from: readonly number[]): void {
  for (let i = 0; i < from.length; i += 2) addToPairs(into, from[i]!, from[i + 1]!);
}

/** Adds a sparse list into dense counts (queries merge thousands of buckets this way). */
export function accumulate(dense: Float64Array, pairs: readonly number[]): void {
  for (let i = 0; i < pairs.length; i += 2) dense[pairs[i]!]! += pairs[i + 1]!;
}

export const denseHistogram = (): Float64Array => new Float64Array(BIN_COUNT);

/**
 * The `q` quantile (0 < q ≤ 1) of dense counts, nearest rank: the bin holding the ⌈q·n⌉-th
 * smallest latency. 0 when there is nothing.
 *
 * @example
 *   const h = denseHistogram(); accumulate(h, [binOf(12), 3]); percentile(h, 0.5) // ≈ 12 (±12 %)
 */
export function percentile(dense: Float64Array, q: number): number {
  let total = 0;
  for (const c of dense) total += c;
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let bin = 0; bin < dense.length; bin++) {
    seen += dense[bin]!;
    if (seen >= rank) return binMidpoint(bin);
  }
  return binMidpoint(dense.length - 1);
}
