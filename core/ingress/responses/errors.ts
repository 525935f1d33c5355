/**
 * Errors of the Responses ingress. The Responses API reports errors in the same shape as the rest
 * of OpenAI's API (`{error:{message,type,param,code}}`, status kept), so an upstream's error body
 * that already has that shape goes back as it is; anything else (a compatible server's
 * `{message}`, a proxy's page) is put into it.
 *
 * In a stream, a failure is an `error` event (`{type:'error', code, message, param,
 * sequence_number}`, OpenAI's ResponseErrorEvent) that also carries the `error` object: the
 * official SDKs throw an APIError for any event whose data has `error`.
 */
import { defineError } from '../../errors.js';
import { isRecord, stringField } from '../../providers/openai-shape.js';
import type { Json } from './wire.js';

/** `previous_response_id` names a response the gateway does not hold, on a target that cannot look it up. */
export const previousResponseNotFound = defineError(404, 'invalid_request_error', 'previous_response_not_found', 'The previous response does not exist.');

/**
 * @example
 *   responsesError(429, { message: 'slow down' })
 *   // { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null } }
 */
export function responsesError(status: number, body: unknown): Json {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const message = (inner !== undefined ? stringField(inner, 'message') : undefined) || (isRecord(body) ? stringField(body, 'message') : undefined) || `The upstream answered HTTP ${status}.`;
  return {
    error: {
      message,
      type: (inner !== undefined ? stringField(inner, 'type') : undefined) ?? typeForStatus(status),
      param: inner !== undefined && typeof inner.param === 'string' ? inner.param : null,
      code: inner !== undefined && (typeof inner.code === 'string' || typeof inner.code === 'number') ? String(inner.code) : null,
    },
  };
}

/** The data of a stream's `error` event, from an OpenAI-shaped error body. */
export function streamErrorData(body: unknown, sequence: number): Json {
  const error = responsesError(500, body).error as Json;
  if (!(isRecord(body) && isRecord(body.error) && stringField(body.error, 'message'))) error.message = 'The upstream failed in the middle of the answer.';
  return { type: 'error', sequence_number: sequence, code: error.code ?? 'upstream_error', message: error.message, param: error.param, error };
}

function typeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 400 && status < 500 ? 'invalid_request_error' : 'server_error';
}
