/**
 * The `admin-resources` plugin: the admin API of the resources requests are routed with.
 *
 *   /v1/configs          routing configs, versioned            configs.ts
 *   /v1/virtual-keys     provider credentials by slug          virtual-keys.ts
 *   /v1/integrations     organisation or workspace credentials integrations.ts
 *   /v1/providers        a workspace's instance of one         providers.ts
 *
 * The routing plugin reads them through `resolveConfig`, `resolveVirtualKey` and
 * `resolveProvider` (secrets unsealed there and nowhere else).
 */
import { adminRoutes, definePlugin, optionalService } from '../../core/index.js';
import { configRoutes, resolveConfig } from './configs.js';
import { virtualKeyRoutes, resolveVirtualKey } from './virtual-keys.js';
import { integrationRoutes } from './integrations.js';
import { providerRoutes, resolveProvider } from './providers.js';

export { resolveConfig } from './configs.js';
export { resolveVirtualKey } from './virtual-keys.js';
export { resolveProvider } from './providers.js';
export type { ResolvedCredentials } from './provider-fields.js';

export default definePlugin({
  name: 'admin-resources',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    // Custom hosts are checked when saved, against the same policy the router applies.
    const policy = app.config.security.custom_hosts;
    // Guardrail lists in saved configs are checked by the guardrails plugin, when it runs.
    const guardrails = optionalService(app, 'guardrails', 'guardrail lists in saved configs are checked by the routing schema only');
    // The routing plugins find stored credentials through this service, never through our files.
    const store = app.store;
    app.provide('credentials', {
      virtualKey: (slug, workspaceId) => resolveVirtualKey(store, slug, workspaceId),
      provider: (slug, workspaceId) => resolveProvider(store, slug, workspaceId),
      config: (slugOrId, workspaceId) => resolveConfig(store, slugOrId, workspaceId),
    });
    return {
      routes: adminRoutes(app, [...configRoutes({ policy, guardrails }), ...virtualKeyRoutes(policy), ...integrationRoutes(policy), ...providerRoutes]),
    };
  },
});
