/**
 * Token usage of one request, as the provider reported it or, when it reported none, as the
 * gateway counted it. Every endpoint and every stream is metered the same way, so budgets and
 * logs see the same numbers for a streamed and a plain call of the same answer.
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from the provider's prompt cache (priced lower where it reports them). */
  cached_tokens: number;
  reasoning_tokens: number;
  /** `upstream`: reported by the provider; `estimated`: counted by the gateway's tokenizer. */
  source: 'upstream' | 'estimated';
}

/** What a request costs: tokens priced with the pricing table, in USD cents. */
export interface Cost {
  cents: number;
  /** The pricing entry used (`provider/model`), or null when the model has no price. */
  priced_as: string | null;
}
