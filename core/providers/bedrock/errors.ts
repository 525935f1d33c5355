/**
 * Bedrock errors → OpenAI's error shape.
 *
 *   HTTP 429, x-amzn-errortype: ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/
 *   {"message":"Too many requests, please wait before trying again."}
 *     → {"error":{"message":"Too many requests, …","type":"rate_limit_error","param":null,"code":"ThrottlingException"}}
 *
 *   stream event `exception` {"type":"throttlingException","message":"…"}   (same result)
 *
 * AWS names an error by its exception: in the `x-amzn-errortype` header of a plain answer (the body
 * holds only `message`, sometimes spelled `Message`), and in the `:exception-type` header of a
 * stream message, lowerCamel there. The UpperCamel exception name is the stable identity, so it is
 * the `code`; `type` is the OpenAI-style class clients branch on, taken from the exception (the
 * statuses and meanings in the Bedrock Runtime API reference) or, for a name this table does not
 * know, from the HTTP status, with the same vocabulary as the Anthropic translator
 * (`invalid_request_error`, `rate_limit_error`, `api_error`, …).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isRecord, stringField } from './wire.js';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: null; code: string };
}

/** Bedrock Runtime exceptions (and the AWS-wide auth ones) → OpenAI-style error type. */
const TYPE_BY_EXCEPTION: ReadonlyMap<string, string> = new Map([
  ['ValidationException', 'invalid_request_error'],
  ['AccessDeniedException', 'permission_error'],
  ['UnrecognizedClientException', 'authentication_error'],
  ['InvalidSignatureException', 'authentication_error'],
  ['IncompleteSignatureException', 'authentication_error'],
  ['MissingAuthenticationTokenException', 'authentication_error'],
  ['ExpiredTokenException', 'authentication_error'],
  ['ResourceNotFoundException', 'not_found_error'],
  ['ModelTimeoutException', 'timeout_error'],
  ['ModelErrorException', 'api_error'],
  ['ModelStreamErrorException', 'api_error'],
  ['ThrottlingException', 'rate_limit_error'],
  ['ModelNotReadyException', 'rate_limit_error'],
  ['ServiceQuotaExceededException', 'rate_limit_error'],
  ['InternalServerException', 'api_error'],
  ['ServiceUnavailableException', 'overloaded_error'],
]);

/** The exception AWS documents for a status, for answers that name none (a proxy's page, an empty body). */
const EXCEPTION_BY_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'ValidationException'],
  [401, 'UnrecognizedClientException'],
  [403, 'AccessDeniedException'],
  [404, 'ResourceNotFoundException'],
  [408, 'ModelTimeoutException'],
  [424, 'ModelErrorException'],
  [429, 'ThrottlingException'],
  [500, 'InternalServerException'],
  [503, 'ServiceUnavailableException'],
]);

/** Error type per status, for exception names the table above does not know. */
const TYPE_BY_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [408, 'timeout_error'],
  [429, 'rate_limit_error'],
  [503, 'overloaded_error'],
  [504, 'timeout_error'],
]);

/**
 * The OpenAI error body for a Bedrock error answer (or whatever came instead of one).
 *
 * @example
 *   openaiError(400, { message: 'Malformed input request' }, { 'x-amzn-errortype': 'ValidationException:http://…' })
 *   // {error:{message:'Malformed input request', type:'invalid_request_error', param:null, code:'ValidationException'}}
 */
export function openaiError(status: number, body: unknown, headers?: IncomingHttpHeaders): OpenAIErrorBody {
  const named =
    exceptionName(headerValue(headers?.['x-amzn-errortype'])) ??
    exceptionName(isRecord(body) ? stringField(body, '__type') : undefined);
  const code = named ?? fallbackException(status);
  const message = bodyMessage(body) ?? `Bedrock answered HTTP ${status}`;
  return { error: { message, type: TYPE_BY_EXCEPTION.get(code) ?? fallbackType(status), param: null, code } };
}

/**
 * The OpenAI error body for a ConverseStream `exception` event, `{type, message}` with `type` the
 * lowerCamel `:exception-type`. An exception mid-stream is the server's failure unless the table
 * says otherwise, so unknown names are `api_error`.
 *
 * @example exceptionError({ type: 'modelStreamErrorException', message: 'boom' }).error.code // 'ModelStreamErrorException'
 */
export function exceptionError(payload: unknown): OpenAIErrorBody {
  const fields = isRecord(payload) ? payload : {};
  const code = exceptionName(stringField(fields, 'type')) ?? 'InternalServerException';
  const message = bodyMessage(fields) ?? `Bedrock stream failed with ${code}`;
  return { error: { message, type: TYPE_BY_EXCEPTION.get(code) ?? 'api_error', param: null, code } };
}

/**
 * `ValidationException:http://internal.amazon.com/…` (header), `com.amazon.coral.service#ExpiredTokenException`
 * (a JSON 1.x `__type`) or `throttlingException` (stream) → the UpperCamel exception name.
 */
function exceptionName(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const name = raw.split(':')[0]!.split('#').at(-1)!.trim();
  return name.length > 0 ? name.charAt(0).toUpperCase() + name.slice(1) : undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function bodyMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.length > 0 ? body : undefined;
  if (!isRecord(body)) return undefined;
  return stringField(body, 'message') || stringField(body, 'Message') || undefined;
}

function fallbackException(status: number): string {
  return EXCEPTION_BY_STATUS.get(status) ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

function fallbackType(status: number): string {
  return TYPE_BY_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}
