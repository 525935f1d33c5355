/**
 * The `admin-policies` plugin: the rate limits and usage limits policy APIs
 * (`/v1/policies/rate-limits`, `/v1/policies/usage-limits`). Enforcement lives in the
 * `rate-limit` and `usage-limits` plugins.
 */
import { adminRoutes, definePlugin } from '../../core/index.js';
import { rateLimitPolicyRoutes } from './rate-limits.js';
import { usageLimitPolicyRoutes } from './usage-limits.js';

export default definePlugin({
  name: 'admin-policies',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    return { routes: adminRoutes(app, [...rateLimitPolicyRoutes, ...usageLimitPolicyRoutes]) };
  },
});
