/**
 * The plugin API. A plugin module default-exports `definePlugin({...})`; the YAML pipeline lists
 * plugins in order. `setup` runs once at boot (all config-time work goes there) and returns the
 * hooks the plugin implements.
 *
 *   request  ─▶ onRequest ─▶ (body read, validated) ─▶ onRequestBody ─▶ router ──────────┐
 *               YAML order                             YAML order        per attempt:    │
 *                                                                         onUpstreamRequest
 *                                                                         onUpstreamResponse
 *   response ◀─ onResponseHeaders ◀─ onResponseChunk / onResponseBody ◀─ onResponseEnd ◀─┘
 *               REVERSE YAML order, so the first plugin sees the final outcome
 *   then     ── onDone (every plugin, always; errors logged, never sent)
 *
 * The response phase runs in one place for every answer (a plugin's reply, a gateway error, a
 * proxied upstream answer): core/response/sequencer.ts.
 *
 * Streams: `onResponseChunk` sees each SSE event and gets an {@link EventStream} handle that can
 * also HOLD events back and release them later (rewritten, or in another number), PAUSE the
 * stream while an async check runs, and END it with an error event, without the stream being
 * buffered as a whole. A guardrail that checks every 3 events:
 *
 *   onResponseChunk(ctx, event, stream) {
 *     stream.hold(event);                           // not passed on (yet)
 *     if (stream.held.length < 3) return null;
 *     const batch = stream.held.slice();
 *     stream.wait(check(batch).then((ok) => (ok ? stream.release() : stream.fail(Denied()))));
 *     return null;
 *   },
 *   onResponseStreamEnd(ctx, stream) { return check(stream.held).then(...) },
 */
import type { GatewayContext, Outcome } from './context.js';
import type { Reply } from './reply.js';
import type { Logger } from './logger.js';
import type { GatewayConfig } from './config/types.js';
import type { Target } from './router/types.js';
import type { SseEvent } from './sse/sse-parser.js';
import type { GatewayError } from './errors.js';
import type { ProviderAdapter } from './providers/types.js';
import type { Store } from './store/store.js';
import type { TokenCounter } from './workers/types.js';
import type { Dispatcher } from 'undici';
import type { ModelRoute } from './routes.js';
import type { UpgradeRoute } from './upgrade.js';

/**
 * Returned by a request-phase hook (or `onResponseHeaders`): this plugin has nothing to do for
 * this request. The request goes on, and none of the plugin's later hooks runs for it, `onDone`
 * included, so a plugin that is idle for most requests costs one early decision instead of a call
 * at every phase (the cache with no cache config, guardrails with none to check).
 */
export const PASS: unique symbol = Symbol('gateway.pass');

/** A hook's verdict: nothing to go on, a {@link Reply} to answer now, or {@link PASS}. */
export type Step = Reply | typeof PASS | void | undefined;
export type MaybePromise<T> = T | Promise<T>;

/** One upstream attempt as the router is about to send it. Hooks may edit `headers`. */
export interface UpstreamAttempt {
  /** 0 for the first call, 1 for the first retry or fallback, … */
  readonly number: number;
  readonly target: Target;
  readonly url: URL;
  readonly method: string;
  headers: Record<string, string>;
  body: Buffer | string | null;
}

/** The status and headers of a response before it is written to the client. Hooks may edit headers. */
export interface ResponseHead {
  status: number;
  headers: Record<string, string | string[]>;
  /** True for `text/event-stream` responses. */
  readonly sse: boolean;
  /**
   * The whole body, when the answer is known whole before its head goes out: replies (errors,
   * plugin and cache answers), translated answers, and answers held for `ctx.holdAnswer`. A hook
   * that wants to change it returns a replacement reply.
   */
  readonly body?: Buffer | string;
}

/**
 * One plugin's handle on one streamed response (third argument of `onResponseChunk`, argument of
 * `onResponseStreamEnd`; the same object for the whole stream, so per-stream state can hang off
 * the plugin's own WeakMap keyed by it, or just live in `held`).
 *
 * Order: events reach the client in the order each plugin passes them on. What a plugin passes on
 * (its return value, or `release`) goes through the plugins before it in YAML order (the response
 * direction), then out. Nothing is buffered unless a plugin holds it.
 *
 * Backpressure: a slow client pauses the upstream as usual; `wait` pauses it too, and events
 * already read from the upstream wait unseen until the work settles, so memory stays bounded.
 */
export interface EventStream {
  /** The events this plugin holds, oldest first. */
  readonly held: ReadonlyArray<SseEvent>;
  /** True once the response is over (ended, failed, or the client left): nothing more goes out. */
  readonly closed: boolean;
  /**
   * Holds events back: they are not passed on until {@link release}. Returns `null`, so a hook can
   * `return stream.hold(event)`. A hook that holds the event it was given and returns nothing has
   * dropped it from the flow (it is held, not passed on twice).
   */
  hold(...events: SseEvent[]): null;
  /**
   * Passes the held events on (or `replacement` in their place) and empties the hold. Inside the
   * hook they go before what the hook returns; outside it (after an async check) they go out at
   * once. Ignored once the stream is closed.
   */
  release(replacement?: SseEvent[]): void;
  /**
   * Pauses the stream until `work` settles: no further event reaches any `onResponseChunk` (the
   * upstream is paused), then the flow resumes in order. A rejected `work` ends the stream with an
   * error event (a GatewayError keeps its code; anything else is `plugin_error`): a check that
   * cannot run fails closed.
   */
  wait(work: Promise<unknown>): void;
  /**
   * Ends the response now with an SSE `event: error` carrying `error` (e.g. a guardrail denial
   * mid-stream): events still held by any plugin are dropped, the upstream is cancelled,
   * `ctx.streamError` is set, and `onResponseEnd` still runs.
   */
  fail(error: GatewayError): void;
}

/** A route a plugin contributes (admin APIs, custom endpoints). Matched before pass-through. */
export interface RouteDefinition {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path with `:param` segments, e.g. `/v1/policies/rate-limits/:id`. */
  path: string;
  /** `json` (default for POST/PUT/PATCH): the body is parsed into `ctx.body`; `raw`: only `ctx.rawBody`. */
  body?: 'json' | 'raw' | 'none';
  /** Which configured body limit applies: `admin` (`server.admin_body_limit`, the admin API) or `server` (default). */
  bodyLimit?: 'server' | 'admin';
  handler(ctx: GatewayContext, params: Record<string, string>): MaybePromise<Reply>;
  /**
   * A route answered by a model call (e.g. a stored prompt rendered into a chat completion):
   * called with the parsed JSON body once the request hooks ran, it returns the model route and
   * body to send. The core validates that body like any model call's and the request then
   * continues as that model route: every plugin's body hooks (routing, limits, cache,
   * guardrails), the upstream call, the response hooks and the log. `handler` is not called.
   */
  model?(ctx: GatewayContext, params: Record<string, string>): MaybePromise<{ route: ModelRoute; body: Record<string, unknown> }>;
  /** Free-form facts other plugins read (the admin framework puts resource, action and schemas here). */
  meta?: object;
}

export interface PluginHooks {
  /** Headers only; the body is not read yet. Auth belongs here. */
  onRequest?(ctx: GatewayContext): MaybePromise<Step>;
  /** The parsed, validated JSON body is in `ctx.body` (model routes and JSON plugin routes). */
  onRequestBody?(ctx: GatewayContext): MaybePromise<Step>;
  /** Once per upstream attempt, YAML order. A returned reply answers the attempt without calling upstream. */
  onUpstreamRequest?(ctx: GatewayContext, attempt: UpstreamAttempt): MaybePromise<Step>;
  /** Once per upstream attempt, when its status and headers arrive (observation). */
  onUpstreamResponse?(ctx: GatewayContext, attempt: UpstreamAttempt, head: ResponseHead): MaybePromise<void>;
  /** Before the response head is written; reverse order. A reply replaces the response. */
  onResponseHeaders?(ctx: GatewayContext, head: ResponseHead): MaybePromise<Step>;
  /**
   * Each SSE event of a streamed upstream answer, reverse order, synchronous (it sits on the
   * streaming path). Return the event (possibly edited), `null` to drop it, an array to fan out,
   * or nothing to keep it as is. `stream` holds events back, pauses for async work and ends the
   * stream with an error (see {@link EventStream}). Comments (`: ping`) are transport and are not
   * shown. SSE parsing only happens when some plugin has this hook.
   */
  onResponseChunk?(ctx: GatewayContext, event: SseEvent, stream: EventStream): SseEvent | SseEvent[] | null | void;
  /**
   * The upstream stream ended and every event went through `onResponseChunk` (reverse order,
   * each plugin after the ones behind it released theirs): the last chance to release, rewrite or
   * fail what this plugin holds. Whatever it still holds afterwards is passed on as it is. Runs
   * only for plugins that also have `onResponseChunk`.
   */
  onResponseStreamEnd?(ctx: GatewayContext, stream: EventStream): MaybePromise<void>;
  /** The whole body of a non-SSE response, after it was sent (observation: usage, caching). */
  onResponseBody?(ctx: GatewayContext, body: Buffer): void;
  /** After the last byte of the response was written; reverse order. */
  onResponseEnd?(ctx: GatewayContext): MaybePromise<void>;
  /**
   * Always, once, after the response finished or the client went away. Errors are logged only.
   * Runs at the end of that turn of the event loop, batched with the requests that finished in it
   * (see observeDone in pipeline.ts); a plugin's hook runs after the previous plugin's settled.
   */
  onDone?(ctx: GatewayContext, outcome: Outcome): MaybePromise<void>;
  routes?: RouteDefinition[];
  /**
   * WebSocket endpoints this plugin serves (core/upgrade.ts). An HTTP/1.1 `Upgrade: websocket`
   * request to one of these paths runs the request hooks like any request of its route (a path
   * under `/v1/` is pass-through: auth scopes, virtual keys, routing configs, rate limits and
   * budgets apply); then, instead of the router, the route's `handle` completes the handshake and
   * serves the session, and `onDone` runs when the socket closes. An upgrade request to any other
   * path is served as a plain request.
   *
   *   upgrades: [{ path: '/v1/echo', name: 'echo', async handle(ctx, upgrade) {
   *     const ws = await upgrade.accept();
   *     if (ws) await new Promise((done) => { ws.on('message', (m) => ws.send(m)); ws.on('close', done); });
   *   } }],
   */
  upgrades?: UpgradeRoute[];
  /**
   * This plugin reads `ctx.usage` on every request (logs, analytics): the core then meters every
   * answer (and asks streams for their usage chunk). Pipelines without such a plugin pay nothing
   * for it. A plugin that needs usage only for some requests (a token limit or a budget that
   * applies) sets `ctx.meterUsage = true` in a request hook instead.
   */
  meterUsage?: boolean;
  /** On shutdown or when a reload retires this pipeline; reverse load order. */
  close?(): MaybePromise<void>;
}

/** Shared services plugins provide and use (`store`, `worker-pool`, …), declared by augmentation. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging
export interface AppServices {}

/** What `setup` receives: the gateway's facilities for one plugin. */
export interface GatewayApp {
  readonly config: Readonly<GatewayConfig>;
  /** A logger bound to the plugin's name. */
  readonly log: Logger;
  /** Adds or replaces a provider adapter (e.g. a plugin shipping a new dialect). */
  registerProvider(adapter: ProviderAdapter): void;
  /** Publishes a service for plugins later in the pipeline. */
  provide<K extends keyof AppServices>(name: K, service: AppServices[K]): void;
  /** Gets a service published by an earlier plugin; throws a boot error naming both if it is missing. */
  service<K extends keyof AppServices>(name: K): AppServices[K];
  /** The control-plane store (LMDB), open for the gateway's lifetime. */
  readonly store: Store;
  /** Token counting, off the event loop for large inputs; one per gateway, shared across reloads. */
  readonly tokens: TokenCounter;
  /**
   * The undici dispatcher model calls use: keep-alive pools per origin, and every new connection
   * checked against `security.custom_hosts` at connect time (the SSRF guard). A plugin that calls
   * an upstream a caller or an operator named (an MCP server, a webhook) passes it to `fetch`.
   */
  readonly upstream: Dispatcher;
}

export interface PluginDefinition<Options = Record<string, unknown>> {
  /** Kebab-case, unique in a pipeline; appears in logs and errors. */
  name: string;
  /** JSON Schema of the options object; checked with ajv at boot, errors name the YAML line. */
  configSchema?: Record<string, unknown>;
  setup(app: GatewayApp, options: Options): MaybePromise<PluginHooks | void>;
}

/**
 * Declares a plugin. The identity function, there for types and for a stable shape.
 *
 * @example
 *   export default definePlugin<{ header: string }>({
 *     name: 'stamp',
 *     configSchema: { type: 'object', properties: { header: { type: 'string' } }, required: ['header'] },
 *     setup(app, options) {
 *       return { onResponseHeaders(ctx, head) { head.headers[options.header] = ctx.id; } };
 *     },
 *   });
 */
export function definePlugin<Options = Record<string, unknown>>(def: PluginDefinition<Options>): PluginDefinition<Options> {
  return def;
}
