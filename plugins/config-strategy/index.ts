/**
 * The `config-strategy` plugin: turns a routing config into the router's plan.
 *
 * Where the config comes from, first match wins:
 *   1. `x-gateway-config`: a JSON config (validated; errors name the path, e.g.
 *      `config.targets[1].weight`) or a saved config's slug or id;
 *   2. the API key's `defaults.config_id` (with `allow_config_override: false`, a request-time
 *      config is refused with 403);
 *   3. a model written `@<slug>/<model>`: the stored provider (or virtual key) with that slug,
 *      called with `<model>`.
 * Otherwise the request goes on as it came (a virtual key, or direct mode).
 *
 * Distributed mode: a saved config, @slug or virtual key unknown here (perhaps created through
 * another host a moment ago) waits for one coalesced catch-up of the replica and is looked up again.
 *
 * It also owns the circuit-breaker settings (plugin options) and shows breaker state to operators
 * at `GET /v1/admin/routing/breakers` (reset: `POST /v1/admin/routing/breakers/reset`).
 */
import {
  actingWorkspace,
  adminRoutes,
  breakerSnapshot,
  shareBreakersThrough,
  defineAdminRoute,
  definePlugin,
  headerString,
  lazyCredentials,
  resetBreakers,
  retryOnMiss,
  slugTarget,
  validateRoutingConfig,
  S,
  type GatewayContext,
  type RoutePlan,
} from '../../core/index.js';
import { deepFreeze, TreeCache, type BuildContext } from './build-plan.js';
import { configStrategySchema, type ConfigStrategyOptions } from './schema.js';
import { ConfigErrors } from './errors.js';

const MODEL_SLUG = /^@([A-Za-z0-9_-]+)\/(.+)$/;
/** Distinct inline configs kept parsed; past it the memo starts over. */
const MAX_INLINE_CONFIGS = 256;

export default definePlugin<ConfigStrategyOptions>({
  name: 'config-strategy',
  configSchema: configStrategySchema,
  setup(app, options) {
    const credentials = lazyCredentials(app);
    const breaker = options.circuit_breaker === false ? undefined : options.circuit_breaker;
    // Distributed mode: a circuit opened by one host is open on every host.
    const shared = breaker !== undefined && app.store.distributed !== undefined ? shareBreakersThrough(app.store.distributed, app.log) : undefined;

    /** Valid inline configs by their header text. */
    const inlineConfigs = new Map<string, Record<string, unknown>>();
    const trees = new TreeCache();

    function savedConfig(slug: string, workspaceId: string): Record<string, unknown> {
      const config = credentials().config(slug, workspaceId);
      if (config === undefined) throw ConfigErrors.unknown('No saved config with the id or slug in x-gateway-config exists in this workspace.', { param: 'x-gateway-config' });
      return config;
    }

    /** The config this request runs with, and where it came from; undefined when none applies. */
    function chooseConfig(ctx: GatewayContext, workspaceId: string): { config: Record<string, unknown>; source: string } | undefined {
      const header = headerString(ctx.headers, 'x-gateway-config');
      const defaults = ctx.get('principal')?.defaults;
      const pinned = typeof defaults?.config_id === 'string' && defaults.config_id.length > 0 ? defaults.config_id : undefined;
      if (header !== undefined && header.trim().length > 0) {
        if (pinned !== undefined && defaults?.allow_config_override === false) throw ConfigErrors.overrideBlocked(undefined, { param: 'x-gateway-config' });
        const text = header.trim();
        if (!text.startsWith('{')) return { config: savedConfig(text, workspaceId), source: `config:${text}` };
        const known = inlineConfigs.get(text);
        if (known !== undefined) return { config: known, source: 'x-gateway-config' };
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw ConfigErrors.invalidJson(undefined, { param: 'x-gateway-config' });
        }
        const invalid = validateRoutingConfig(parsed);
        if (invalid) throw invalid;
        // A client sends the same inline config with every request: it is parsed and checked once,
        // and the frozen result is shared (plugins cache what they derive from it by identity).
        const config = deepFreeze(parsed as Record<string, unknown>);
        if (inlineConfigs.size >= MAX_INLINE_CONFIGS) inlineConfigs.clear();
        inlineConfigs.set(text, config);
        return { config, source: 'x-gateway-config' };
      }
      if (pinned !== undefined) return { config: savedConfig(pinned, workspaceId), source: `config:${pinned}` };
      return undefined;
    }

    function modelSlugPlan(ctx: GatewayContext, workspaceId: string): RoutePlan | undefined {
      const model = ctx.body?.model;
      const m = typeof model === 'string' ? MODEL_SLUG.exec(model) : null;
      if (m === null) return undefined;
      const target = slugTarget(credentials(), m[1]!, workspaceId);
      if (target === undefined) throw ConfigErrors.unknownSlug('No provider or virtual key has the @slug named in model in this workspace.', { param: 'model' });
      // The provider sees the plain model name.
      return { root: { target, override_params: { model: m[2] } }, source: `model:@${m[1]}`, ...(breaker ? { breaker } : {}) };
    }

    return {
      onRequestBody: retryOnMiss(app, ['unknown_config', 'unknown_provider_slug', 'invalid_virtual_key'], (ctx: GatewayContext) => {
        if (ctx.route.kind !== 'model' && ctx.route.kind !== 'passthrough') return;
        const workspaceId = actingWorkspace(app, ctx);
        const chosen = chooseConfig(ctx, workspaceId);
        if (chosen === undefined) {
          const plan = modelSlugPlan(ctx, workspaceId);
          if (plan !== undefined) ctx.plan = plan;
          return;
        }
        ctx.set('routingConfig', chosen.config);
        const build: BuildContext = { ctx, credentials, workspaceId, hosts: app.config.security.custom_hosts };
        const cache = chosen.config.cache as RoutePlan['cache'] | undefined;
        ctx.plan = { root: trees.root(chosen.config, build), source: chosen.source, ...(breaker ? { breaker } : {}), ...(cache ? { cache } : {}) };
      }),
      ...(shared ? { close: () => shared.close() } : {}),
      routes: adminRoutes(app, [
        defineAdminRoute({
          method: 'GET',
          path: '/v1/admin/routing/breakers',
          summary: 'Circuit-breaker state of every upstream target this process has called',
          resource: 'routing',
          action: 'read',
          scope: 'organisation_settings.read',
          level: 'organisation',
          response: S.listOf(
            S.record({ key: S.str, label: S.str, state: S.str, failures: S.int, requests: S.int, opened_at: S.strOrNull, opens: S.int }),
          ),
          handler() {
            const data = breakerSnapshot();
            return { object: 'list', total: data.length, data };
          },
        }),
        defineAdminRoute({
          method: 'POST',
          path: '/v1/admin/routing/breakers/reset',
          summary: 'Close every circuit breaker (after an operator fixed an upstream)',
          resource: 'routing',
          action: 'reset',
          scope: 'organisation_settings.update',
          level: 'organisation',
          response: S.empty,
          handler() {
            resetBreakers();
            return {};
          },
        }),
      ]),
    };
  },
});
