/**
 * Prices usage with the pricing table. The table is a service (`pricing`, provided by the
 * `admin-catalog` plugin from its shipped defaults and admin overrides); core owns the contract.
 *
 * Prices are USD cents per token. Cached prompt tokens are priced at `cache_read_input_token` when
 * the provider reports them (and the table has that price), the rest of the prompt at
 * `request_token`, the answer (reasoning included, as providers bill it) at `response_token`.
 */
import type { Cost, Usage } from './types.js';

export interface ModelPrice {
  /** The table entry that priced it (`gpt-4o` for `gpt-4o-2024-08-06`). */
  model: string;
  /** `{request_token: {price}, response_token: {price}, cache_read_input_token: {price}, …}` in cents. */
  pay_as_you_go: Record<string, unknown>;
}

export interface PricingService {
  priceFor(provider: string, model: string): ModelPrice | undefined;
}

declare module '../plugin.js' {
  interface AppServices {
    pricing: PricingService;
  }
}

function price(table: Record<string, unknown>, name: string): number | undefined {
  const entry = table[name] as { price?: unknown } | undefined;
  return typeof entry?.price === 'number' ? entry.price : undefined;
}

export function costOf(usage: Usage, provider: string, model: string, pricing: PricingService | undefined): Cost {
  const entry = pricing?.priceFor(provider, model);
  if (entry === undefined) return { cents: 0, priced_as: null };
  const t = entry.pay_as_you_go;
  const input = price(t, 'request_token') ?? 0;
  const output = price(t, 'response_token') ?? 0;
  const cachedRate = price(t, 'cache_read_input_token') ?? input;
  const cached = Math.min(usage.cached_tokens, usage.prompt_tokens);
  const cents = (usage.prompt_tokens - cached) * input + cached * cachedRate + usage.completion_tokens * output;
  return { cents, priced_as: `${provider}/${entry.model}` };
}
