/**
 * Config errors: the config the request names is malformed, unknown, or not allowed for this key.
 */
import { defineError } from '../../core/index.js';

export const ConfigErrors = {
  invalidJson: defineError(400, 'invalid_request_error', 'invalid_config', 'x-gateway-config is neither a config id nor a JSON object.'),
  unknown: defineError(400, 'invalid_request_error', 'unknown_config', 'No saved config with this id or slug exists in this workspace.'),
  overrideBlocked: defineError(403, 'permission_error', 'config_override_not_allowed', 'This API key pins its config; x-gateway-config is not allowed.'),
  unknownSlug: defineError(400, 'invalid_request_error', 'unknown_provider_slug', 'No provider or virtual key has this slug in this workspace.'),
};
