/**
 * The auth plugin's errors. 401 says "who are you?" (missing, unknown, expired, revoked key);
 * 403 says "not this" (a scope or key kind the operation needs).
 */
import { defineError } from '../../core/index.js';

export const AuthErrors = {
  missingKey: defineError(401, 'authentication_error', 'missing_api_key', 'Send an API key in the x-gateway-api-key header.'),
  invalidKey: defineError(401, 'authentication_error', 'invalid_api_key', 'The API key is not valid.'),
  expiredKey: defineError(401, 'authentication_error', 'expired_api_key', 'The API key has expired.'),
  invalidToken: defineError(401, 'authentication_error', 'invalid_token', 'The token is not valid.'),
  insufficientScope: defineError(403, 'permission_error', 'insufficient_scope', 'This key lacks the scope for this operation.'),
};
