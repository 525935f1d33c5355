/**
 * OpenAI `finish_reason` → Anthropic `stop_reason`.
 *
 * `stop` is always `end_turn`, never `stop_sequence`: OpenAI reports a natural end and a matched
 * stop sequence alike and does not say which sequence matched (the matched text is not in the
 * output either), so `stop_sequence` could only be a guess. Anthropic clients treat both as a
 * finished turn, so `end_turn` with `stop_sequence: null` is the honest answer.
 *
 * Agent loops continue only on `tool_use`, and some OpenAI-compatible servers end a tool-calling
 * turn with `stop`; {@link stopReason} therefore lets tool calls win over a plain stop.
 */
import type { StopReason } from './wire.js';

const STOP_REASONS: ReadonlyMap<string, StopReason> = new Map([
  ['stop', 'end_turn'],
  ['length', 'max_tokens'],
  ['tool_calls', 'tool_use'],
  ['function_call', 'tool_use'],
  ['content_filter', 'refusal'],
]);

export interface StopFacts {
  finishReason: unknown;
  /** The answer holds at least one tool call. */
  toolUse: boolean;
  /** The answer carried an OpenAI `refusal`. */
  refusal: boolean;
}

/** @example stopReason({ finishReason: 'length', toolUse: false, refusal: false }) // 'max_tokens' */
export function stopReason(facts: StopFacts): StopReason {
  const mapped = (typeof facts.finishReason === 'string' && STOP_REASONS.get(facts.finishReason)) || 'end_turn';
  if (mapped !== 'end_turn') return mapped;
  if (facts.refusal) return 'refusal';
  return facts.toolUse ? 'tool_use' : 'end_turn';
}
