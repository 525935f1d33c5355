/**
 * The `admin-catalog` plugin: the read-mostly catalogs of the admin API.
 *
 *   /model-configs/pricing/:provider/:model   public price lookup (host root, no key)
 *   /v1/model-pricing[/:provider/:model]      list prices, set and remove overrides
 *   /v1/mcp-integrations[/:id]                MCP integrations (organisation or workspace)
 *   /v1/mcp-servers[/:id]                     MCP servers (workspace instances of an integration)
 *   /v1/audit-logs                            the admin audit trail
 *
 * Usage metering reads prices through `priceFor` (pricing.ts), the same lookup the public route uses.
 */
import { adminRoutes, definePlugin, headerString, type GatewayApp, type GatewayContext } from '../../core/index.js';
import { catalogOptionsSchema, type CatalogOptions } from './schema.js';
import { pricingRoutes } from './pricing-routes.js';
import { mcpIntegrationRoutes } from './mcp-integrations.js';
import { mcpServerRoutes, type BaseUrl } from './mcp-servers.js';
import { auditLogRoutes } from './audit-logs.js';
import { priceFor } from './pricing.js';

/** A Host value safe to echo into a URL (name or IP literal, optional port). */
const HOST = /^[A-Za-z0-9.[\]:-]{1,255}$/;

function mcpBaseUrl(app: GatewayApp, options: CatalogOptions): BaseUrl {
  if (options.mcp_base_url !== undefined) {
    const fixed = options.mcp_base_url.replace(/\/+$/, '');
    return () => fixed;
  }
  const scheme = app.config.server.tls === undefined ? 'http' : 'https';
  const fallback = `${scheme}://${app.config.server.host}:${app.config.server.port}`;
  return function requestBaseUrl(ctx: GatewayContext): string {
    // HTTP/2 carries the host as `:authority`; HTTP/1.1 as `Host`.
    const host = headerString(ctx.headers, 'host') ?? headerString(ctx.headers, ':authority');
    return host !== undefined && HOST.test(host) ? `${scheme}://${host}` : fallback;
  };
}

export default definePlugin<CatalogOptions>({
  name: 'admin-catalog',
  configSchema: catalogOptionsSchema,
  setup(app, options) {
    // Metering prices usage through this service; core owns its contract (core/usage/cost.ts).
    const store = app.store;
    app.provide('pricing', { priceFor: (provider, model) => priceFor(store, provider, model) });
    return {
      routes: adminRoutes(app, [...pricingRoutes, ...mcpIntegrationRoutes(app.config.security.custom_hosts), ...mcpServerRoutes(mcpBaseUrl(app, options)), ...auditLogRoutes]),
    };
  },
});
