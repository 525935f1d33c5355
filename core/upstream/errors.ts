/**
 * Maps undici and socket failures to gateway errors. A connection that cannot be made (refused,
 * reset, TLS mismatch, refused by the connect-time guard, DNS failure) is 502
 * `upstream_unreachable`; an upstream that does not answer in time is 504 `upstream_timeout`.
 *
 * The messages are fixed: neither the origin nor the socket error's code or text reaches the
 * client, so the gateway cannot be used to tell a closed port from a TLS one or a filtered one.
 * The original error travels as `cause` and is written to the log record (`error_detail`).
 */
import { Errors, type GatewayError } from '../errors.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function upstreamFailure(err: unknown): GatewayError {
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'unknown';
  if (TIMEOUT_CODES.has(code)) return Errors.upstreamTimeout(undefined, { cause: err });
  return Errors.upstreamUnreachable(undefined, { cause: err });
}
