/**
 * The admin API's error catalog (the one error shape, stable codes).
 */
import { defineError, type GatewayError } from '../errors.js';

const unauthenticated = defineError(401, 'authentication_error', 'unauthorized', 'Missing or invalid API key.');
const forbidden = defineError(403, 'permission_error', 'forbidden', 'This key may not perform this operation.');
const insufficientScope = defineError(403, 'permission_error', 'insufficient_scope', 'This key lacks the scope for this operation.');
const notFound = defineError(404, 'not_found_error', 'not_found', 'The resource does not exist.');
const conflict = defineError(409, 'invalid_request_error', 'conflict', 'The resource already exists.');
const invalid = defineError(400, 'invalid_request_error', 'invalid_value', 'A field has a value that is not allowed.');

export const AdminErrors = {
  unauthenticated: (message?: string): GatewayError => unauthenticated(message),
  forbidden: (message?: string, param?: string): GatewayError => forbidden(message, { param: param ?? null }),
  insufficientScope: (message?: string): GatewayError => insufficientScope(message),
  notFound: (message?: string, param?: string): GatewayError => notFound(message, { param: param ?? null }),
  conflict: (message?: string, param?: string): GatewayError => conflict(message, { param: param ?? null }),
  invalid: (message: string, param: string): GatewayError => invalid(message, { param }),
};
