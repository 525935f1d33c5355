/**
 * The per-request context every hook receives.
 *
 * Its shape is fixed (a class, so V8 keeps one hidden class); plugin-owned state goes in `vars`,
 * typed by augmenting {@link ContextVars}:
 *
 *   declare module '../../core/context.js' { interface ContextVars { tenant: string } }
 *   ctx.set('tenant', 'acme'); ctx.get('tenant') // string | undefined
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from './errors.js';
import type { RouteMatch } from './routes.js';
import type { Target, RoutePlan } from './router/types.js';
import type { Logger } from './logger.js';
import type { Usage } from './usage/types.js';
import { uuidv7 } from './store/ids.js';

/** Per-request state declared by plugins through declaration merging. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging
export interface ContextVars {}

/** How a request ended, given to every plugin's `onDone`. */
export interface Outcome {
  status: number;
  /** The gateway error that answered the request, if one did. */
  error: GatewayError | undefined;
  /** Where the final answer came from. */
  source: 'upstream' | 'gateway' | 'plugin';
  /** The client went away before the response finished. */
  aborted: boolean;
  /** A failure after the response started (the stream was ended with an error). */
  streamError: GatewayError | undefined;
  durationMs: number;
  /** Time spent waiting on upstream answers (ms), summed over attempts. */
  upstreamMs: number;
}

/** Timestamps (performance.now() ms) the core records; plugins read them for logs and metrics. */
export interface Timings {
  start: number;
  upstreamStart: number;
  upstreamHeaders: number;
  firstByte: number;
  end: number;
  upstreamMs: number;
}

export class GatewayContext {
  /** The request id: `x-gateway-request-id` on the response, and the log record id. */
  readonly id: string;
  /** The caller's `x-gateway-trace-id`, or a generated one. */
  readonly traceId: string;
  readonly method: string;
  /** The path without the query string, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** The query string including `?`, or `''`. */
  readonly search: string;
  /** Request headers, lower-cased by Node. Never forwarded blindly: see core/upstream/headers.ts. */
  readonly headers: IncomingHttpHeaders;
  readonly httpVersion: string;
  /** The client's address (for audit records and rate limits by IP). */
  readonly remoteAddress: string;
  /** The route; a plugin route answered by a model call becomes that model route (see {@link reroute}). */
  route: RouteMatch;
  readonly timings: Timings;
  readonly log: Logger;

  /** The raw request body as received (bounded by `server.body_limit`). */
  rawBody: Buffer | undefined = undefined;
  /** The parsed JSON body on model routes and JSON plugin routes. Change it through {@link setBody}. */
  body: Record<string, unknown> | undefined = undefined;
  /** True once a plugin replaced or edited the body; otherwise the original bytes are forwarded. */
  bodyChanged = false;
  /** `x-gateway-metadata`, parsed (an object of strings). */
  metadata: Record<string, string> = {};

  /** Set by a routing plugin (config-strategy) to steer the router; otherwise headers decide. */
  plan: RoutePlan | undefined = undefined;
  /** The target that answered (or was tried last). */
  target: Target | undefined = undefined;
  /** The provider that answered, for `x-gateway-provider`. */
  provider: string | undefined = undefined;
  /** The config path of the answering target, e.g. `config.targets[1]`. */
  optionPath = 'config';
  retryCount = 0;
  cacheStatus = 'DISABLED';
  /**
   * The core's record of the plugins (by pipeline index) whose hook returned `PASS` for this
   * request: their later hooks are skipped (core/pipeline.ts). Plugins return `PASS` instead.
   */
  passed: boolean[] | undefined = undefined;
  /** Headers plugins add to the response (e.g. `x-ratelimit-*`). */
  readonly responseHeaders: Record<string, string> = {};
  /** The status sent to the client once known. */
  status = 0;
  /** Where the answer came from: an upstream, the gateway (errors), or a plugin's reply. */
  source: Outcome['source'] = 'upstream';
  /** The gateway error that answered, if any. */
  error: GatewayError | undefined = undefined;
  /** A failure after the response head was sent (the stream was ended with an error). */
  streamError: GatewayError | undefined = undefined;
  /**
   * Set in the request phase by a plugin that must see a whole (non-stream) 2xx answer before any
   * of it goes out (an output guardrail): the answer is then read whole, and `onResponseHeaders`
   * finds its bytes in `head.body` (and may replace it). Streams are unaffected: they go through
   * `onResponseChunk` as they flow.
   */
  holdAnswer = false;
  /**
   * Set in the request phase by a plugin that checks every answer (output guardrails), streams
   * included: a cache must not replay a stored stream to this request (a replay is bytes, not the
   * events the plugin's `onResponseChunk` would see). Whole answers are replayed as replies, which
   * the plugin sees in `onResponseHeaders`.
   */
  checksAnswer = false;
  /**
   * Set in the request phase by a plugin that reads `ctx.usage` for this request only (a token
   * limit or a budget applies to it): the core then meters its answer, as it meters every answer
   * when a plugin of the pipeline declares `meterUsage`. Left false, an answer nobody counts is
   * not parsed for its usage, and a stream is not asked for its usage chunk.
   */
  meterUsage = false;
  /** Token usage of the answer, once known (set before onResponseEnd when usage metering is on). */
  usage: Usage | undefined = undefined;

  readonly #vars: Partial<ContextVars> = {};
  // Abort plumbing without an AbortController per request (they cost ~6 % of CPU under load on
  // Node 20): the core subscribes with plain callbacks; a real signal is made only when asked for.
  #abortReason: Error | undefined;
  #abortListeners: Array<() => void> | undefined;
  #controller: AbortController | undefined;

  constructor(init: {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
    httpVersion: string;
    route: RouteMatch;
    log: Logger;
    start: number;
    remoteAddress?: string;
  }) {
    const q = init.url.indexOf('?');
    this.path = q === -1 ? init.url : init.url.slice(0, q);
    this.search = q === -1 ? '' : init.url.slice(q);
    this.method = init.method;
    this.headers = init.headers;
    this.httpVersion = init.httpVersion;
    this.remoteAddress = init.remoteAddress ?? '';
    this.route = init.route;
    // UUIDv7: the request id is also the log record id, and time order makes logs listable newest first.
    this.id = uuidv7();
    const trace = init.headers['x-gateway-trace-id'];
    // A caller's trace id is echoed, but bounded so a header cannot bloat logs and responses.
    this.traceId = typeof trace === 'string' && trace.length > 0 && trace.length <= 128 ? trace : this.id;
    this.timings = { start: init.start, upstreamStart: 0, upstreamHeaders: 0, firstByte: 0, end: 0, upstreamMs: 0 };
    this.log = init.log;
  }

  get<K extends keyof ContextVars>(key: K): ContextVars[K] | undefined {
    return this.#vars[key];
  }

  set<K extends keyof ContextVars>(key: K, value: ContextVars[K]): void {
    this.#vars[key] = value;
  }

  /**
   * Continues the request as `route` with `body` (a plugin route answered by a model call). The
   * body becomes the request's bytes too, as if the client had sent it: token estimates, stored
   * bodies and the upstream request all see the model call, not the plugin route's input.
   */
  reroute(route: RouteMatch, body: Record<string, unknown>): void {
    this.route = route;
    this.body = body;
    this.rawBody = Buffer.from(JSON.stringify(body));
    this.bodyChanged = false;
  }

  /** Replaces the JSON body; the router then serializes it instead of forwarding the original bytes. */
  setBody(body: Record<string, unknown>): void {
    this.body = body;
    this.bodyChanged = true;
  }

  /** True when the client asked for a streamed answer on a model route. */
  get wantsStream(): boolean {
    return this.body !== undefined && this.body.stream === true;
  }

  /** True once the client went away or the gateway gave up on the request. */
  get aborted(): boolean {
    return this.#abortReason !== undefined;
  }

  /** Aborted when the client goes away or the gateway gives up; pass it to anything cancellable. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Runs `listener` once when the request is aborted (at once if it already was); returns an unsubscribe. */
  onAbort(listener: () => void): () => void {
    if (this.#abortReason !== undefined) {
      listener();
      return () => undefined;
    }
    (this.#abortListeners ??= []).push(listener);
    return () => {
      const list = this.#abortListeners;
      const i = list ? list.indexOf(listener) : -1;
      if (i !== -1) list!.splice(i, 1);
    };
  }

  /** Aborts everything this request started (upstream calls, worker tasks). Idempotent. */
  abort(reason: Error): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#abortListeners;
    this.#abortListeners = undefined;
    if (listeners) for (const fn of listeners) fn();
  }

  /** Why the request was aborted, if it was. */
  get abortReason(): Error | undefined {
    return this.#abortReason;
  }
}
