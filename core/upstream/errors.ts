/**
 * Maps undici and socket failures to gateway errors. A connection that cannot be made is 502
 * `upstream_unreachable`; an upstream that does not answer in time is 504 `upstream_timeout`.
 * The message names the origin only (never a path or query, which could carry a credential).
 */
import { Errors, type GatewayError } from '../errors.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function upstreamFailure(err: unknown, origin: string): GatewayError {
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'unknown';
  if (TIMEOUT_CODES.has(code)) {
    return Errors.upstreamTimeout(`The upstream at ${origin} did not answer in time.`, { cause: err });
  }
  return Errors.upstreamUnreachable(`The upstream at ${origin} could not be reached (${code}).`, { cause: err });
}
