/**
 * Anthropic usage → OpenAI usage.
 *
 * Anthropic's `input_tokens` counts only the uncached part of the prompt; cache reads and cache
 * writes are reported beside it. OpenAI's `prompt_tokens` is the whole prompt, with the cached
 * share in `prompt_tokens_details.cached_tokens`. Summing all three keeps
 * `total = prompt + completion` and `cached ≤ prompt` true, so spend computed from the OpenAI shape
 * matches the invoice (gateways that report `input_tokens` alone undercount cached traffic).
 */
import type { AnthropicUsage } from './wire.js';

export function openaiUsage(usage: AnthropicUsage): Record<string, unknown> {
  const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const completion = usage.output_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cache_read_input_tokens },
  };
}
