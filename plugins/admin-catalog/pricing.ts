/**
 * Price lookup: the shipped table (pricing-defaults.ts) merged with the admins' overrides
 * (`store.c.pricing`, source `custom`, which win).
 *
 *   (provider, model) ─▶ exact entry? ─▶ longest known prefix at a separator ─▶ undefined
 *                        (override wins over default at each step)
 *
 * The merged table is built once per version of the pricing collection and kept per store, so the
 * usage-metering path pays a version read and a map lookup, and sees an override made by any
 * process at its next call.
 */
import type { Records, Store } from '../../core/index.js';
import { DEFAULT_PRICING } from './pricing-defaults.js';

export interface ResolvedPricing {
  provider: string;
  /** The table entry that answered: the model asked for, or the known model it extends. */
  model: string;
  /** Prices in USD cents per token (or per unit). */
  pay_as_you_go: Record<string, unknown>;
  currency: 'USD';
  source: 'default' | 'custom';
  /** When an admin last set the override; null for shipped prices. */
  last_updated_at: string | null;
}

type Table = Map<string, Map<string, ResolvedPricing>>;

const tables = new WeakMap<Store, { version: number; table: Table }>();

/** After the prefix, a snapshot or variant suffix starts with one of these (`-2024-08-06`, `@001`, `:free`). */
const SEPARATOR = /^[-_.:@/]/;

function build(store: Store): Table {
  const table: Table = new Map();
  for (const [provider, models] of DEFAULT_PRICING) {
    const entries = new Map<string, ResolvedPricing>();
    for (const [model, pay] of models) {
      entries.set(model, { provider, model, pay_as_you_go: { ...pay }, currency: 'USD', source: 'default', last_updated_at: null });
    }
    table.set(provider, entries);
  }
  for (const o of store.c.pricing.list().items) {
    let entries = table.get(o.provider);
    if (entries === undefined) table.set(o.provider, (entries = new Map()));
    entries.set(o.model, custom(o));
  }
  return table;
}

function custom(o: Records.ModelPricing): ResolvedPricing {
  return { provider: o.provider, model: o.model, pay_as_you_go: o.pay_as_you_go, currency: 'USD', source: 'custom', last_updated_at: o.last_updated_at };
}

function tableOf(store: Store): Table {
  const version = store.c.pricing.version();
  const cached = tables.get(store);
  if (cached !== undefined && cached.version === version) return cached.table;
  const table = build(store);
  tables.set(store, { version, table });
  return table;
}

/**
 * The price of a model: an admin override, else the shipped list price; the model matched
 * exactly, else by the longest known prefix followed by a separator, so dated snapshots resolve.
 *
 * @example
 *   priceFor(store, 'openai', 'gpt-4o-2024-08-06')?.pay_as_you_go.request_token // { price: 0.00025 }
 */
export function priceFor(store: Store, provider: string, model: string): ResolvedPricing | undefined {
  const entries = tableOf(store).get(provider);
  if (entries === undefined) return undefined;
  const found = lookup(entries, model);
  if (found !== undefined || provider !== 'bedrock') return found;
  // Bedrock's cross-region inference profiles (`us.anthropic.claude-…`) cost what their model costs.
  const profile = BEDROCK_PROFILE.exec(model);
  return profile === null ? undefined : lookup(entries, model.slice(profile[0].length));
}

const BEDROCK_PROFILE = /^(?:us|eu|apac|us-gov|ca|jp|au|global)\./;

function lookup(entries: Map<string, ResolvedPricing>, model: string): ResolvedPricing | undefined {
  const exact = entries.get(model);
  if (exact !== undefined) return exact;
  let best: ResolvedPricing | undefined;
  for (const [known, pricing] of entries) {
    if (model.length > known.length && model.startsWith(known) && SEPARATOR.test(model.slice(known.length))) {
      if (best === undefined || known.length > best.model.length) best = pricing;
    }
  }
  return best;
}

/** Every priced model, defaults merged with overrides, sorted by provider then model. */
export function listPricing(store: Store, provider?: string): ResolvedPricing[] {
  const out: ResolvedPricing[] = [];
  for (const [p, entries] of tableOf(store)) if (provider === undefined || p === provider) out.push(...entries.values());
  return out.sort((a, b) => (a.provider === b.provider ? a.model.localeCompare(b.model) : a.provider.localeCompare(b.provider)));
}
