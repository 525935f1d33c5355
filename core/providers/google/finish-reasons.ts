/**
 * Gemini `finishReason` → OpenAI `finish_reason`.
 *
 * Gemini ends a turn that called functions with `STOP`; OpenAI says `tool_calls`, so the caller
 * passes whether the candidate holds calls. Every safety-style block reads as `content_filter`.
 * Unknown or future reasons fall back to `stop` rather than leaking a value OpenAI SDKs do not
 * expect.
 */

const FINISH_REASONS: ReadonlyMap<string, string> = new Map([
  ['STOP', 'stop'],
  ['MAX_TOKENS', 'length'],
  ['SAFETY', 'content_filter'],
  ['RECITATION', 'content_filter'],
  ['BLOCKLIST', 'content_filter'],
  ['PROHIBITED_CONTENT', 'content_filter'],
  ['SPII', 'content_filter'],
  ['IMAGE_SAFETY', 'content_filter'],
]);

/** @example finishReason('MAX_TOKENS', false) // 'length' */
export function finishReason(reason: unknown, hasToolCalls: boolean): string {
  const mapped = (typeof reason === 'string' && FINISH_REASONS.get(reason)) || 'stop';
  // A filtered or truncated answer stays so even with calls in it; a normal end with calls is a tool turn.
  return hasToolCalls && mapped === 'stop' ? 'tool_calls' : mapped;
}
