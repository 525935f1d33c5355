/**
 * The slice of OpenAI's Responses API (https://platform.openai.com/docs/api-reference/responses)
 * that the ingress writes back to clients, and the options every translation step takes.
 *
 * Requests are read field by field from `unknown`: a client may send anything, and a field the
 * translator does not understand fails with a named `param` instead of crashing on a cast.
 */

export type Json = Record<string, unknown>;

/** Makes a fresh id with a Responses prefix; injectable so golden tests are stable. */
export type IdFactory = (prefix: 'resp' | 'msg' | 'fc' | 'call') => string;

export interface ResponsesOptions {
  /** Strict OpenAI compliance (kept for symmetry with the other dialects; Responses has no extras). */
  strict: boolean;
  /** Defaults to {@link randomId} (ids.ts). */
  newId?: IdFactory;
  /** Seconds since the epoch for `created_at`; defaults to now. */
  now?: () => number;
  /** Called once with the finished `response` object (the store keeps it; see continuation.ts). */
  onAnswer?: (response: Json) => void;
}

/** The Responses usage object. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}
