/**
 * Assembles a gateway from a loaded config: the upstream agent, the runtime (plugins, routes,
 * validators), the listener. Owns reload and graceful shutdown.
 *
 * Reload builds a complete new runtime first; only when that succeeded is it swapped in, in one
 * assignment, so a request sees either the old pipeline or the new one, never a mix. The old
 * runtime's plugins are closed once its last in-flight request finished.
 */
import { Agent } from './upstream/undici.js';
import type { GatewayConfig, Locator } from './config/types.js';
import { buildPipeline } from './pipeline.js';
import { buildRouteTable } from './routes.js';
import { ProviderRegistry } from './providers/registry.js';
import { createRequestValidator } from './validation/index.js';
import { closePlugins, loadPlugins, type PluginCatalog } from './plugin-loader.js';
import { createRequestHandler } from './request-handler.js';
import { listen, type Listener } from './server.js';
import { createLogger, type Logger } from './logger.js';
import type { Runtime } from './runtime.js';
import { openStore, type Store } from './store/store.js';
import { bootstrap } from './store/bootstrap.js';
import { openDistributed } from './store/distributed/connections.js';
import { requireSharedMasterKey } from './store/distributed/replica.js';
import { createTokenCounter } from './workers/token-counter.js';
import type { TokenCounter } from './workers/types.js';
import { buildOpenApi } from './admin/openapi.js';
import { startAuditRetention } from './admin/audit-retention.js';
import { reply } from './reply.js';
import { VERSION } from './version.js';
import { guardedConnector, type HostResolver } from './upstream/connect-guard.js';

export interface GatewayOptions {
  /** The standard plugins by name (the CLI passes `plugins/index.ts`); default none. */
  catalog?: PluginCatalog;
  /** Positions for error messages about plugin options; default: none known. */
  locate?: Locator;
  logger?: Logger;
  /** Environment for the bootstrap (`GATEWAY_ADMIN_KEY`, `GATEWAY_MASTER_KEY`); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** How upstream host names are resolved for the connect-time check; default the OS resolver (tests inject one). */
  resolveHost?: HostResolver;
  /**
   * Called with the admin key this first start generated, as soon as it is stored and before the
   * listener starts, so a start that fails later (a port in use) never leaves an unseen key.
   */
  onAdminKey?(key: string): void;
}

export interface Gateway {
  /** `http://127.0.0.1:PORT` (or https), usable by clients on this host. */
  readonly url: string;
  readonly port: number;
  /** The address the listener is bound to, as `host:port` (`0.0.0.0:8787` for all interfaces). */
  readonly bound: string;
  readonly config: GatewayConfig;
  readonly store: Store;
  /** The admin key generated on this first start (print it once), if one was. */
  readonly generatedAdminKey: string | undefined;
  /** Swaps in a new config for new requests; throws (and keeps the old one) if it cannot run. */
  reload(config: GatewayConfig, locate?: Locator): Promise<void>;
  /** Drains (bounded by `server.shutdown_grace`) and closes everything. Idempotent. */
  close(): Promise<void>;
}

const noLocation: Locator = () => ({ line: 0, column: 0 });

interface BuildOptions {
  catalog: PluginCatalog;
  locate: Locator;
  log: Logger;
  store: Store;
  tokens: TokenCounter;
}

async function buildRuntime(config: GatewayConfig, agent: Agent, options: BuildOptions): Promise<Runtime> {
  // Vertex AI's token exchange goes through this runtime's URL policy and the guarded agent.
  const providers = new ProviderRegistry(undefined, { policy: () => config.security.custom_hosts, dispatcher: agent });
  const plugins = await loadPlugins({ config, locate: options.locate, catalog: options.catalog, providers, log: options.log, store: options.store, tokens: options.tokens, upstream: agent });
  const pipeline = buildPipeline(plugins);
  // The OpenAPI document describes exactly the admin routes this pipeline serves.
  const openapi = JSON.stringify(buildOpenApi(pipeline.routes, VERSION));
  const coreRoutes = [{ plugin: 'core', route: { method: 'GET' as const, path: '/v1/openapi.json', body: 'none' as const, meta: { public: true }, handler: () => reply(200, openapi, { 'content-type': 'application/json' }) } }];
  return {
    config,
    pipeline,
    store: options.store,
    tokens: options.tokens,
    routes: buildRouteTable([...pipeline.routes, ...coreRoutes]),
    providers,
    validate: createRequestValidator(),
    agent,
    log: options.log,
    inflight: 0,
  };
}

/**
 * Starts a gateway.
 *
 * @example
 *   const { config } = await loadConfigFile('config/gateway.yaml');
 *   const gw = await createGateway(config!);
 *   // … later
 *   await gw.close();
 */
export async function createGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const log = options.logger ?? createLogger();
  const catalog = options.catalog ?? {};
  const { postgres, redis } = config.store;
  const env = options.env ?? process.env;
  // Before any connection: a host that cannot open the others' sealed secrets must not start.
  if (postgres && redis) requireSharedMasterKey(env);
  const distributed = postgres && redis ? await openDistributed(postgres, redis, log) : undefined;
  let store: Store;
  try {
    store = openStore({ dir: config.store.path, log, env, mapSize: config.store.map_size, distributed });
  } catch (err) {
    await distributed?.close();
    throw err;
  }
  let boot: Awaited<ReturnType<typeof bootstrap>>;
  try {
    // Distributed mode: migrate PostgreSQL, load the replica, follow the change feed.
    await store.replica?.start();
    // Without `auth` nothing checks keys: a generated admin key would only be a secret nobody needs.
    boot = await bootstrap(store, env, log, { generate: config.pipeline.some((p) => p.name === 'auth') });
    if (boot.generatedAdminKey !== undefined) options.onAdminKey?.(boot.generatedAdminKey);
  } catch (err) {
    await store.close();
    throw err;
  }
  // Threads start on the first large count only; reloads share this one counter.
  const tokens = createTokenCounter();
  const agent = new Agent({
    connections: config.upstream.connections,
    keepAliveTimeout: config.upstream.keep_alive_timeout,
    keepAliveMaxTimeout: Math.max(config.upstream.keep_alive_timeout, 600_000),
    // Every upstream connection passes the connect-time address check, against the policy of
    // the runtime in force (a reload changes it for new connections).
    connect: guardedConnector({ timeout: config.upstream.connect_timeout, policy: () => current.config.security.custom_hosts, resolve: options.resolveHost }),
  });
  let current: Runtime;
  try {
    current = await buildRuntime(config, agent, { catalog, locate: options.locate ?? noLocation, log, store, tokens });
  } catch (err) {
    await tokens.close();
    await store.close();
    throw err;
  }
  const retiring = new Set<Runtime>();
  let draining = false;

  const handler = createRequestHandler({
    runtime: () => current,
    get draining() {
      return draining;
    },
  });
  let listener: Listener;
  try {
    listener = await listen(config.server, handler, log, config.baseDir);
  } catch (err) {
    await closePlugins(current.pipeline.plugins, log);
    await tokens.close();
    await agent.close();
    await store.close();
    throw err;
  }
  const host = listener.host === '0.0.0.0' ? '127.0.0.1' : listener.host === '::' ? '[::1]' : listener.host.includes(':') ? `[${listener.host}]` : listener.host;
  const url = `${listener.secure ? 'https' : 'http'}://${host}:${listener.port}`;
  const bound = `${listener.host.includes(':') ? `[${listener.host}]` : listener.host}:${listener.port}`;
  let closing: Promise<void> | undefined;
  // The audit trail is core's (every admin plugin writes it): so is its retention. Bounds are read
  // from the current config at each run.
  const stopAuditRetention = startAuditRetention(store, () => current.config.audit, log);

  function retire(old: Runtime): void {
    retiring.add(old);
    const check = (): void => {
      if (old.inflight > 0 && !draining) return void setTimeout(check, 100).unref();
      retiring.delete(old);
      void closePlugins(old.pipeline.plugins, log);
    };
    check();
  }

  return {
    url,
    port: listener.port,
    bound,
    store,
    generatedAdminKey: boot.generatedAdminKey,
    get config() {
      return current.config;
    },
    async reload(next, locate) {
      const fixed = ['host', 'port', 'tls', 'keep_alive_timeout', 'headers_timeout', 'request_timeout', 'max_header_size'] as const;
      const changed = fixed.filter((k) => JSON.stringify(next.server[k]) !== JSON.stringify(current.config.server[k]));
      if (changed.length > 0) log.warn('reload: listener settings need a restart and were not applied', { keys: changed.map((k) => `server.${k}`) });
      const fresh = await buildRuntime(next, agent, { catalog, locate: locate ?? noLocation, log, store, tokens });
      const old = current;
      current = fresh;
      retire(old);
      log.info('config reloaded', { plugins: fresh.pipeline.plugins.map((p) => p.name) });
    },
    close() {
      closing ??= (async () => {
        draining = true;
        stopAuditRetention();
        const inflight = (): number => current.inflight + [...retiring].reduce((n, r) => n + r.inflight, 0);
        await listener.close(current.config.server.shutdown_grace, inflight);
        for (const old of retiring) await closePlugins(old.pipeline.plugins, log);
        await closePlugins(current.pipeline.plugins, log);
        await tokens.close();
        // Every client request is finished or cut by now; nothing upstream is worth waiting for.
        await agent.destroy();
        // Pending asynchronous writes (audit, logs) are committed before the env closes.
        await store.flush();
        await store.close();
      })();
      return closing;
    },
  };
}
