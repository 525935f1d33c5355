/**
 * Budget errors: the one a caller sees when a budget ran out, or has no room left for its call.
 */
import { defineError } from '../../core/index.js';
import type { Budget } from './budgets.js';

export const UsageErrors = {
  exceeded: defineError(429, 'rate_limit_error', 'usage_limit_exceeded', 'A usage limit (budget) is used up.'),
};

/** The 429 for budget `b`, with `Retry-After` when the budget resets. */
export function budgetExceeded(b: Budget): Error {
  const headers: Record<string, string> = {};
  if (b.resetsAt !== null) headers['retry-after'] = String(Math.max(1, Math.ceil((b.resetsAt - Date.now()) / 1000)));
  return UsageErrors.exceeded(`A ${b.type} budget that applies to this request is used up (${b.limit}${b.type === 'cost' ? ' USD' : ' tokens'}).`, { headers });
}
