/**
 * The second gateway: the same binary as the plain one, with the full governance pipeline, its own
 * store and an admin key, provisioned over its admin API before anything is measured.
 *
 *   client ──► governance gateway ──────────────────────────────────────────► mock
 *              auth → virtual-keys → config-strategy → rate-limit → usage-limits → cache
 *              (admin-* plugins serve the provisioning calls; they add routes, not hooks)
 *
 * Provisioned: a virtual key (openai, custom host = the mock), a requests rate limits policy that
 * applies to every call but never trips, and a tokens usage limits policy that charges every call
 * but never runs out. Both are grouped by API key in the default workspace, so each request does
 * the real work: a counters transaction and a charge.
 */
import { randomBytes } from 'node:crypto';
import { startGatewayProcess } from './gateway-process.js';
import type { Pinning } from './pinning.js';
import { readRss, type RssSample } from './rss.js';
import { CHAT_BODY_JSON, type BenchRequest } from './targets.js';
import { runTempDir } from './temp-dir.js';

export const GOVERNANCE_PIPELINE = '[auth, virtual-keys, config-strategy, rate-limit, usage-limits, cache, admin-resources, admin-policies, admin-api-keys, admin-catalog]';

/** Applies to every request in the default workspace, one counter per API key. */
const SCOPE = { conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'api_key' }] };
/** Far above anything a 10 s run can send: the limit is checked on every request, never hit. */
const REQUESTS_POLICY = { ...SCOPE, name: 'bench: requests, never trips', type: 'requests', unit: 'rpm', value: 100_000_000 };
const TOKENS_POLICY = { ...SCOPE, name: 'bench: tokens, never trips', type: 'tokens', unit: 'rpm', value: 1e12 };
const USAGE_POLICY = { ...SCOPE, name: 'bench: token budget, never runs out', type: 'tokens', credit_limit: 1e15 };

type Json = Record<string, unknown>;

export interface GovernanceGateway {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly pid: number;
  /** RSS right after the process became ready, before provisioning. */
  readonly idleRss: RssSample;
  /** The provisioned virtual key's slug. */
  readonly virtualKey: string;
  /** Auth and virtual-key headers of a chat completion; callers add a body (and may add headers). */
  readonly headers: Readonly<Record<string, string>>;
  /** The small chat completion through the virtual key, no routing config: the cache is off. */
  chatRequest(): BenchRequest;
  /** The same body with an inline config that turns the simple cache on: every call after the first is a HIT. */
  cachedChatRequest(): BenchRequest;
  /** Tokens charged so far under the usage limits policy (all value keys): proof that it applies. */
  usageCharged(): Promise<number>;
  /**
   * Archives the requests rate limits policy and activates a tokens one (which makes every
   * request count its prompt for the reservation); the returned function swaps them back.
   */
  tokenLimitOnly(): Promise<() => Promise<void>>;
  stop(graceMs?: number): Promise<void>;
}

export interface GovernanceOptions {
  pinning: Pinning;
  /** The mock's origin: the virtual key's custom host is `<mockOrigin>/v1`. */
  mockOrigin: string;
  /** Node flags for the governance gateway (`--cpu-prof`, …). */
  nodeFlags?: string[];
  /** Added to the gateway's environment (distributed mode: GATEWAY_POSTGRES_URL, GATEWAY_REDIS_URL). */
  env?: Record<string, string>;
  /** Shown in progress lines; default "governance gateway". */
  name?: string;
  log(line: string): void;
}

async function adminCall(origin: string, key: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`governance gateway: ${method} /v1${path} → ${res.status} ${text}`);
  return text === '' ? {} : (JSON.parse(text) as Json);
}

function idOf(answer: Json, what: string): string {
  if (typeof answer.id !== 'string') throw new Error(`governance gateway: no id in the ${what} answer: ${JSON.stringify(answer)}`);
  return answer.id;
}

/** Starts the governance gateway on the proxy CPU and provisions it; stops it again if provisioning fails. */
export async function startGovernanceGateway(options: GovernanceOptions): Promise<GovernanceGateway> {
  // Fresh per run: nothing about them is secret beyond this temp dir's lifetime.
  const adminKey = `gw-bench-${randomBytes(24).toString('hex')}`;
  const service = await startGatewayProcess({
    pinning: options.pinning,
    name: options.name ?? 'governance gateway',
    dir: runTempDir(options.name === undefined ? 'governance' : options.name.replace(/\W+/g, '-')),
    pipeline: GOVERNANCE_PIPELINE,
    nodeFlags: options.nodeFlags,
    // A master key in the environment keeps the gateway from writing (and warning about) a key file.
    env: { GATEWAY_ADMIN_KEY: adminKey, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'), ...options.env },
  });
  const idleRss = readRss(service.pid);
  const origin = service.url;
  const admin = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Json> => adminCall(origin, adminKey, method, path, body);
  try {
    const vk = await admin('POST', '/virtual-keys', { name: 'bench mock', provider: 'openai', key: 'sk-bench', custom_host: `${options.mockOrigin}/v1` });
    if (typeof vk.slug !== 'string') throw new Error(`governance gateway: no slug in the virtual key answer: ${JSON.stringify(vk)}`);
    const slug = vk.slug;
    let requestsPolicy = idOf(await admin('POST', '/policies/rate-limits', REQUESTS_POLICY), 'rate limits policy');
    const usagePolicy = idOf(await admin('POST', '/policies/usage-limits', USAGE_POLICY), 'usage limits policy');
    options.log(`${options.name ?? 'governance gateway'} ready at ${origin} (pid ${service.pid}): virtual key ${slug}, rate limits policy ${requestsPolicy}, usage limits policy ${usagePolicy}`);

    const headers = { 'content-type': 'application/json', 'x-gateway-api-key': adminKey, 'x-gateway-virtual-key': slug };
    const cacheConfig = JSON.stringify({ cache: { mode: 'simple', max_age: 3600 }, targets: [{ virtual_key: slug }] });
    return {
      origin,
      pid: service.pid,
      idleRss,
      virtualKey: slug,
      headers,
      chatRequest: () => ({ path: '/v1/chat/completions', headers, body: CHAT_BODY_JSON }),
      cachedChatRequest: () => ({
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': adminKey, 'x-gateway-config': cacheConfig },
        body: CHAT_BODY_JSON,
      }),
      async usageCharged() {
        // One value key (the admin key) is all this bench creates; 100 is the page maximum.
        const page = await admin('GET', `/policies/usage-limits/${usagePolicy}/entities?page_size=100`);
        const entities = Array.isArray(page.data) ? (page.data as Json[]) : [];
        return entities.reduce((sum, e) => sum + (typeof e.current_usage === 'number' ? e.current_usage : 0), 0);
      },
      async tokenLimitOnly() {
        await admin('DELETE', `/policies/rate-limits/${requestsPolicy}`);
        const tokensPolicy = idOf(await admin('POST', '/policies/rate-limits', TOKENS_POLICY), 'rate limits policy');
        return async function restoreRequestsLimit() {
          await admin('DELETE', `/policies/rate-limits/${tokensPolicy}`);
          requestsPolicy = idOf(await admin('POST', '/policies/rate-limits', REQUESTS_POLICY), 'rate limits policy');
        };
      },
      stop: (graceMs) => service.stop(graceMs),
    };
  } catch (error) {
    await service.stop(2000);
    throw error;
  }
}
