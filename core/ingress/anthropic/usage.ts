/**
 * OpenAI usage → Anthropic usage.
 *
 * OpenAI's `prompt_tokens` is the whole prompt with the cached share inside it
 * (`prompt_tokens_details.cached_tokens`); Anthropic's `input_tokens` counts only the uncached
 * part and reports cache reads beside it. Subtracting keeps `input + cache_read` equal to the
 * prompt, so spend computed from either shape agrees. OpenAI does not report cache writes
 * separately (they are billed as ordinary input), hence `cache_creation_input_tokens: 0`.
 */
import { isRecord } from '../../providers/openai-shape.js';
import type { AnthropicUsage } from './wire.js';

export const EMPTY_USAGE: AnthropicUsage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

/** @example anthropicUsage({ prompt_tokens: 120, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 100 } }) */
export function anthropicUsage(raw: unknown): AnthropicUsage {
  if (!isRecord(raw)) return { ...EMPTY_USAGE };
  const prompt = count(raw.prompt_tokens);
  const details = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  // A server that reports more cached tokens than prompt tokens is wrong; never go negative.
  const cached = Math.min(count(details.cached_tokens), prompt);
  return {
    input_tokens: prompt - cached,
    output_tokens: count(raw.completion_tokens),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
