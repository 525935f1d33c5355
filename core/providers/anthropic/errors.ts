/**
 * Anthropic error bodies → OpenAI's error shape.
 *
 *   {"type":"error","error":{"type":"rate_limit_error","message":"…"}}
 *     → {"error":{"message":"…","type":"rate_limit_error","param":null,"code":"rate_limit_error"}}
 *
 * Anthropic's error `type` is its stable identity, so it becomes both `type` and `code`; clients
 * that branch on either keep working. A body that is not Anthropic's shape (a proxy's HTML page,
 * an empty body) gets the type Anthropic documents for that status.
 */
import { isRecord, stringField } from './wire.js';

/** Anthropic's error type per HTTP status (https://docs.anthropic.com/en/api/errors). */
const TYPE_BY_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [504, 'timeout_error'],
  [529, 'overloaded_error'],
]);

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: null; code: string };
}

/** The OpenAI error body for an Anthropic error body (or whatever came instead of one). */
export function openaiError(status: number, body: unknown): OpenAIErrorBody {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const type = (inner && stringField(inner, 'type')) || fallbackType(status);
  const message =
    (inner && stringField(inner, 'message')) ||
    (typeof body === 'string' && body.length > 0 ? body : `Anthropic answered HTTP ${status}`);
  return { error: { message, type, param: null, code: type } };
}

function fallbackType(status: number): string {
  return TYPE_BY_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}
