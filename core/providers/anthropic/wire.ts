/**
 * The slice of Anthropic's Messages API wire format the translator reads and writes
 * (https://docs.anthropic.com/en/api/messages, `anthropic-version: 2023-06-01`).
 *
 * Upstream bodies arrive as `unknown`; these guards narrow them field by field instead of
 * trusting a cast, because a provider that adds or renames a field must not crash the gateway.
 */

export type Json = Record<string, unknown>;

/** One content block of a request message (the kinds this translator produces). */
export type RequestBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: ImageSource }
  | { type: 'document'; source: ImageSource }
  | { type: 'tool_use'; id: string; name: string; input: Json }
  | { type: 'tool_result'; tool_use_id: string; content: string | { type: 'text'; text: string }[] };

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface RequestMessage {
  role: 'user' | 'assistant';
  content: RequestBlock[];
}

/** `usage` as it appears in a message and in stream events (every field optional in events). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

import { isRecord, stringField } from '../openai-shape.js';
export { isRecord, stringField };

/** A zeroed usage with any numeric fields of `raw` laid over `base`. */
export function mergeUsage(base: AnthropicUsage, raw: unknown): AnthropicUsage {
  if (!isRecord(raw)) return base;
  const next = { ...base };
  for (const key of USAGE_KEYS) {
    const value = raw[key];
    if (typeof value === 'number' && Number.isFinite(value)) next[key] = value;
  }
  return next;
}

export const EMPTY_USAGE: AnthropicUsage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
