/**
 * Gemini error bodies → OpenAI's error shape.
 *
 *   {"error":{"code":429,"message":"…","status":"RESOURCE_EXHAUSTED"}}
 *     → {"error":{"message":"…","type":"RESOURCE_EXHAUSTED","param":null,"code":"RESOURCE_EXHAUSTED"}}
 *
 * Google's canonical `status` is the stable identity, so it becomes both `type` and `code`. A body
 * that is not Google's shape (a proxy's HTML page, an empty body) gets the status Google uses for
 * that HTTP code.
 */
import { isRecord, stringField } from './wire.js';

/** Canonical status per HTTP code (https://ai.google.dev/gemini-api/docs/troubleshooting). */
const STATUS_BY_HTTP: ReadonlyMap<number, string> = new Map([
  [400, 'INVALID_ARGUMENT'],
  [401, 'UNAUTHENTICATED'],
  [403, 'PERMISSION_DENIED'],
  [404, 'NOT_FOUND'],
  [429, 'RESOURCE_EXHAUSTED'],
  [500, 'INTERNAL'],
  [503, 'UNAVAILABLE'],
  [504, 'DEADLINE_EXCEEDED'],
]);

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: null; code: string };
}

/** The OpenAI error body for a Gemini error body (or whatever came instead of one). */
export function openaiError(status: number, body: unknown): OpenAIErrorBody {
  // A streamed error and some proxies wrap the body in a one-element array.
  const unwrapped = Array.isArray(body) && body.length === 1 ? body[0] : body;
  const inner = isRecord(unwrapped) && isRecord(unwrapped.error) ? unwrapped.error : undefined;
  const type = (inner && stringField(inner, 'status')) || fallbackStatus(status);
  const message =
    (inner && stringField(inner, 'message')) ||
    (typeof body === 'string' && body.length > 0 ? body : `Gemini answered HTTP ${status}`);
  return { error: { message, type, param: null, code: type } };
}

function fallbackStatus(status: number): string {
  return STATUS_BY_HTTP.get(status) ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}
