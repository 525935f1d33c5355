/**
 * Budget errors: the one a caller sees when a budget ran out.
 */
import { defineError } from '../../core/index.js';

export const UsageErrors = {
  exceeded: defineError(429, 'rate_limit_error', 'usage_limit_exceeded', 'A usage limit (budget) is used up.'),
};
