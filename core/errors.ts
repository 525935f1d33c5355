/**
 * The gateway's error catalog.
 *
 * Every error the gateway itself produces has one wire shape, on model routes, admin routes and
 * pass-through alike:
 *
 *   {"error":{"message":…,"type":…,"param":…|null,"code":…}}   + `x-gateway-error-source: gateway`
 *
 * Identity is the `code` (a stable snake_case string tests and clients match on), never the class:
 * prototypes do not survive worker threads or duplicated packages. The original failure, when
 * there is one, travels as `cause` and is logged, never sent.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'upstream_error'
  | 'server_error'
  | 'overloaded_error';

export interface GatewayErrorOptions {
  /** The request field or header at fault, e.g. `messages[0].role` or `x-gateway-config`. */
  param?: string | null;
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error the gateway answers with itself. `status` and `code` are part of the contract. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | null;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, type: ErrorType, code: string, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param ?? null;
    this.headers = options.headers;
  }

  /** The wire body. Messages of 5xx errors never carry internals; those go to the log via `cause`. */
  toJSON(): { error: { message: string; type: string; param: string | null; code: string } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** True for any gateway error, including one that crossed a thread boundary as a plain object. */
export function isGatewayError(value: unknown): value is GatewayError {
  return (
    value instanceof GatewayError ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as { code?: unknown }).code === 'string' &&
      typeof (value as { status?: unknown }).status === 'number' &&
      typeof (value as { type?: unknown }).type === 'string')
  );
}

type Factory = (message?: string, options?: GatewayErrorOptions) => GatewayError;

function define(status: number, type: ErrorType, code: string, defaultMessage: string): Factory {
  return (message = defaultMessage, options) => new GatewayError(status, type, code, message, options);
}

/**
 * The core catalog. Plugins keep their own catalogs in their `errors.ts`, built with
 * {@link defineError}, so codes stay unique per area.
 *
 * @example
 *   throw Errors.bodyTooLarge(`body exceeds ${limit} bytes`);
 */
export const Errors = {
  // 400: the request itself is wrong
  invalidJson: define(400, 'invalid_request_error', 'invalid_json', 'The request body is not valid JSON.'),
  invalidEncoding: define(400, 'invalid_request_error', 'invalid_encoding', 'The request body is not valid UTF-8.'),
  invalidBody: define(400, 'invalid_request_error', 'invalid_body', 'The request body must be a JSON object.'),
  invalidHeader: define(400, 'invalid_request_error', 'invalid_header', 'A request header has an invalid value.'),
  missingProvider: define(
    400,
    'invalid_request_error',
    'missing_provider',
    'No provider could be determined: send x-gateway-provider (with Authorization), x-gateway-virtual-key or x-gateway-config.',
  ),
  unknownProvider: define(400, 'invalid_request_error', 'unknown_provider', 'Unknown provider.'),
  invalidCustomHost: define(400, 'invalid_request_error', 'invalid_custom_host', 'The custom host is not allowed.'),
  /** A URL the gateway would call (built from a target, or an MCP, webhook or OTel URL) that the upstream guard refuses. */
  invalidUpstreamUrl: define(400, 'invalid_request_error', 'invalid_upstream_url', 'The upstream URL is not allowed.'),
  /** A provider field (Azure resource, deployment, API version, AWS region, …) outside its grammar. */
  invalidProviderField: define(400, 'invalid_request_error', 'invalid_provider_field', 'A provider field has an invalid value.'),
  unsupportedRoute: define(400, 'invalid_request_error', 'unsupported_route', 'The provider does not support this route.'),
  badRequest: define(400, 'invalid_request_error', 'bad_request', 'The request could not be parsed.'),
  /** A value the target provider's API cannot express (e.g. an image URL Bedrock cannot fetch). */
  unsupportedParameter: define(400, 'invalid_request_error', 'unsupported_parameter', 'The provider does not support this parameter value.'),

  // 401/403/404/405
  unauthorized: define(401, 'authentication_error', 'unauthorized', 'Missing or invalid API key.'),
  forbidden: define(403, 'permission_error', 'forbidden', 'This key may not perform this operation.'),
  routeNotFound: define(404, 'not_found_error', 'route_not_found', 'No route matches this method and path.'),
  notFound: define(404, 'not_found_error', 'not_found', 'The resource does not exist.'),
  methodNotAllowed: define(405, 'invalid_request_error', 'method_not_allowed', 'This method is not allowed on this path.'),

  // 408/413/415/431: the transport
  requestTimeout: define(408, 'timeout_error', 'request_timeout', 'The client did not send the request in time.'),
  bodyTooLarge: define(413, 'invalid_request_error', 'body_too_large', 'The request body is too large.'),
  unsupportedContentType: define(
    415,
    'invalid_request_error',
    'unsupported_content_type',
    'The content type must be application/json.',
  ),
  headersTooLarge: define(431, 'invalid_request_error', 'headers_too_large', 'The request headers are too large.'),

  // 5xx: the gateway or the upstream failed
  internal: define(500, 'server_error', 'internal_error', 'The gateway failed to handle the request.'),
  pluginFailed: define(500, 'server_error', 'plugin_error', 'A gateway plugin failed while handling the request.'),
  upstreamUnreachable: define(502, 'upstream_error', 'upstream_unreachable', 'The upstream could not be reached.'),
  upstreamStreamFailed: define(502, 'upstream_error', 'upstream_stream_error', 'The upstream failed in the middle of the response.'),
  upstreamInvalidResponse: define(502, 'upstream_error', 'upstream_invalid_response', 'The upstream sent a response the gateway could not read.'),
  /** The gateway could not obtain the provider's credentials (e.g. a Vertex AI service-account token exchange failed). */
  providerAuthFailed: define(502, 'upstream_error', 'provider_auth_failed', 'The gateway could not obtain credentials for the provider.'),
  upstreamTimeout: define(504, 'timeout_error', 'upstream_timeout', 'The upstream did not answer in time.'),
  /** A stream already under way whose upstream stayed silent past `upstream.stream_idle_timeout`. */
  upstreamIdleTimeout: define(504, 'timeout_error', 'upstream_idle_timeout', 'The upstream stream went silent for too long and was closed.'),
  draining: define(503, 'overloaded_error', 'server_draining', 'The gateway is shutting down.'),
  overloaded: define(503, 'overloaded_error', 'overloaded', 'The gateway is overloaded; retry later.'),
  /** Distributed mode: Valkey is unreachable and the counters this request needs fail closed. */
  sharedStateUnavailable: define(503, 'overloaded_error', 'shared_state_unavailable', 'The shared counters are unreachable; retry later.'),
  /**
   * Distributed mode: an admin write could not reach PostgreSQL (the control plane's authority);
   * nothing was saved on any host. Reads and model traffic go on from each host's replica.
   */
  controlPlaneUnavailable: define(503, 'server_error', 'control_plane_unavailable', 'The control plane database is unreachable; the change was not saved. Retry later.'),
} as const;

/**
 * Builds an error factory for a plugin's own catalog.
 *
 * @example
 *   export const RateLimited = defineError(429, 'rate_limit_error', 'rate_limit_exceeded', 'Rate limit exceeded.');
 *   throw RateLimited(undefined, { headers: { 'retry-after': '3' } });
 */
export function defineError(status: number, type: ErrorType, code: string, defaultMessage: string): Factory {
  return define(status, type, code, defaultMessage);
}

/** Turns anything thrown into a gateway error for the wire; the original stays as `cause`. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (isGatewayError(err)) {
    const e = err as GatewayError;
    return new GatewayError(e.status, e.type, e.code, e.message, { param: e.param, headers: e.headers, cause: err });
  }
  return Errors.internal(undefined, { cause: err });
}
