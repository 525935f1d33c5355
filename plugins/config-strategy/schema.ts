/**
 * Options of the `config-strategy` plugin.
 *
 *   - config-strategy:
 *       circuit_breaker: {failure_threshold: 5, failure_rate: 0.5, min_requests: 10, window_ms: 30000, cooldown_ms: 30000}
 *       # circuit_breaker: false   turns breakers off
 */
import { DEFAULT_BREAKER, type BreakerSettings } from '../../core/index.js';

export interface ConfigStrategyOptions {
  circuit_breaker: BreakerSettings | false;
}

export const configStrategySchema = {
  type: 'object',
  properties: {
    circuit_breaker: {
      default: DEFAULT_BREAKER,
      anyOf: [
        { const: false },
        {
          type: 'object',
          properties: {
            failure_threshold: { type: 'integer', minimum: 1, default: DEFAULT_BREAKER.failure_threshold },
            failure_rate: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: DEFAULT_BREAKER.failure_rate },
            min_requests: { type: 'integer', minimum: 1, default: DEFAULT_BREAKER.min_requests },
            window_ms: { type: 'integer', minimum: 100, default: DEFAULT_BREAKER.window_ms },
            cooldown_ms: { type: 'integer', minimum: 0, default: DEFAULT_BREAKER.cooldown_ms },
          },
          additionalProperties: false,
        },
      ],
    },
  },
  additionalProperties: false,
};
