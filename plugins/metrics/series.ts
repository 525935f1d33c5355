/**
 * Request counters and histograms as plain numbers on the request path, rendered by prom-client's
 * registry at scrape time.
 *
 * prom-client's `inc(labels, n)` and `observe(labels, v)` hash the label object, validate it and
 * allocate on every call (a result object, a closure, a label/value pair): in `onDone` of every
 * request that was several allocations per instrument. Here a label set is resolved once to a
 * cell (a counter value, or bucket counts in a Float64Array), and recording is a Map lookup and
 * an addition. The families register themselves in the registry like prom-client's own metrics,
 * and render the same text (buckets cumulative, `+Inf`, `_sum`, `_count`).
 *
 * Label values come from the caller already bounded (LabelSets): a family keeps every cell it is
 * given for the life of the process, as prom-client does.
 */
import type { Metric, Registry } from 'prom-client';

/** What the registry renders: prom-client's metric object shape. */
interface Rendered {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  /** `sharedLabels` follow `labels` in the text: a bucket reads `{le="0.1",route="…"}`, as prom-client writes it. */
  values: Array<{ labels: Record<string, string | number>; sharedLabels?: Record<string, string>; value: number; metricName?: string }>;
  aggregator: 'sum';
}

type Labels<L extends string> = Record<L, string>;

/** What prom-client's registry calls on a metric: its name and help, `get()` at a scrape, `reset()`. */
abstract class Family<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly aggregator = 'sum' as const;

  constructor(options: { name: string; help: string; labelNames: readonly L[]; registers: Registry[] }) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    for (const r of options.registers) r.registerMetric(this as unknown as Metric);
  }

  /** The key of a label set: its values in label order. */
  key(labels: Labels<L>): string {
    let key = '';
    for (const n of this.labelNames) key += `${labels[n]}\u0000`;
    return key;
  }

  abstract reset(): void;
}

export interface CounterCell {
  value: number;
}

export class CounterFamily<L extends string> extends Family<L> {
  readonly type = 'counter' as const;
  #cells = new Map<string, { labels: Labels<L>; cell: CounterCell }>();

  /** The cell of a label set (created at 0 on first use): keep it, or look it up by key. */
  cell(labels: Labels<L>, key = this.key(labels)): CounterCell {
    let entry = this.#cells.get(key);
    if (entry === undefined) this.#cells.set(key, (entry = { labels: { ...labels }, cell: { value: 0 } }));
    return entry.cell;
  }

  /** The cell of a key already seen, or undefined: the fast path before any label object is built. */
  known(key: string): CounterCell | undefined {
    return this.#cells.get(key)?.cell;
  }

  inc(labels: Labels<L>, n = 1): void {
    this.cell(labels).value += n;
  }

  get(): Rendered {
    const values: Rendered['values'] = [];
    for (const { labels, cell } of this.#cells.values()) values.push({ labels, value: cell.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { cell } of this.#cells.values()) cell.value = 0;
  }
}

export interface HistogramCell {
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class HistogramFamily<L extends string> extends Family<L> {
  readonly type = 'histogram' as const;
  readonly #bounds: Float64Array;
  #cells = new Map<string, { labels: Labels<L>; cell: HistogramCell }>();

  constructor(options: { name: string; help: string; labelNames: readonly L[]; buckets: ReadonlyArray<number>; registers: Registry[] }) {
    super(options);
    this.#bounds = Float64Array.from(options.buckets);
  }

  cell(labels: Labels<L>, key = this.key(labels)): HistogramCell {
    let entry = this.#cells.get(key);
    if (entry === undefined) {
      const cell = { counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      this.#cells.set(key, (entry = { labels: { ...labels }, cell }));
    }
    return entry.cell;
  }

  known(key: string): HistogramCell | undefined {
    return this.#cells.get(key)?.cell;
  }

  /** Records one value in a cell: the first bound at or above it (`le`), as Prometheus counts. */
  observe(cell: HistogramCell, value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    cell.counts[i]!++;
    cell.sum += value;
    cell.count++;
  }

  get(): Rendered {
    const values: Rendered['values'] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, cell } of this.#cells.values()) {
      let acc = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        acc += cell.counts[i]!;
        values.push({ labels: { le: this.#bounds[i]! }, sharedLabels: labels, value: acc, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: cell.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: labels, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { cell } of this.#cells.values()) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}

/**
 * Cells by the raw values of up to three labels, in nested Maps: a set seen before costs a Map
 * lookup per label, and no key string or label object is built (`record` runs in every request's
 * `onDone`). Values are kept as they came, before any cap folded them into `other` or cut them,
 * so the memo has a bound of its own: past `max` sets it starts over. The families keep every
 * cell they gave out; only this shortcut to them is rebuilt.
 */
export class CellMemo<A, B, C, V> {
  readonly #max: number;
  #root = new Map<A, Map<B, Map<C, V>>>();
  #size = 0;

  constructor(max: number) {
    this.#max = max;
  }

  get(a: A, b: B, c: C): V | undefined {
    return this.#root.get(a)?.get(b)?.get(c);
  }

  set(a: A, b: B, c: C, value: V): V {
    if (this.#size >= this.#max) {
      this.#root = new Map();
      this.#size = 0;
    }
    let byB = this.#root.get(a);
    if (byB === undefined) this.#root.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map()));
    if (!byC.has(c)) this.#size++;
    byC.set(c, value);
    return value;
  }
}
