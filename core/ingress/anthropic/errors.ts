/**
 * OpenAI-shaped error bodies → Anthropic's error shape; the HTTP status is kept by the caller.
 *
 *   429 {"error":{"message":"Slow down","type":"requests","code":"rate_limit_exceeded"}}
 *     → {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}
 *
 * Anthropic SDKs pick their exception class from the status, and clients that branch on the body
 * read `error.type`, so the type follows the status (Anthropic's table,
 * https://docs.anthropic.com/en/api/errors) rather than the upstream's own vocabulary. 503 reads
 * as `overloaded_error` because that is what it means from an OpenAI-compatible server (and the
 * gateway's own 503s are `overloaded_error` too); Anthropic's 529 has no OpenAI twin.
 */
import { isRecord, stringField } from '../../providers/openai-shape.js';
import type { AnthropicErrorBody, AnthropicErrorType } from './wire.js';

const TYPE_BY_STATUS: ReadonlyMap<number, AnthropicErrorType> = new Map([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [422, 'invalid_request_error'],
  [429, 'rate_limit_error'],
  [503, 'overloaded_error'],
  [504, 'timeout_error'],
  [529, 'overloaded_error'],
]);

/** Types Anthropic clients know; a stream error carrying one keeps it, anything else is `api_error`. */
const KNOWN_TYPES: ReadonlySet<string> = new Set<AnthropicErrorType>([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** @example errorType(503) // 'overloaded_error' */
export function errorType(status: number): AnthropicErrorType {
  const known = TYPE_BY_STATUS.get(status);
  if (known !== undefined) return known;
  // Anthropic: "We may also use invalid_request_error for other 4XX status codes."
  return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
}

/**
 * @example
 *   anthropicError(401, { error: { message: 'Incorrect API key provided' } })
 *   // { type: 'error', error: { type: 'authentication_error', message: 'Incorrect API key provided' } }
 */
export function anthropicError(status: number, body: unknown): AnthropicErrorBody {
  const message = errorMessage(body) ?? `The upstream answered HTTP ${status}.`;
  return { type: 'error', error: { type: errorType(status), message } };
}

/**
 * The `error` event of a stream: no status travels with it, so the OpenAI body's `type` decides
 * when Anthropic knows it (the gateway's own errors use the same names), otherwise `api_error`.
 */
export function anthropicStreamError(body: unknown): AnthropicErrorBody {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const type = inner === undefined ? undefined : stringField(inner, 'type');
  const known = type !== undefined && KNOWN_TYPES.has(type) ? (type as AnthropicErrorType) : 'api_error';
  return { type: 'error', error: { type: known, message: errorMessage(body) ?? 'The upstream failed in the middle of the answer.' } };
}

/**
 * OpenAI's `{error:{message}}`, or the `{message}` some compatible servers (vLLM) put at the top.
 * A bare string body is not used: it is usually a proxy's HTML page, not a message for a client.
 */
function errorMessage(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const inner = isRecord(body.error) ? stringField(body.error, 'message') : undefined;
  const message = inner || (typeof body.error === 'string' ? body.error : undefined) || stringField(body, 'message');
  return message !== undefined && message.length > 0 ? message : undefined;
}
