/**
 * Walks a routing plan and makes the upstream attempts.
 *
 *   fallback     try children in order (open circuits skipped) until one answers well;
 *                move on after a non-2xx (or only `on_status_codes`), a connection error or a timeout
 *   loadbalance  pick one child by weight (0 never), skipping open circuits
 *   conditional  the first matching query picks the child by name, else `default`
 *   single       the first child
 *   leaf         one target, with `retry.attempts` retries (exponential backoff, full jitter)
 *
 * Settings flow down the tree: `override_params` merge over the parent's; `retry` replaces it;
 * `request_timeout`, `custom_host` and `forward_headers` are inherited unless a node sets them.
 *
 * Exactly one attempt is "final": the last one that can be made. It streams whatever comes back
 * (an error answer included) straight to the client. Every earlier attempt commits only a 2xx and
 * holds any other answer, so the next option can still be tried. A gateway-made 4xx (an unknown
 * provider, a refused custom host) stops the walk: trying elsewhere cannot fix the request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayContext } from '../context.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import type { RetrySettings, RouteNode, RoutePlan, Target } from './types.js';
import { runAttempt, type AttemptResult } from '../upstream/attempt.js';
import { Errors, defineError } from '../errors.js';
import { matches } from './conditions.js';
import { MAX_RETRY_AFTER_MS, MAX_TOTAL_RETRY_WAIT_MS, backoffDelay, retryAfterMs } from './backoff.js';
import { available, begin, breakerKey, record, release, type BreakerSettings } from './breaker.js';

const noRoute = defineError(400, 'invalid_request_error', 'no_matching_route', 'No conditional route matches this request and the config has no default.');

/** Statuses worth a retry when the config does not list its own. */
const DEFAULT_RETRY_STATUSES = [429, 500, 502, 503, 504];

export type Failure = Exclude<AttemptResult, { kind: 'sent' }>;

interface Inherited {
  override_params: Record<string, unknown> | undefined;
  retry: RetrySettings | undefined;
  request_timeout: number | undefined;
  custom_host: string | undefined;
  forward_headers: string[] | undefined;
}

/** Per-request walk state. */
export interface Walk {
  rt: Runtime;
  ctx: GatewayContext;
  out: ResponseWriter;
  breaker: BreakerSettings | undefined;
  /** `x-gateway-request-timeout` wins over every config timeout. */
  headerTimeout: number | undefined;
  attempts: number;
  waited: number;
  last: Failure | undefined;
}

type Outcome = 'sent' | 'failed' | 'stop';

export async function executePlan(walk: Walk, plan: RoutePlan): Promise<Outcome> {
  const root: Inherited = { override_params: undefined, retry: undefined, request_timeout: undefined, custom_host: undefined, forward_headers: undefined };
  return runNode(walk, plan.root, root, 'config', true);
}

function inherit(node: RouteNode, parent: Inherited): Inherited {
  return {
    override_params: node.override_params ? { ...parent.override_params, ...node.override_params } : parent.override_params,
    retry: node.retry ?? parent.retry,
    request_timeout: node.request_timeout ?? parent.request_timeout,
    custom_host: node.custom_host ?? parent.custom_host,
    forward_headers: node.forward_headers ?? parent.forward_headers,
  };
}

function runNode(walk: Walk, node: RouteNode, parent: Inherited, path: string, isLast: boolean): Promise<Outcome> {
  const settings = inherit(node, parent);
  if (node.target !== undefined) return runLeaf(walk, node.target, settings, path, isLast);
  const children = node.targets ?? [];
  if (children.length === 0) throw Errors.missingProvider('The config node has neither targets nor a provider.');
  const mode = node.strategy?.mode ?? 'single';
  switch (mode) {
    case 'fallback':
      return runFallback(walk, node, settings, path, isLast);
    case 'loadbalance': {
      const i = pickWeighted(walk, children, settings);
      return runNode(walk, children[i]!, settings, `${path}.targets[${i}]`, isLast);
    }
    case 'conditional': {
      const i = pickConditional(walk.ctx, node);
      return runNode(walk, children[i]!, settings, `${path}.targets[${i}]`, isLast);
    }
    default:
      return runNode(walk, children[0]!, settings, `${path}.targets[0]`, isLast);
  }
}

/**
 * The target a leaf calls, with what its node and ancestors contribute. Every field is written, in
 * one order, so that every attempt's target has one shape (a spread of the leaf, whose fields vary
 * by config, cost about 4 % of a config-routed request, profiled).
 */
function attemptTarget(leaf: Target, settings: Inherited, path: string, headerTimeout: number | undefined): Target {
  return {
    provider: leaf.provider,
    apiKey: leaf.apiKey,
    customHost: leaf.customHost ?? settings.custom_host,
    headers: leaf.headers,
    forwardHeaders: leaf.forwardHeaders ?? settings.forward_headers,
    overrideParams: leaf.overrideParams || settings.override_params ? { ...settings.override_params, ...leaf.overrideParams } : undefined,
    requestTimeout: headerTimeout ?? leaf.requestTimeout ?? settings.request_timeout,
    providerOptions: leaf.providerOptions,
    path,
    label: leaf.label,
  };
}

/** A child is "open" when it is a leaf whose circuit is open (an inner node is judged inside). */
function isOpen(walk: Walk, child: RouteNode, parent: Inherited): boolean {
  const leaf = child.target;
  if (walk.breaker === undefined || leaf === undefined) return false;
  const customHost = leaf.customHost ?? child.custom_host ?? parent.custom_host;
  return !available(breakerKey({ provider: leaf.provider, customHost, apiKey: leaf.apiKey }), walk.breaker);
}

async function runFallback(walk: Walk, node: RouteNode, settings: Inherited, path: string, isLast: boolean): Promise<Outcome> {
  const children = node.targets!;
  let order = children.map((_, i) => i).filter((i) => !isOpen(walk, children[i]!, settings));
  if (order.length === 0) order = children.map((_, i) => i); // all open: try anyway rather than fail blind
  const only = node.strategy?.on_status_codes;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const outcome = await runNode(walk, children[i]!, settings, `${path}.targets[${i}]`, isLast && k === order.length - 1);
    if (outcome !== 'failed') return outcome;
    // With on_status_codes, only those upstream statuses move on; connection errors and timeouts always do.
    const last = walk.last;
    if (only !== undefined && last?.kind === 'upstream_error' && !only.includes(last.status)) return 'stop';
  }
  return 'failed';
}

function pickWeighted(walk: Walk, children: RouteNode[], settings: Inherited): number {
  const weightOf = (c: RouteNode): number => (c.weight === undefined ? 1 : Math.max(0, c.weight));
  let pool = children.map((c, i) => ({ i, w: weightOf(c) })).filter((e) => e.w > 0 && !isOpen(walk, children[e.i]!, settings));
  if (pool.length === 0) pool = children.map((c, i) => ({ i, w: weightOf(c) })).filter((e) => e.w > 0);
  if (pool.length === 0) return 0;
  const total = pool.reduce((s, e) => s + e.w, 0);
  let r = Math.random() * total;
  for (const e of pool) {
    r -= e.w;
    if (r < 0) return e.i;
  }
  return pool[pool.length - 1]!.i;
}

function pickConditional(ctx: GatewayContext, node: RouteNode): number {
  const input = { metadata: ctx.metadata, params: ctx.body ?? {}, url: { pathname: ctx.path } };
  const children = node.targets!;
  const byName = (name: string): number => children.findIndex((c) => c.name === name);
  for (const c of node.strategy?.conditions ?? []) {
    if (matches(c.query, input)) {
      const i = byName(c.then);
      if (i !== -1) return i;
    }
  }
  const d = node.strategy?.default === undefined ? -1 : byName(node.strategy.default);
  if (d === -1) throw noRoute();
  return d;
}

function isRetryable(failure: Failure, retry: RetrySettings): boolean {
  if (failure.kind === 'failed') return failure.error.status >= 500; // connection errors and timeouts
  return (retry.on_status_codes ?? DEFAULT_RETRY_STATUSES).includes(failure.status);
}

/** A gateway-made 4xx: the request is wrong, so no other target or retry can help. */
const isGatewayRefusal = (r: AttemptResult): boolean => r.kind === 'failed' && r.error.status < 500;

/**
 * Did this attempt find the upstream unwell? A committed answer counts by the status it sent
 * (the final option streams its 5xx to the client) or a failure mid-stream.
 */
function isUnhealthy(r: AttemptResult, ctx: GatewayContext): boolean {
  if (r.kind === 'sent') return ctx.status >= 500 || ctx.status === 429 || ctx.streamError !== undefined;
  if (r.kind === 'failed') return r.error.status >= 500;
  return r.status >= 500 || r.status === 429;
}

async function runLeaf(walk: Walk, leaf: Target, settings: Inherited, path: string, isLast: boolean): Promise<Outcome> {
  const target = attemptTarget(leaf, settings, path, walk.headerTimeout);
  const retry = settings.retry;
  const attempts = retry?.attempts ?? 0;
  const key = walk.breaker ? breakerKey(target) : '';
  const label = target.label ?? target.provider;
  for (let n = 0; ; n++) {
    const lastTry = n >= attempts;
    walk.ctx.retryCount = n;
    if (walk.breaker) begin(key, label, walk.breaker);
    const result = await runAttempt(walk.rt, walk.ctx, walk.out, target, { number: walk.attempts++, final: isLast && lastTry });
    if (walk.breaker) {
      if (walk.ctx.aborted || isGatewayRefusal(result)) {
        // Nothing was learned about the upstream: the client left, or the gateway refused the call.
        release(key);
      } else {
        const changed = record(key, label, isUnhealthy(result, walk.ctx), walk.breaker);
        if (changed !== undefined) walk.ctx.log.warn(`circuit ${changed}`, { target: label, path });
      }
    }
    if (result.kind === 'sent') return 'sent';
    walk.last = result;
    if (isGatewayRefusal(result)) return 'stop';
    if (lastTry || retry === undefined || !isRetryable(result, retry)) return 'failed';
    let wait = backoffDelay(n);
    if (retry.use_retry_after_header && result.kind === 'upstream_error') {
      const asked = retryAfterMs(result.headers);
      if (asked !== undefined) {
        if (asked > MAX_RETRY_AFTER_MS) return 'failed'; // the upstream wants longer than a request should wait
        wait = asked;
      }
    }
    if (walk.waited + wait > MAX_TOTAL_RETRY_WAIT_MS) return 'failed';
    walk.waited += wait;
    if (wait > 0) await sleep(wait);
    if (walk.ctx.aborted) return 'sent';
  }
}
