/**
 * Converse `stopReason` → OpenAI `finish_reason`.
 *
 * A guardrail that intervened and a model-side content filter both read as `content_filter`; a
 * context window that ran out truncates the answer, like `max_tokens`. `malformed_model_output`,
 * `malformed_tool_use` and unknown future reasons fall back to `stop` rather than leaking a value
 * OpenAI SDKs do not expect.
 */

const FINISH_REASONS: ReadonlyMap<string, string> = new Map([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['max_tokens', 'length'],
  ['model_context_window_exceeded', 'length'],
  ['tool_use', 'tool_calls'],
  ['guardrail_intervened', 'content_filter'],
  ['content_filtered', 'content_filter'],
]);

/** @example finishReason('guardrail_intervened') // 'content_filter' */
export function finishReason(stopReason: unknown): string {
  return (typeof stopReason === 'string' && FINISH_REASONS.get(stopReason)) || 'stop';
}
