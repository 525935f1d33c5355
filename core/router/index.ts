/**
 * The terminal stage: turns the request into upstream attempts and makes sure exactly one answer
 * reaches the client.
 *
 * Without a plan from a routing plugin, the request headers name one target (direct mode):
 * `x-gateway-provider` + `Authorization`, optionally `x-gateway-custom-host`.
 */
import type { GatewayContext } from '../context.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import type { RoutePlan, Target } from './types.js';
import { Errors, type GatewayError } from '../errors.js';
import { headerValue } from '../upstream/headers.js';
import { checkCustomHost, type CustomHostPolicy } from '../upstream/ssrf.js';
import { checkProviderFields } from '../providers/fields.js';
import { downstreamHeaders } from '../upstream/headers.js';
import { ALL_PLUGINS, sendError, sendReply } from '../respond.js';
import { reply } from '../reply.js';
import { executePlan, type Failure, type Walk } from './execute.js';
import { runAttempt } from '../upstream/attempt.js';

const BEARER = /^bearer\s+(.+)$/i;

/**
 * SSRF verdicts by custom host, per policy (a reload brings a new policy object, so a new cache).
 * Apps send the same few hosts on every request; parsing and classifying them each time showed up
 * in profiles. Bounded: a flood of distinct hosts only resets the cache.
 */
const verdicts = new WeakMap<object, Map<string, GatewayError | null>>();
const MAX_VERDICTS = 1024;

export function checkCustomHostCached(url: string, policy: CustomHostPolicy): GatewayError | null {
  let cache = verdicts.get(policy);
  if (cache === undefined) verdicts.set(policy, (cache = new Map()));
  let verdict = cache.get(url);
  if (verdict === undefined) {
    verdict = checkCustomHost(url, policy);
    if (cache.size >= MAX_VERDICTS) cache.clear();
    cache.set(url, verdict);
  }
  return verdict;
}

/** Reads `x-gateway-request-timeout` (ms, a positive integer); undefined when absent. */
export function requestTimeoutHeader(ctx: GatewayContext): number | undefined {
  const raw = headerValue(ctx.headers, 'x-gateway-request-timeout');
  if (raw === undefined) return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0 || ms > 3_600_000) {
    throw Errors.invalidHeader('x-gateway-request-timeout must be a whole number of milliseconds between 1 and 3600000.', {
      param: 'x-gateway-request-timeout',
    });
  }
  return ms;
}

/** Reads `x-gateway-forward-headers`: a comma list of client header names to copy upstream. */
export function forwardHeadersHeader(ctx: GatewayContext): string[] | undefined {
  const raw = headerValue(ctx.headers, 'x-gateway-forward-headers');
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h.length > 0 && h !== 'x-gateway-forward-headers');
}

/** Direct mode: the target named by the request headers. */
export function directTarget(rt: Runtime, ctx: GatewayContext): Target {
  const provider = headerValue(ctx.headers, 'x-gateway-provider');
  const customHost = headerValue(ctx.headers, 'x-gateway-custom-host');
  if (provider === undefined && customHost === undefined) throw Errors.missingProvider();
  // A custom host alone means an OpenAI-compatible server (vLLM, Ollama, LM Studio, …).
  const id = provider ?? 'openai';
  if (rt.providers.get(id) === undefined) {
    throw Errors.unknownProvider('x-gateway-provider names no known provider.', { param: 'x-gateway-provider' });
  }
  const target: Target = { provider: id };
  if (customHost !== undefined) {
    const refused = checkCustomHostCached(customHost, rt.config.security.custom_hosts);
    if (refused) throw refused;
    target.customHost = customHost;
  }
  const auth = headerValue(ctx.headers, 'authorization');
  if (auth !== undefined) {
    const m = BEARER.exec(auth);
    if (m) target.apiKey = m[1]!.trim();
    else target.headers = { authorization: auth }; // another scheme (Basic, …): forwarded as given
  } else {
    // Anthropic's SDKs send their key as `x-api-key`.
    const key = headerValue(ctx.headers, 'x-api-key');
    if (key !== undefined && key.length > 0) target.apiKey = key.trim();
  }
  const timeout = requestTimeoutHeader(ctx);
  if (timeout !== undefined) target.requestTimeout = timeout;
  const forward = forwardHeadersHeader(ctx);
  if (forward !== undefined) target.forwardHeaders = forward;
  // Provider fields in direct mode: `x-gateway-azure-resource-name: r` → `azure_resource_name`,
  // `x-gateway-aws-region: us-east-1` → `aws_region` (AWS session tokens run to a few KB).
  for (const name in ctx.headers) {
    const prefix = name.startsWith('x-gateway-azure-') ? 'azure_' : name.startsWith('x-gateway-aws-') ? 'aws_' : name.startsWith('x-gateway-vertex-') ? 'vertex_' : undefined;
    if (prefix === undefined) continue;
    const value = headerValue(ctx.headers, name);
    const key = prefix + name.slice('x-gateway-'.length + prefix.length).replace(/-/g, '_');
    if (value !== undefined) (target.providerOptions ??= {})[key] = value.slice(0, prefix === 'aws_' ? 8192 : 256);
  }
  if (target.providerOptions !== undefined) {
    // URL parts (resource, deployment, version, region) by their grammar, named by their header.
    const bad = checkProviderFields(target.providerOptions, (field) => `x-gateway-${field.replace(/_/g, '-')}`);
    if (bad) throw bad;
  }
  return target;
}

/** Runs the plan (or the direct-mode target) and answers the client. */
export async function routeRequest(rt: Runtime, ctx: GatewayContext, out: ResponseWriter): Promise<void> {
  if (ctx.wantsStream) out.startPings(rt.config.server.stream_ping_interval);
  if (ctx.plan === undefined) {
    // Direct mode: one target, one attempt, nothing to walk (the hot path of plain proxying).
    const result = await runAttempt(rt, ctx, out, directTarget(rt, ctx), { number: 0, final: true });
    if (result.kind === 'failed') await sendError(rt, ctx, out, result.error, ALL_PLUGINS);
    return;
  }
  const plan: RoutePlan = ctx.plan;
  const walk: Walk = {
    rt,
    ctx,
    out,
    breaker: plan.breaker,
    headerTimeout: requestTimeoutHeader(ctx),
    attempts: 0,
    waited: 0,
    last: undefined,
  };
  const outcome = await executePlan(walk, plan);
  if (outcome === 'sent') return;
  await answerLast(rt, ctx, out, walk.last);
}

/**
 * Every option failed: the last upstream answer goes back as it came (status, headers, body,
 * marked `x-gateway-error-source: upstream`); if no upstream ever answered, the last gateway error.
 */
async function answerLast(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, last: Failure | undefined): Promise<void> {
  if (last === undefined) return sendError(rt, ctx, out, Errors.upstreamUnreachable('No target could be tried.'), ALL_PLUGINS);
  if (last.kind === 'failed') return sendError(rt, ctx, out, last.error, ALL_PLUGINS);
  const headers = downstreamHeaders(last.headers) as Record<string, string>;
  headers['x-gateway-error-source'] = 'upstream';
  delete headers['content-length'];
  ctx.source = 'upstream';
  // After pings the head is already out: the sequencer turns the answer into the error event.
  await sendReply(rt, ctx, out, reply(last.status, last.body, headers), { limit: ALL_PLUGINS, proxied: true });
}
