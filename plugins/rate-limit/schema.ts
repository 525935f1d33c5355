/**
 * Options of the `rate-limit` plugin.
 *
 *   - rate-limit                       # defaults
 *   - rate-limit:
 *       default_max_tokens: 1024       # output tokens reserved when a request names no max_tokens
 */
export interface RateLimitOptions {
  default_max_tokens: number;
}

export const rateLimitSchema = {
  type: 'object',
  properties: {
    default_max_tokens: { type: 'integer', minimum: 0, default: 1024 },
  },
  additionalProperties: false,
};
