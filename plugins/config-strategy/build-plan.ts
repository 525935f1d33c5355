/**
 * A routing config (JSON, validated) → the router's node tree. Virtual keys and `@slug` providers
 * are resolved here, custom hosts pass the SSRF guard and provider fields their grammar here, and a leaf without its own key uses
 * the caller's `Authorization` bearer (as direct mode does).
 */
import { checkCustomHost, checkProviderFields, headerString, slugTarget, virtualKeyTarget, type CredentialResolver, type CustomHostPolicy, type GatewayContext, type RouteNode, type Target } from '../../core/index.js';
import { ConfigErrors } from './errors.js';

type Json = Record<string, unknown>;

/** Leaf fields that are routing, not provider options. */
const ROUTING_FIELDS = new Set([
  'provider', 'api_key', 'virtual_key', 'custom_host', 'forward_headers', 'override_params', 'weight', 'name', 'index',
  'retry', 'request_timeout', 'strategy', 'targets', 'cache',
  'input_guardrails', 'output_guardrails', 'default_input_guardrails', 'default_output_guardrails',
]);

export interface BuildContext {
  ctx: GatewayContext;
  credentials: () => CredentialResolver;
  workspaceId: string;
  hosts: CustomHostPolicy;
}

function bearer(ctx: GatewayContext): string | undefined {
  const auth = headerString(ctx.headers, 'authorization');
  const m = auth === undefined ? null : /^bearer\s+(.+)$/i.exec(auth);
  return m ? m[1]!.trim() : undefined;
}

/** What a config's tree needs beyond itself, found once per config. */
interface ConfigNeeds {
  /** A leaf names a virtual key or an `@slug` provider: stored credentials, read on every request. */
  credentials: boolean;
  /** A leaf has no key of its own: it uses the request's bearer. */
  bearer: boolean;
}

function needsOf(raw: Json, into: ConfigNeeds = { credentials: false, bearer: false }): ConfigNeeds {
  if (Array.isArray(raw.targets)) {
    for (const t of raw.targets as Json[]) needsOf(t, into);
  } else if (typeof raw.virtual_key === 'string' || String(raw.provider).startsWith('@')) {
    into.credentials = true;
  } else if (typeof raw.api_key !== 'string') {
    into.bearer = true;
  }
  return into;
}

/** What is kept per config: its needs, and its last built tree with what it was built for. */
interface Kept {
  needs: ConfigNeeds;
  hosts?: CustomHostPolicy;
  bearer?: string;
  root?: RouteNode;
}

/**
 * Built trees of configs whose leaves carry their own provider (and key, or take the request's
 * bearer), by config: a client sends the same config with every request (an inline config is
 * parsed once and shared, a saved one is unsealed once per version), and building its tree, with
 * each custom host through the SSRF guard, cost about 5 % of a config-routed request. The
 * entry holds for the same host policy and bearer; trees are frozen, as the attempts only read
 * them. A config with virtual keys or `@slug` providers is built on every request, so that a key
 * revoked, expired or out of budget takes effect on the next request.
 */
export class TreeCache {
  readonly #kept = new WeakMap<Json, Kept>();

  root(config: Json, b: BuildContext): RouteNode {
    let kept = this.#kept.get(config);
    if (kept === undefined) {
      kept = { needs: needsOf(config) };
      this.#kept.set(config, kept);
    }
    if (kept.needs.credentials) return buildNode(config, b, 'config');
    const token = kept.needs.bearer ? bearer(b.ctx) : undefined;
    if (kept.root !== undefined && kept.hosts === b.hosts && kept.bearer === token) return kept.root;
    const root = deepFreeze(buildNode(config, b, 'config'));
    kept.hosts = b.hosts;
    kept.bearer = token;
    kept.root = root;
    return root;
  }
}

/** Freezes `value` and everything it holds (configs and the trees built from them are shared by requests). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export function buildNode(raw: Json, b: BuildContext, path: string): RouteNode {
  const node: RouteNode = {};
  if (raw.strategy !== undefined) node.strategy = raw.strategy as RouteNode['strategy'];
  if (raw.retry !== undefined) node.retry = raw.retry as RouteNode['retry'];
  if (typeof raw.request_timeout === 'number') node.request_timeout = raw.request_timeout;
  if (raw.override_params !== undefined) node.override_params = raw.override_params as Json;
  if (Array.isArray(raw.forward_headers)) node.forward_headers = (raw.forward_headers as string[]).map((h) => h.toLowerCase());
  if (typeof raw.weight === 'number') node.weight = raw.weight;
  if (typeof raw.name === 'string') node.name = raw.name;
  if (typeof raw.custom_host === 'string') {
    const refused = checkCustomHost(raw.custom_host, b.hosts, `${path}.custom_host`);
    if (refused) throw refused;
    node.custom_host = raw.custom_host;
  }
  if (Array.isArray(raw.targets)) {
    node.targets = (raw.targets as Json[]).map((t, i) => buildNode(t, b, `${path}.targets[${i}]`));
    return node;
  }
  node.target = leafTarget(raw, b, path);
  return node;
}

function leafTarget(raw: Json, b: BuildContext, path: string): Target {
  if (typeof raw.virtual_key === 'string') {
    const target = virtualKeyTarget(b.credentials(), raw.virtual_key, b.workspaceId, `${path}.virtual_key`);
    if (typeof raw.name === 'string') target.label = raw.name;
    return target;
  }
  const provider = String(raw.provider);
  if (provider.startsWith('@')) {
    const target = slugTarget(b.credentials(), provider.slice(1), b.workspaceId);
    if (target === undefined) throw ConfigErrors.unknownSlug(undefined, { param: `${path}.provider` });
    return target;
  }
  const target: Target = { provider, label: typeof raw.name === 'string' ? raw.name : provider };
  const key = typeof raw.api_key === 'string' ? raw.api_key : bearer(b.ctx);
  if (key !== undefined) target.apiKey = key;
  const options: Json = {};
  for (const [k, v] of Object.entries(raw)) if (!ROUTING_FIELDS.has(k)) options[k] = v;
  if (Object.keys(options).length > 0) {
    // URL parts (resource, deployment, version, region) by their grammar, before any URL is built.
    const bad = checkProviderFields(options, (field) => `${path}.${field}`);
    if (bad) throw bad;
    target.providerOptions = options;
  }
  return target;
}
