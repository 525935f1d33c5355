/**
 * The slice of Anthropic's Messages API (`anthropic-version: 2023-06-01`) that the ingress
 * writes back to clients: answers, stream events and errors
 * (https://docs.anthropic.com/en/api/messages, …/messages-streaming, …/errors).
 *
 * Requests are read field by field from `unknown` instead of being typed here: a client may send
 * anything, and every field the translator does not understand must fail with a named `param`,
 * not crash on a cast.
 */

export type Json = Record<string, unknown>;

/** Why the model stopped, as Anthropic names it (`pause_turn` is never produced from OpenAI). */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/** Anthropic's usage object; in `message_delta` events it is cumulative, not an increment. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The content blocks an answer translated from OpenAI can hold. */
export type ContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Json };

/** Anthropic's error `type`s (https://docs.anthropic.com/en/api/errors). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}

/** Makes a fresh id with an Anthropic prefix (`msg`, `toolu`); injectable so golden tests are stable. */
export type IdFactory = (prefix: 'msg' | 'toolu') => string;

/** What every translation step takes besides its input. */
export interface IngressOptions {
  /** Strict OpenAI compliance: no provider extras (reasoning text, `reasoning_effort`). */
  strict: boolean;
  /** Defaults to {@link randomId}. */
  newId?: IdFactory;
}
