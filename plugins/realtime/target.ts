/**
 * Where a Realtime session goes: the targets to try, in order, and for each the upstream
 * WebSocket URL and headers.
 *
 *   plan (virtual key, config, @slug/model) ─▶ leaves in the order the strategy gives them
 *     single: the first · fallback: each in order · loadbalance: one, by weight
 *     conditional: its default (conditions over a request body do not apply to a session)
 *   no plan (direct mode) ─▶ x-gateway-provider / x-gateway-custom-host / x-gateway-azure-*
 *
 *   openai (and a custom host speaking its API)  {base}/realtime?model=…        Authorization: Bearer, OpenAI-Beta
 *   azure-openai                                 {base}/openai/realtime?api-version=…&deployment=…   api-key
 *
 * Every URL passes the upstream guard (security.custom_hosts) before it is dialled, and the
 * connection's addresses pass it again at connect time (guardedLookup).
 */
import {
  checkCustomHost,
  checkProviderFields,
  checkUpstreamUrl,
  Errors,
  headerString,
  type CustomHostPolicy,
  type GatewayContext,
  type RouteNode,
  type Target,
} from '../../core/index.js';
import { RealtimeErrors } from './errors.js';

/** One target of the plan, as the session would call it. */
export interface Candidate {
  target: Target;
  /** Its place in the config (`config.targets[1]`), for `x-gateway-last-used-option-index`. */
  path: string;
}

/** The upstream call for one candidate. */
export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
}

const OPENAI_BASE = 'https://api.openai.com/v1';
/** The Realtime API version Azure documents for `/openai/realtime` (used when nothing names one). */
const AZURE_REALTIME_VERSION = '2024-10-01-preview';
/** Client headers that describe the caller to OpenAI and are passed on. */
const FORWARDED = ['openai-organization', 'openai-project', 'user-agent'];

interface Inherited {
  custom_host: string | undefined;
  override_params: Record<string, unknown> | undefined;
}

/** The targets to try for this session, in order. */
export function candidates(ctx: GatewayContext, direct: () => Target): Candidate[] {
  const plan = ctx.plan;
  if (plan === undefined) return [{ target: direct(), path: 'config' }];
  const out: Candidate[] = [];
  collect(plan.root, { custom_host: undefined, override_params: undefined }, 'config', out);
  if (out.length === 0) throw Errors.missingProvider('The config has no target to open the session with.');
  return out;
}

function collect(node: RouteNode, parent: Inherited, path: string, out: Candidate[]): void {
  const here: Inherited = {
    custom_host: node.custom_host ?? parent.custom_host,
    override_params: node.override_params ? { ...parent.override_params, ...node.override_params } : parent.override_params,
  };
  if (node.target !== undefined) {
    const target: Target = { ...node.target, customHost: node.target.customHost ?? here.custom_host };
    const overrides = { ...here.override_params, ...node.target.overrideParams };
    if (Object.keys(overrides).length > 0) target.overrideParams = overrides;
    out.push({ target, path });
    return;
  }
  const children = node.targets ?? [];
  if (children.length === 0) return;
  const mode = node.strategy?.mode ?? 'single';
  if (mode === 'fallback') {
    children.forEach((child, i) => collect(child, here, `${path}.targets[${i}]`, out));
    return;
  }
  let pick = 0;
  if (mode === 'loadbalance') pick = weighted(children);
  else if (mode === 'conditional') {
    const named = children.findIndex((c) => c.name !== undefined && c.name === node.strategy?.default);
    pick = named === -1 ? 0 : named;
  }
  collect(children[pick]!, here, `${path}.targets[${pick}]`, out);
}

function weighted(children: RouteNode[]): number {
  const weights = children.map((c) => (c.weight === undefined ? 1 : Math.max(0, c.weight)));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  let r = Math.random() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i]!;
    if (r < 0) return i;
  }
  return weights.length - 1;
}

/**
 * Direct mode: the target the request headers name. `providerKey` is the client's key for the
 * provider, when the client sent one that is not its gateway key.
 */
export function directTarget(ctx: GatewayContext, policy: CustomHostPolicy, providerKey: string | undefined): Target {
  const provider = headerString(ctx.headers, 'x-gateway-provider');
  const customHost = headerString(ctx.headers, 'x-gateway-custom-host');
  if (provider === undefined && customHost === undefined) throw Errors.missingProvider();
  const target: Target = { provider: provider ?? 'openai' };
  if (customHost !== undefined) {
    const refused = checkCustomHost(customHost, policy);
    if (refused) throw refused;
    target.customHost = customHost;
  }
  if (providerKey !== undefined) target.apiKey = providerKey;
  for (const name in ctx.headers) {
    if (!name.startsWith('x-gateway-azure-')) continue;
    const value = headerString(ctx.headers, name);
    if (value !== undefined) (target.providerOptions ??= {})[`azure_${name.slice('x-gateway-azure-'.length).replace(/-/g, '_')}`] = value.slice(0, 256);
  }
  if (target.providerOptions !== undefined) {
    const bad = checkProviderFields(target.providerOptions, (field) => `x-gateway-${field.replace(/_/g, '-')}`);
    if (bad) throw bad;
  }
  return target;
}

function field(target: Target, name: string): string | undefined {
  const o = target.providerOptions ?? {};
  const v = o[name] ?? o[`azure_${name}`];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** The model the session asks for: the target's override, else the client's `?model=`. */
export function sessionModel(target: Target, query: URLSearchParams): string | undefined {
  const override = target.overrideParams?.model;
  if (typeof override === 'string' && override.length > 0) return override;
  return query.get('model') ?? undefined;
}

/** The upstream URL (ws: or wss:) and headers for `target`, or the 4xx that says why not. */
export function upstreamCall(ctx: GatewayContext, target: Target, policy: CustomHostPolicy): UpstreamCall {
  const query = new URLSearchParams(ctx.search);
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = headerString(ctx.headers, name);
    if (value !== undefined) headers[name] = value;
  }
  let url: URL;
  if (target.provider === 'azure-openai') {
    const bad = checkProviderFields(target.providerOptions ?? {}, (f) => f);
    if (bad) throw bad;
    const resource = field(target, 'resource_name');
    const base = target.customHost ?? (resource ? `https://${resource}.openai.azure.com` : undefined);
    if (base === undefined) throw Errors.invalidHeader('Azure OpenAI needs resource_name (or a custom host).', { param: 'x-gateway-azure-resource-name' });
    const deployment = field(target, 'deployment_name') ?? field(target, 'deployment_id') ?? sessionModelOrDeployment(target, query);
    if (deployment === undefined) throw RealtimeErrors.missingModel();
    url = new URL(`${base.replace(/\/+$/, '')}/openai/realtime`);
    url.searchParams.set('api-version', field(target, 'api_version') ?? query.get('api-version') ?? AZURE_REALTIME_VERSION);
    url.searchParams.set('deployment', deployment);
    if (target.apiKey !== undefined) {
      if (field(target, 'auth_mode') === 'entra') headers.authorization = `Bearer ${target.apiKey}`;
      else headers['api-key'] = target.apiKey;
    }
  } else if (target.provider === 'openai' || target.customHost !== undefined) {
    // A custom host under another provider id is taken at its word: an OpenAI-compatible server.
    const model = sessionModel(target, query);
    if (model === undefined) throw RealtimeErrors.missingModel();
    url = new URL(`${(target.customHost ?? OPENAI_BASE).replace(/\/+$/, '')}/realtime`);
    for (const [k, v] of query) if (k !== 'model') url.searchParams.append(k, v);
    url.searchParams.set('model', model);
    headers['openai-beta'] = headerString(ctx.headers, 'openai-beta') ?? 'realtime=v1';
    if (target.apiKey !== undefined) headers.authorization = `Bearer ${target.apiKey}`;
  } else {
    throw RealtimeErrors.unsupportedProvider(`Provider "${target.provider}" has no Realtime API the gateway can reach.`);
  }
  // Operator headers (a virtual key's custom headers) go too; never a hop-by-hop or WebSocket one.
  for (const [name, value] of Object.entries(target.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!/^(host|connection|upgrade|content-length|sec-websocket-.*)$/.test(lower)) headers[lower] = value;
  }
  const refused = checkUpstreamUrl(url, policy, 'custom_host');
  if (refused) throw refused;
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return { url: url.href, headers };
}

function sessionModelOrDeployment(target: Target, query: URLSearchParams): string | undefined {
  return query.get('deployment') ?? sessionModel(target, query);
}
