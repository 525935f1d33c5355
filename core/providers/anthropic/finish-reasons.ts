/**
 * Anthropic `stop_reason` → OpenAI `finish_reason`.
 *
 * `pause_turn` (a server tool paused a long turn) has no OpenAI twin; the turn did end, so it
 * reads as `stop`. Unknown future reasons also fall back to `stop` rather than leaking a value
 * OpenAI SDKs do not expect.
 */

const FINISH_REASONS: ReadonlyMap<string, string> = new Map([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['pause_turn', 'stop'],
  ['max_tokens', 'length'],
  ['model_context_window_exceeded', 'length'],
  ['tool_use', 'tool_calls'],
  ['refusal', 'content_filter'],
]);

/** @example finishReason('max_tokens') // 'length' */
export function finishReason(stopReason: unknown): string {
  return (typeof stopReason === 'string' && FINISH_REASONS.get(stopReason)) || 'stop';
}
