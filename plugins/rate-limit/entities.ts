/**
 * The `rate_limits` of the entities a request involves: its API key, its workspace, the virtual
 * key it names in `x-gateway-virtual-key`, and the provider (or virtual key) of an `@slug/model`.
 *
 * Each lookup goes through a memo dropped whenever its collection's version changes, so the hot
 * path costs one version read per collection and a map lookup; an admin edit (from any process)
 * takes effect on the next request.
 */
import { headerString, type Collection, type GatewayContext, type Store } from '../../core/index.js';
import { compileEntityLimits, type AppliedLimit, type Limit } from './limits.js';
import type { WorkspaceFacts } from './facts.js';

const MODEL_SLUG = /^@([A-Za-z0-9_-]+)\//;
const NO_LIMITS: Limit[] = [];
/** Bounds each memo: a flood of unknown slugs must not grow memory without end. */
const MAX_ENTRIES = 10_000;

/** A memo over one collection, valid while the collection's version stays the same. */
class VersionedMemo<V> {
  readonly #version: () => number;
  readonly #load: (key: string) => V;
  readonly #entries = new Map<string, V>();
  #seen = -1;

  constructor(collection: Pick<Collection<{ id: string }>, 'version'>, load: (key: string) => V) {
    this.#version = () => collection.version();
    this.#load = load;
  }

  get(key: string): V {
    const v = this.#version();
    if (v !== this.#seen) {
      this.#entries.clear();
      this.#seen = v;
    }
    let value = this.#entries.get(key);
    if (value === undefined && !this.#entries.has(key)) {
      value = this.#load(key);
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(key, value);
    }
    return value as V;
  }
}

export interface EntityLimits {
  /** The acting workspace's id and slug (policy conditions match either). */
  workspace(id: string): WorkspaceFacts;
  /** Appends the limits of every entity this request involves. */
  collect(ctx: GatewayContext, ws: WorkspaceFacts, out: AppliedLimit[]): void;
}

export function createEntityLimits(store: Store): EntityLimits {
  const c = store.c;
  const workspaces = new VersionedMemo(c.workspaces, (id) => {
    const ws = c.workspaces.get(id);
    return { facts: { id, slug: ws?.slug }, limits: compileEntityLimits(`ws:${id}`, 'the workspace', ws?.rate_limits) };
  });
  const apiKeys = new VersionedMemo(c.apiKeys, (id) => compileEntityLimits(`key:${id}`, 'the API key', c.apiKeys.get(id)?.rate_limits));
  // Virtual key and provider slugs are unique across workspaces; the record must be the caller's.
  const virtualKeys = new VersionedMemo(c.virtualKeys, (wsAndSlug) => {
    const [wsId, slug] = split(wsAndSlug);
    const vk = c.virtualKeys.getBy('slug', slug);
    return vk === undefined || vk.workspace_id !== wsId ? NO_LIMITS : compileEntityLimits(`vk:${vk.id}`, `virtual key "${slug}"`, vk.rate_limits);
  });
  const providers = new VersionedMemo(c.providers, (wsAndSlug) => {
    const [wsId, slug] = split(wsAndSlug);
    const p = c.providers.getBy('slug', slug);
    return p === undefined || p.workspace_id !== wsId ? undefined : compileEntityLimits(`prov:${p.id}`, `provider "${slug}"`, p.rate_limits);
  });

  function push(out: AppliedLimit[], limits: ReadonlyArray<Limit>): void {
    for (const limit of limits) out.push({ key: limit.key, limit });
  }

  return {
    workspace(id) {
      return workspaces.get(id).facts;
    },
    collect(ctx, ws, out) {
      push(out, workspaces.get(ws.id).limits);
      const keyId = ctx.get('principal')?.key_id;
      if (keyId) push(out, apiKeys.get(keyId));
      const vkSlug = headerString(ctx.headers, 'x-gateway-virtual-key');
      if (vkSlug) push(out, virtualKeys.get(`${ws.id}\u0000${vkSlug}`));
      const model = ctx.body?.model;
      const m = typeof model === 'string' && model.charCodeAt(0) === 64 /* @ */ ? MODEL_SLUG.exec(model) : null;
      if (m !== null) {
        const key = `${ws.id}\u0000${m[1]!}`;
        // `@slug/model` names a provider, else a virtual key (config-strategy's order).
        const limits = providers.get(key) ?? (m[1] === vkSlug ? NO_LIMITS : virtualKeys.get(key));
        push(out, limits);
      }
    },
  };
}

function split(wsAndSlug: string): [string, string] {
  const i = wsAndSlug.indexOf('\u0000');
  return [wsAndSlug.slice(0, i), wsAndSlug.slice(i + 1)];
}
