/**
 * Gemini `usageMetadata` → OpenAI usage.
 *
 * Thinking models bill `thoughtsTokenCount` as output but report it beside
 * `candidatesTokenCount`, so the two add up to OpenAI's `completion_tokens`. Gemini's
 * `promptTokenCount` already includes the cached share (`cachedContentTokenCount`), which is
 * exactly OpenAI's `prompt_tokens` / `cached_tokens` split.
 */
import { isRecord, numberField } from './wire.js';

export function openaiUsage(raw: unknown): Record<string, unknown> {
  const meta = isRecord(raw) ? raw : {};
  const prompt = numberField(meta, 'promptTokenCount') ?? 0;
  const completion = (numberField(meta, 'candidatesTokenCount') ?? 0) + (numberField(meta, 'thoughtsTokenCount') ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    // Gemini's total also counts tool-use prompt tokens; trust it when present.
    total_tokens: numberField(meta, 'totalTokenCount') ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: numberField(meta, 'cachedContentTokenCount') ?? 0 },
  };
}
