/**
 * Converse `usage` → OpenAI usage, for the plain answer and the stream's `metadata` event alike
 * (both call this, so one answer reports the same numbers either way).
 *
 * Bedrock's `inputTokens` counts only the uncached part of the prompt; `cacheReadInputTokens` and
 * `cacheWriteInputTokens` are reported beside it. OpenAI's `prompt_tokens` is the whole prompt,
 * with the cached share in `prompt_tokens_details.cached_tokens`. Summing all three keeps
 * `total = prompt + completion` and `cached ≤ prompt` true, so spend computed from the OpenAI shape
 * matches the invoice. Bedrock's own `totalTokens` is not read: it is derivable, and recomputing
 * keeps the invariant even if AWS ever counts it differently.
 */
import { tokenUsage } from './wire.js';

/** @example openaiUsage({ inputTokens: 3, outputTokens: 2, cacheReadInputTokens: 10 }).prompt_tokens // 13 */
export function openaiUsage(raw: unknown): Record<string, unknown> {
  const usage = tokenUsage(raw);
  const prompt = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheWriteInputTokens;
  const completion = usage.outputTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cacheReadInputTokens },
  };
}
