/**
 * The gateway's one LMDB environment (`<data dir>/gateway.mdb`) and the collections in it.
 *
 * Every process using the same data dir opens the same env (LMDB is multi-process safe: a write
 * transaction holds a robust mutex; readers never block). Collections are typed views over named
 * sub-databases; the schema version in the meta db drives migrations, run once at open inside
 * one transaction.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Collection, closeWriteSignal, type CollectionDefinition } from './collection.js';
import { createCapacity, type StoreCapacity } from './capacity.js';
import { guardCommitFailures } from './write-failures.js';
import { createSecretBox, loadMasterKey, type SecretBox } from './secrets.js';
import type * as R from './records.js';
import type { Logger } from '../logger.js';
import type { Distributed } from './distributed/connections.js';
import { ControlPlaneReplica, requireSharedMasterKey } from './distributed/replica.js';

/** Bumped when a migration is added below. */
export const SCHEMA_VERSION = 1;

type Migration = (store: Store) => void;
/** `migrations[n]` upgrades a store from version n to n+1. Version 0 is an empty env. */
const migrations: Migration[] = [
  () => {
    // 0 → 1: the initial collections; nothing to convert.
  },
];

const byWorkspace = <T extends { workspace_id: string | null }>() => ({ key: (r: T) => r.workspace_id });
const bySlug = <T extends { slug: string }>() => ({ key: (r: T) => r.slug, unique: true });

/** Every collection of the control plane, with its indexes. */
function defineCollections(c: <T extends { id: string }>(def: CollectionDefinition<T>) => Collection<T>) {
  return {
    organisations: c<R.Organisation>({ name: 'organisations' }),
    workspaces: c<R.Workspace>({ name: 'workspaces', indexes: { slug: bySlug<R.Workspace>() } }),
    users: c<R.User>({ name: 'users', indexes: { email: { key: (u) => u.email.toLowerCase(), unique: true } } }),
    members: c<R.WorkspaceMember>({
      name: 'workspace_members',
      indexes: { workspace: { key: (m) => m.workspace_id }, user: { key: (m) => m.user_id } },
    }),
    invites: c<R.Invite>({
      name: 'invites',
      indexes: { token: { key: (i) => i.token_hash, unique: true }, email: { key: (i) => i.email.toLowerCase() } },
    }),
    apiKeys: c<R.ApiKeyRecord>({
      name: 'api_keys',
      indexes: {
        // Both the live and the rotated-out secret resolve to the key during a transition.
        hash: { key: (k) => (k.previous_hash ? [k.hash, k.previous_hash] : k.hash), unique: true },
        workspace: byWorkspace<R.ApiKeyRecord>(),
      },
    }),
    configs: c<R.ConfigRecord>({ name: 'configs', indexes: { slug: bySlug<R.ConfigRecord>(), workspace: byWorkspace<R.ConfigRecord>() } }),
    configVersions: c<R.ConfigVersion>({ name: 'config_versions', indexes: { config: { key: (v) => v.config_id } } }),
    guardrails: c<R.GuardrailRecord>({ name: 'guardrails', indexes: { slug: bySlug<R.GuardrailRecord>(), workspace: byWorkspace<R.GuardrailRecord>() } }),
    guardrailVersions: c<R.GuardrailVersion>({ name: 'guardrail_versions', indexes: { guardrail: { key: (v) => v.guardrail_id } } }),
    prompts: c<R.PromptRecord>({ name: 'prompts', indexes: { slug: bySlug<R.PromptRecord>(), workspace: byWorkspace<R.PromptRecord>() } }),
    // `${prompt_id}:${version}` is unique: two saves racing for one number cannot both land.
    promptVersions: c<R.PromptVersion>({
      name: 'prompt_versions',
      indexes: { prompt: { key: (v) => v.prompt_id }, number: { key: (v) => `${v.prompt_id}:${v.version}`, unique: true } },
    }),
    promptPartials: c<R.PromptPartialRecord>({
      name: 'prompt_partials',
      // Slugs are unique like every other resource's; a template includes a partial of its own workspace only.
      indexes: { slug: bySlug<R.PromptPartialRecord>(), workspace: byWorkspace<R.PromptPartialRecord>() },
    }),
    promptPartialVersions: c<R.PromptPartialVersion>({
      name: 'prompt_partial_versions',
      indexes: { partial: { key: (v) => v.partial_id } },
    }),
    virtualKeys: c<R.VirtualKeyRecord>({
      name: 'virtual_keys',
      indexes: { slug: bySlug<R.VirtualKeyRecord>(), workspace: byWorkspace<R.VirtualKeyRecord>() },
    }),
    integrations: c<R.IntegrationRecord>({ name: 'integrations', indexes: { slug: bySlug<R.IntegrationRecord>() } }),
    providers: c<R.ProviderRecord>({
      name: 'providers',
      indexes: { slug: bySlug<R.ProviderRecord>(), workspace: byWorkspace<R.ProviderRecord>() },
    }),
    rateLimitPolicies: c<R.RateLimitPolicy>({ name: 'rate_limit_policies', indexes: { workspace: byWorkspace<R.RateLimitPolicy>() } }),
    usageLimitPolicies: c<R.UsageLimitPolicy>({ name: 'usage_limit_policies', indexes: { workspace: byWorkspace<R.UsageLimitPolicy>() } }),
    policyUsage: c<R.PolicyUsageEntity>({ name: 'policy_usage', indexes: { policy: { key: (e) => e.policy_id } } }),
    pricing: c<R.ModelPricing>({ name: 'model_pricing', indexes: { provider: { key: (p) => p.provider } } }),
    mcpIntegrations: c<R.McpIntegrationRecord>({ name: 'mcp_integrations', indexes: { slug: bySlug<R.McpIntegrationRecord>() } }),
    mcpServers: c<R.McpServerRecord>({
      name: 'mcp_servers',
      indexes: { slug: bySlug<R.McpServerRecord>(), workspace: byWorkspace<R.McpServerRecord>() },
    }),
    audit: c<R.AuditRecord>({ name: 'audit_logs' }),
    usageAlerts: c<R.UsageAlert>({ name: 'usage_alerts' }),
  };
}

export type Collections = ReturnType<typeof defineCollections>;

export interface Store {
  readonly path: string;
  readonly root: RootDatabase;
  readonly c: Collections;
  readonly secrets: SecretBox;
  /** The size limit (`store.map_size`): measured use, and whether writes that grow the store are refused. */
  readonly capacity: StoreCapacity;
  /**
   * The shared backends in distributed mode (PostgreSQL + Valkey), undefined on the embedded
   * default. Plugins ask through core's contracts; this handle is for the drivers behind them.
   */
  readonly distributed?: Distributed;
  /**
   * Distributed mode: this store is a replica of the control plane in PostgreSQL
   * (distributed/replica.ts). Admin writes run in `replica.writeScope`; a hot-path miss may
   * `await replica.freshen()` and look again. Undefined on the embedded default.
   */
  readonly replica?: ControlPlaneReplica;
  /** Small key-value settings (schema version, bootstrap state). */
  readonly meta: Database<unknown, string | string[]>;
  /** Waits for pending asynchronous writes to be durable, those of registered writers too. */
  flush(): Promise<void>;
  /**
   * Registers a writer that holds writes outside this thread's lmdb queue (the logging plugin's
   * write thread): {@link flush} writes and waits for them too. Returns the removal.
   */
  addWriter(flush: () => Promise<void>): () => void;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** The data directory (created if missing). */
  dir: string;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The most data the store may hold, in bytes (`store.map_size`); default {@link DEFAULT_MAP_SIZE}. */
  mapSize?: number;
  /** Distributed mode's backends, opened by the caller; closed with the store. */
  distributed?: Distributed;
}

/** 16 GiB: LMDB reserves address space, not disk, so the default is generous. */
export const DEFAULT_MAP_SIZE = 2 ** 34;

export function openStore(options: OpenStoreOptions): Store {
  if (options.distributed) requireSharedMasterKey(options.env ?? process.env);
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'gateway.mdb');
  // A full disk must not end the process through lmdb-js's unreachable commit rejections.
  guardCommitFailures(options.log);
  // maxDbs bounds named sub-databases (collections + their indexes), with room to grow. lmdb-js
  // grows the map past `mapSize` on demand; the limit is enforced by `capacity` instead.
  const root = open({ path, maxDbs: 128, mapSize: options.mapSize ?? DEFAULT_MAP_SIZE });
  // First: it records every database opened on root from here on (collections, plugins' own).
  const capacity = createCapacity(root, options.mapSize ?? DEFAULT_MAP_SIZE);
  const meta = root.openDB<unknown, string | string[]>({ name: 'meta' });
  const collection = <T extends { id: string }>(def: CollectionDefinition<T>): Collection<T> =>
    new Collection<T>(root, meta as unknown as Database<number, string | string[]>, def);
  const writers = new Set<() => Promise<void>>();
  const store: Store = {
    path,
    root,
    c: defineCollections(collection),
    capacity,
    secrets: createSecretBox(loadMasterKey(dir, options.env ?? process.env, options.log)),
    meta,
    ...(options.distributed ? { distributed: options.distributed } : {}),
    async flush() {
      await Promise.all([...writers].map((w) => w()));
      await root.flushed;
    },
    addWriter(flush) {
      writers.add(flush);
      return () => writers.delete(flush);
    },
    async close() {
      capacity.close();
      await store.replica?.close();
      closeWriteSignal(meta as unknown as Database<number, string | string[]>);
      await root.close();
      await options.distributed?.close();
    },
  };
  migrate(store, options.log);
  capacity.measure();
  // Started by the caller (`await store.replica.start()`): it migrates PostgreSQL and catches up.
  if (options.distributed) (store as { replica?: ControlPlaneReplica }).replica = new ControlPlaneReplica(store, options.distributed, options.log);
  return store;
}

function migrate(store: Store, log: Logger): void {
  const current = (store.meta.get('schema_version') as number | undefined) ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new Error(`the data dir has schema version ${current}, newer than this gateway (${SCHEMA_VERSION}); upgrade the gateway`);
  }
  if (current === SCHEMA_VERSION) return;
  store.root.transactionSync(() => {
    for (let v = current; v < SCHEMA_VERSION; v++) migrations[v]!(store);
    store.meta.putSync('schema_version', SCHEMA_VERSION);
  });
  log.info('store migrated', { from: current, to: SCHEMA_VERSION });
}
