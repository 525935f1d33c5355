/**
 * Test helpers: a real gateway and a real mock upstream on port 0, torn down with the test.
 *
 *   const mock = await startMock(t);
 *   const gw = await startGateway(t, { yaml: 'pipeline: [order-a]', plugins: { 'order-a': pluginA } });
 *   const client = sdk(gw, mock);
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { createGateway, type Gateway } from '../../core/gateway.js';
import type { HostResolver } from '../../core/upstream/connect-guard.js';
import { loadConfigText } from '../../core/config/load.js';
import { createLogger } from '../../core/logger.js';
import { definePlugin, type PluginDefinition } from '../../core/plugin.js';
import type { Usage } from '../../core/usage/types.js';
import type { PluginCatalog } from '../../core/plugin-loader.js';
import { startMockUpstream, type MockUpstream } from '../../bench/mock-upstream.js';
import { standardPlugins } from '../../plugins/index.js';
import { newApiKey } from '../../core/store/api-key-record.js';
import { uuidv7 } from '../../core/store/ids.js';
import type { Store } from '../../core/store/store.js';
import type * as Records from '../../core/store/records.js';

/** The part of tap's Test the helpers use (keeps the helpers independent of tap's types). */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface StartedGateway extends Gateway {
  /** Every log line the gateway wrote, parsed. */
  logs: Array<Record<string, unknown>>;
}

export const ADMIN_KEY = 'gw-test-admin-key-0123456789abcdefghijklmnop';

export interface StartOptions {
  /** YAML merged under a test default (port 0, loopback custom hosts allowed). */
  yaml?: string;
  /** Extra plugins the YAML pipeline may name, by name (the standard ones are always there). */
  plugins?: Record<string, PluginDefinition<never>>;
  env?: NodeJS.ProcessEnv;
  /** Resolves upstream host names for the connect-time guard (no network in tests). */
  resolveHost?: HostResolver;
}

/** A fresh directory under the OS temp dir (for data dirs, YAML files, plugin modules). */
export function tempDir(prefix = 'gw-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startGateway(t: Teardown, options: StartOptions = {}): Promise<StartedGateway> {
  const dir = tempDir();
  const file = join(dir, 'gateway.yaml');
  const yaml = options.yaml ?? '';
  const text = /^server:/m.test(yaml) ? yaml : `server: {host: 127.0.0.1, port: 0}\n${yaml}`;
  writeFileSync(file, text);
  const { config, problems, locate } = loadConfigText(text, file, { ...options.env });
  if (config === null || problems.length > 0) throw new Error(`test config invalid: ${JSON.stringify(problems)}`);
  config.store.path = join(dir, 'data');
  const logs: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const catalog: Record<string, () => Promise<{ default: PluginDefinition<never> }>> = { ...(standardPlugins as Record<string, () => Promise<{ default: PluginDefinition<never> }>>) };
  for (const [name, def] of Object.entries(options.plugins ?? {})) catalog[name] = async () => ({ default: def });
  // The machine's environment never leaks in: a test names every variable it wants.
  const gw = await createGateway(config, { catalog: catalog as PluginCatalog, locate, logger, env: { ...options.env }, resolveHost: options.resolveHost });
  t.teardown(() => gw.close());
  return Object.assign(gw, { logs }) as StartedGateway;
}

export async function startMock(t: Teardown): Promise<MockUpstream> {
  const mock = await startMockUpstream({ port: 0 });
  t.teardown(() => mock.close());
  return mock;
}

/** Direct-mode headers that point the gateway at the mock (optionally with a directive prefix). */
export function direct(mock: MockUpstream, directives = ''): Record<string, string> {
  const prefix = directives ? `/mock/${directives}` : '';
  return {
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': `${mock.url}${prefix}/v1`,
    authorization: 'Bearer sk-test-provider-key',
  };
}

/** The official OpenAI SDK pointed at the gateway, in direct mode to the mock. */
export function sdk(gw: Gateway, mock: MockUpstream, directives = '', headers: Record<string, string> = {}): OpenAI {
  const h = direct(mock, directives);
  return new OpenAI({
    baseURL: `${gw.url}/v1`,
    apiKey: 'sk-test-provider-key',
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-provider': h['x-gateway-provider']!, 'x-gateway-custom-host': h['x-gateway-custom-host']!, ...headers },
  });
}

export function writeFile(dir: string, name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

export type { MockUpstream };

/** Writes an API key straight into the store (for tests whose pipeline has no key API); returns the raw key. */
export function insertKey(
  store: Store,
  opts: { type?: Records.ApiKeyType; workspace_id: string | null; scopes: ReadonlyArray<string>; user_id?: string | null; name?: string },
): string {
  const { record, raw } = newApiKey({
    type: opts.type ?? (opts.workspace_id === null ? 'organisation-service' : 'workspace-service'),
    name: opts.name ?? 'test key',
    organisation_id: store.meta.get('organisation_id') as string,
    workspace_id: opts.workspace_id,
    user_id: opts.user_id ?? null,
    scopes: [...opts.scopes],
  });
  store.c.apiKeys.insert(record);
  return raw;
}

/** A workspace written straight into the store, with a workspace service key in it. */
export function addWorkspace(store: Store, slug: string, scopes: ReadonlyArray<string>): { id: string; key: string } {
  const now = new Date().toISOString();
  const id = uuidv7();
  store.c.workspaces.insert({
    id,
    slug,
    name: slug,
    description: null,
    organisation_id: store.meta.get('organisation_id') as string,
    defaults: { metadata: {} },
    usage_limits: [],
    rate_limits: [],
    status: 'active',
    created_at: now,
    last_updated_at: now,
  });
  return { id, key: insertKey(store, { workspace_id: id, scopes, name: `${slug} key` }) };
}

/**
 * A plugin that turns usage metering on and records each request's usage as its response ends,
 * for tests that compare what the gateway metered (`pipeline: [probe]`).
 *
 * @example
 *   const { probe, usages } = usageProbe();
 *   const gw = await startGateway(t, { yaml: 'pipeline: [probe]\n', plugins: { probe } });
 */
export function usageProbe(): { probe: PluginDefinition<never>; usages: Array<Usage | undefined> } {
  const usages: Array<Usage | undefined> = [];
  const probe = definePlugin({ name: 'probe', setup: () => ({ meterUsage: true, onResponseEnd: (ctx) => void usages.push(ctx.usage) }) }) as PluginDefinition<never>;
  return { probe, usages };
}
