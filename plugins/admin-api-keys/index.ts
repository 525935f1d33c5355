/**
 * The `admin-api-keys` plugin: the API key admin API (`/v1/api-keys`): create the three kinds
 * (organisation service, workspace service, workspace user), list, get, update, delete, rotate,
 * and the scopes the caller may grant each kind.
 * Authentication with the keys is the `auth` plugin's; `gateway keys create` (cli/keys.ts)
 * creates keys from the command line.
 */
import { adminRoutes, definePlugin, optionalService } from '../../core/index.js';
import { createRoutes } from './create.js';
import { manageRoutes } from './manage.js';
import { rotateRoutes } from './rotate.js';
import { grantableRoute } from './grantable.js';

export default definePlugin({
  name: 'admin-api-keys',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    // `defaults.input_guardrails` / `output_guardrails` are checked by the guardrails plugin.
    const guardrails = optionalService(app, 'guardrails', 'API keys cannot name guardrails in their defaults');
    return { routes: adminRoutes(app, [...createRoutes(guardrails), ...manageRoutes(guardrails), ...rotateRoutes, grantableRoute]) };
  },
});
