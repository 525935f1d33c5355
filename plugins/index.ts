/**
 * The standard plugins by the name the YAML pipeline uses. Each module loads lazily, so a
 * pipeline pays only for the plugins it lists. New standard plugins are added here.
 */
import type { PluginCatalog } from '../core/index.js';

export const standardPlugins: PluginCatalog = {
  auth: () => import('./auth/index.js'),
  'virtual-keys': () => import('./virtual-keys/index.js'),
  'config-strategy': () => import('./config-strategy/index.js'),
  guardrails: () => import('./guardrails/index.js'),
  cache: () => import('./cache/index.js'),
  'usage-limits': () => import('./usage-limits/index.js'),
  'admin-policies': () => import('./admin-policies/index.js'),
  'admin-api-keys': () => import('./admin-api-keys/index.js'),
  'admin-org': () => import('./admin-org/index.js'),
  'admin-catalog': () => import('./admin-catalog/index.js'),
  'admin-resources': () => import('./admin-resources/index.js'),
  'rate-limit': () => import('./rate-limit/index.js'),
  analytics: () => import('./analytics/index.js'),
  metrics: () => import('./metrics/index.js'),
  otel: () => import('./otel/index.js'),
  logging: () => import('./logging/index.js'),
  console: () => import('./console/index.js'),
  'mcp-gateway': () => import('./mcp-gateway/index.js'),
  prompts: () => import('./prompts/index.js'),
  realtime: () => import('./realtime/index.js'),
  'responses-store': () => import('./responses-store/index.js'),
};
