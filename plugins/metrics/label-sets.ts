/**
 * Bounded label cardinality. Every label set a metric has ever seen stays in the registry (and in
 * every scrape) for the life of the process, so values that come from traffic (provider, model)
 * are admitted up to a cap per metric; past it a new set has its free labels folded into `other`.
 * Known sets keep counting exactly; only the long tail is merged.
 */

/** The value a folded label takes. */
export const OTHER = 'other';

/** Label values are bounded in length too: a 10 KB model name must not reach every scrape. */
const MAX_VALUE = 128;

export class LabelSets {
  readonly #seen = new Set<string>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * The labels to record under: `labels` itself while under the cap or already seen, else a
   * copy with each of `free` set to `other`.
   *
   * @example
   *   tokens.inc(sets.admit({ type: 'prompt', provider, model }, ['provider', 'model']), n);
   */
  admit<L extends Record<string, string>>(labels: L, free: ReadonlyArray<keyof L>): L {
    for (const [k, v] of Object.entries(labels)) {
      if (v.length > MAX_VALUE) labels[k as keyof L] = v.slice(0, MAX_VALUE) as L[keyof L];
    }
    const key = Object.values(labels).join('\u0000');
    if (this.#seen.has(key)) return labels;
    if (this.#seen.size < this.#limit) {
      this.#seen.add(key);
      return labels;
    }
    const folded = { ...labels };
    for (const k of free) folded[k] = OTHER as L[keyof L];
    return folded;
  }

  get size(): number {
    return this.#seen.size;
  }
}
