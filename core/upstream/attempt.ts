/**
 * One upstream attempt: build the call, run `onUpstreamRequest`, dispatch it with undici, and
 * either commit the answer to the client (stream it through) or hand it back to the router.
 *
 *   undici ──onResponseStart──▶ 2xx, or the last option? ──yes──▶ response hooks ▶ client head
 *                                      │ no                         onResponseData ▶ client (backpressure)
 *                                      ▼
 *                              buffer the error answer ──▶ router (fallback/retry decides)
 *
 * A 2xx or the final option's answer is streamed as it arrives: nothing is buffered on the
 * common path. Backpressure: `write()` false pauses the upstream until the client drains. A
 * client that goes away aborts the upstream through `ctx.onAbort`.
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayContext } from '../context.js';
import type { ResponseHead, UpstreamAttempt } from '../plugin.js';
import type { Target } from '../router/types.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import { Errors, isGatewayError, toGatewayError, type GatewayError } from '../errors.js';
import { runHooks, runObservers } from '../pipeline.js';
import { ALL_PLUGINS, eventBody, sendReply } from '../respond.js';
import { SseParser, serializeSse, type SseEvent } from '../sse/sse-parser.js';
import { downstreamHeaders, headerValue, upstreamRequestHeaders } from './headers.js';
import type { EventDecoder, StreamTranslator, TranslateContext, TranslatedRequest, Translator } from '../providers/types.js';
import { reply as makeReply } from '../reply.js';
import { UsageMeter, needsUsageInjection, withUsageRequested } from '../usage/meter.js';
import { expectsJson, looksLikeJsonObject } from './answer-check.js';
import { roughPrompt, settleUsage } from '../usage/estimate.js';
import { upstreamFailure } from './errors.js';
import { checkBuiltUrl } from './ssrf.js';
import { INGRESS_ROUTES, type IngressDialect } from '../ingress/index.js';

export type AttemptResult =
  /** The answer (or a reply) was written to the client; the response is finished or failed visibly. */
  | { kind: 'sent' }
  /** A non-2xx upstream answer that was not committed (more options remain). */
  | { kind: 'upstream_error'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /** No answer: the call could not be made or timed out, or the gateway refused it. */
  | { kind: 'failed'; error: GatewayError };

export interface AttemptOptions {
  /** 0 for the first call; retries and fallbacks count up. */
  number: number;
  /** The last option: whatever comes back is committed to the client. */
  final: boolean;
}

/** Error answers kept for a possible fallback are bounded: they are only ever shown, never parsed at size. */
const MAX_BUFFERED_ERROR = 1 << 20;
/** A non-SSE body captured for `onResponseBody` observers is bounded; past it the capture stops. */
const MAX_CAPTURE = 16 << 20;

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8');
  }
}

/** Deadlines up to this long are timed precisely by the attempt; longer ones by undici. */
const PRECISE_TIMEOUT_LIMIT_MS = 30_000;

/** The attempt's own head deadline passed; `ETIMEDOUT` maps to 504 `upstream_timeout`. */
function deadlineError(ms: number): Error {
  return Object.assign(new Error(`no response head within ${ms} ms`), { code: 'ETIMEDOUT' });
}

function joinUrl(base: string, path: string, search: string): string {
  return (base.endsWith('/') ? base.slice(0, -1) : base) + path + search;
}

/** Builds and runs one attempt. Never throws: failures come back as results. */
export async function runAttempt(
  rt: Runtime,
  ctx: GatewayContext,
  out: ResponseWriter,
  target: Target,
  options: AttemptOptions,
): Promise<AttemptResult> {
  const adapter = rt.providers.get(target.provider);
  if (adapter === undefined) {
    return { kind: 'failed', error: Errors.unknownProvider('The provider named for this target is not a known provider.', { param: 'x-gateway-provider' }) };
  }
  const route = ctx.route.kind === 'model' ? ctx.route.name : undefined;
  const strict = headerValue(ctx.headers, 'x-gateway-strict-provider-compliance') !== 'false';
  const native = route !== undefined && adapter.nativeRoutes?.has(route) === true;
  // A client dialect the provider does not speak (Anthropic's Messages to OpenAI, Gemini, …) is
  // sent as a chat completion, then translated back (core/ingress).
  let ingress: Ingress | undefined;
  let callRoute = route;
  const entry = route !== undefined && !native ? INGRESS_ROUTES.get(route) : undefined;
  if (entry !== undefined) {
    if (entry.kind === 'count') return countLocally(rt, ctx, out);
    try {
      ingress = { dialect: entry.dialect, strict, chat: withOverrides(entry.dialect.request(ctx.body!, { strict }), target) };
    } catch (err) {
      return { kind: 'failed', error: toGatewayError(err) };
    }
    callRoute = 'chat.completions';
  }
  if (callRoute !== undefined && !native && adapter.routes !== undefined && !adapter.routes.has(callRoute)) {
    return { kind: 'failed', error: Errors.unsupportedRoute(`Provider "${adapter.id}" does not serve this route.`) };
  }
  const upstreamPath = ingress !== undefined ? '/chat/completions' : ctx.route.kind === 'model' || ctx.route.kind === 'passthrough' ? ctx.route.upstreamPath : ctx.path;
  // A dialect translates model-route calls; pass-through and native routes reach the provider's own API untouched.
  const translator = callRoute !== undefined && !native ? adapter.translate : undefined;
  if (translator !== undefined && !translator.routes.has(callRoute!)) {
    return { kind: 'failed', error: Errors.unsupportedRoute(`Provider "${adapter.id}" does not serve this route.`) };
  }
  let translation: Translation | undefined;
  let url: URL;
  try {
    if (translator !== undefined) {
      const request = ingress !== undefined ? { ...ingress.chat } : withOverrides(ctx.body ?? {}, target);
      const tctx: TranslateContext = { route: callRoute!, target, request, strict };
      translation = { translator, ctx: tctx, request: translator.request(tctx) };
    }
    const path = translation !== undefined ? translation.request.path : upstreamPath;
    // A translated call is a new request: the client's query (e.g. the Anthropic SDK's `?beta=true`) is not its own.
    const search = translation !== undefined || ingress !== undefined ? '' : ctx.search;
    const href = adapter.url ? adapter.url({ target, route: callRoute, upstreamPath: path, search }) : joinUrl(target.customHost ?? adapter.baseUrl, path, search);
    url = new URL(href);
  } catch (err) {
    // An adapter that cannot build its URL (missing provider fields) says why; a bad URL is the host's.
    if (isGatewayError(err)) return { kind: 'failed', error: toGatewayError(err) };
    return { kind: 'failed', error: Errors.invalidCustomHost('The upstream URL is not valid.', { cause: err }) };
  }
  // The guard runs on the URL as built, for every adapter: whatever a custom host, a provider
  // field or a future adapter put together, this is the host that would be dialled.
  const refused = checkBuiltUrl(url, rt.config.security.custom_hosts);
  if (refused !== null) return { kind: 'failed', error: refused };

  // Metering asks OpenAI-style streams for their usage chunk, even when the client did not.
  const inject = rt.pipeline.metering && route !== undefined && translation === undefined && ingress === undefined && needsUsageInjection(route, ctx.body);
  const attempt: UpstreamAttempt = {
    number: options.number,
    target,
    url,
    method: ctx.method,
    headers: upstreamRequestHeaders(ctx.headers, {
      identity: route !== undefined,
      auth: adapter.authHeaders(target),
      extra: target.headers,
      forward: target.forwardHeaders,
    }),
    body:
      translation !== undefined
        ? JSON.stringify(translation.request.body)
        : ingress !== undefined
          ? JSON.stringify(ingress.chat)
          : requestBody(ctx, target, inject),
  };
  if (translation !== undefined) Object.assign(attempt.headers, { 'content-type': 'application/json' }, translation.request.headers);
  else if (ingress !== undefined) attempt.headers['content-type'] = 'application/json';
  ctx.target = target;
  ctx.provider = target.provider;
  ctx.optionPath = target.path ?? 'config';

  if (rt.pipeline.onUpstreamRequest !== null) {
    const stop = await runHooks(rt.pipeline.onUpstreamRequest, ctx, (fn) => fn(ctx, attempt));
    if (stop?.error) return { kind: 'failed', error: stop.error };
    if (stop?.reply) {
      // A plugin answered for the upstream (e.g. a cache hit): it is this attempt's committed answer.
      ctx.source = 'plugin';
      await sendReply(rt, ctx, out, stop.reply, { limit: ALL_PLUGINS, proxied: true });
      return { kind: 'sent' };
    }
  }
  if (ctx.aborted) return { kind: 'sent' };
  if (adapter.sign !== undefined) {
    // Signed last: the signature covers the call exactly as it goes out.
    try {
      Object.assign(attempt.headers, await adapter.sign({ method: ctx.method, url: attempt.url, headers: attempt.headers, body: attempt.body }, target));
    } catch (err) {
      return { kind: 'failed', error: isGatewayError(err) ? toGatewayError(err) : Errors.internal('The upstream call could not be signed.', { cause: err }) };
    }
  }

  const timeout = target.requestTimeout ?? rt.config.upstream.request_timeout;
  return new Promise<AttemptResult>((resolve) => {
    const meter = rt.pipeline.metering && route !== undefined && route !== 'messages.count_tokens' ? new UsageMeter(inject) : undefined;
    const call = new UpstreamCall(rt, ctx, out, attempt, options.final, resolve, meter, translation, ingress);
    ctx.timings.upstreamStart = performance.now();
    // undici's timers tick about every half second: fine for the default 10 minutes, too coarse for
    // a config's 200 ms. Short deadlines get a precise timer of their own.
    if (timeout <= PRECISE_TIMEOUT_LIMIT_MS) call.armTimeout(timeout);
    rt.agent.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: ctx.method as Dispatcher.HttpMethod,
        headers: attempt.headers,
        body: attempt.body,
        headersTimeout: timeout <= PRECISE_TIMEOUT_LIMIT_MS ? timeout + 1000 : timeout,
        bodyTimeout: timeout,
      },
      call,
    );
  });
}

/** A copy of `body` with the target's `override_params` merged over it. */
function withOverrides(body: Record<string, unknown>, target: Target): Record<string, unknown> {
  return { ...body, ...target.overrideParams };
}

/** The original bytes when nothing changed the body; otherwise the edited JSON, serialized once. */
function requestBody(ctx: GatewayContext, target: Target, injectUsage: boolean): Buffer | string | null {
  const overrides = target.overrideParams;
  const hasOverrides = overrides !== undefined && Object.keys(overrides).length > 0;
  if (ctx.body !== undefined && (ctx.bodyChanged || hasOverrides || injectUsage)) {
    const body = hasOverrides ? withOverrides(ctx.body, target) : ctx.body;
    return JSON.stringify(injectUsage ? withUsageRequested(body) : body);
  }
  return ctx.rawBody !== undefined && ctx.rawBody.length > 0 ? ctx.rawBody : null;
}

/**
 * `count_tokens` for a provider without it: the gateway's tokenizer counts the prompt (the same
 * count rate limits and estimates use), so the answer is close but not the provider's own.
 */
async function countLocally(rt: Runtime, ctx: GatewayContext, out: ResponseWriter): Promise<AttemptResult> {
  const body = ctx.body ?? {};
  let tokens: number;
  try {
    tokens = rt.tokens ? await rt.tokens.countPrompt('messages.count_tokens', body) : roughPrompt(body);
  } catch {
    tokens = roughPrompt(body); // a busy tokenizer still gets an answer
  }
  ctx.source = 'gateway';
  const reply = makeReply(200, Buffer.from(JSON.stringify({ input_tokens: tokens })), { 'content-type': 'application/json', 'x-gateway-token-count': 'estimated' });
  await sendReply(rt, ctx, out, reply, { limit: ALL_PLUGINS, proxied: true });
  return { kind: 'sent' };
}

/** A call in a client dialect the provider does not speak: sent as `chat`, answered in the client's dialect. */
interface Ingress {
  dialect: IngressDialect;
  strict: boolean;
  /** The OpenAI chat body the call became (target overrides applied). */
  chat: Record<string, unknown>;
}

/** A model-route call to a provider with its own dialect. */
interface Translation {
  translator: Translator;
  ctx: TranslateContext;
  request: TranslatedRequest;
}

type Mode = 'waiting' | 'holding' | 'committed' | 'buffering' | 'late' | 'translating' | 'done';

/**
 * The undici dispatch handler for one attempt. States:
 * - waiting: no answer yet;
 * - holding: an async onResponseHeaders hook is deciding; the upstream is paused and anything it
 *   still delivers is held (undici stops its parser on pause, so this is normally nothing);
 * - committed: streaming the answer to the client;
 * - buffering: holding a non-2xx answer for the router (more options remain);
 * - late: the head already went out as an event stream (pings), so the answer is buffered and
 *   turned into events (an error event, or one data event for a non-stream 2xx body);
 * - done: resolved; anything undici reports afterwards is ignored.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  #mode: Mode = 'waiting';
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #sse = false;
  #parser: EventDecoder | SseParser | undefined;
  #capture: Buffer[] | undefined;
  #captured = 0;
  #offAbort: (() => void) | undefined;
  /** The upstream finished while an async response hook held the answer. */
  #endedWhileHolding = false;
  #controller: Dispatcher.DispatchController | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #timedOut = false;

  constructor(
    private readonly rt: Runtime,
    private readonly ctx: GatewayContext,
    private readonly out: ResponseWriter,
    private readonly attempt: UpstreamAttempt,
    private readonly final: boolean,
    private readonly resolve: (result: AttemptResult) => void,
    private readonly meter: UsageMeter | undefined,
    private readonly translation: Translation | undefined,
    private readonly ingress: Ingress | undefined,
  ) {}

  /** Provider events → OpenAI events, for a translated stream. */
  #streamT: StreamTranslator | undefined;
  /** OpenAI events → the client's dialect's events (core/ingress). */
  #ingressT: StreamTranslator | undefined;

  /**
   * The per-attempt deadline for the response head, counted from dispatch (queueing for a pooled
   * connection included), precise to the millisecond.
   */
  armTimeout(ms: number): void {
    this.#deadline = setTimeout(() => {
      this.#timedOut = true;
      this.#controller?.abort(deadlineError(ms));
    }, ms);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#timedOut) return controller.abort(deadlineError(0));
    this.#offAbort = this.ctx.onAbort(() => controller.abort(this.ctx.abortReason!));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (this.#mode !== 'waiting') return;
    if (status < 200) return; // 1xx informational: the real head follows
    clearTimeout(this.#deadline);
    const t = this.ctx.timings;
    t.upstreamHeaders = performance.now();
    t.upstreamMs += t.upstreamHeaders - t.upstreamStart;
    this.#status = status;
    this.#headers = headers;
    const ctype = headers['content-type'];
    const decoder = this.translation?.translator.streamDecoder;
    this.#sse = typeof ctype === 'string' && (ctype.startsWith('text/event-stream') || (decoder !== undefined && ctype.startsWith(decoder.contentType)));
    const ok = status >= 200 && status < 300;
    const head: ResponseHead = { status, headers: downstreamHeaders(headers), sse: this.#sse };

    if (this.rt.pipeline.onUpstreamResponse !== null) {
      void runObservers(this.rt.pipeline.onUpstreamResponse, this.ctx, (fn) => fn(this.ctx, this.attempt, head));
    }
    if (!ok && !this.final) {
      this.#mode = 'buffering';
      return;
    }
    const translated = this.translation !== undefined || this.ingress !== undefined;
    if (translated && !(ok && this.#sse)) {
      // A dialect's JSON answer (or error) is translated whole, then sent as a reply.
      this.#mode = 'translating';
      return;
    }
    if (translated) {
      if (this.translation !== undefined) this.#streamT = this.translation.translator.stream(this.translation.ctx);
      if (this.ingress !== undefined) this.#ingressT = this.ingress.dialect.stream(this.ctx.body!, { strict: this.ingress.strict });
      delete head.headers['content-length'];
      head.headers['content-type'] = 'text/event-stream';
    }
    if (this.out.pinged) {
      // Pings already sent a 200 event-stream head. A matching answer streams on; any other is
      // buffered and turned into events at the end.
      this.out.stopPings();
      this.#mode = ok && this.#sse ? 'committed' : 'late';
      if (this.#mode === 'committed') this.#prepareBody();
      return;
    }
    if (!ok) head.headers['x-gateway-error-source'] = 'upstream';
    this.#commit(controller, head);
  }

  #commit(controller: Dispatcher.DispatchController, head: ResponseHead): void {
    const hooks = this.rt.pipeline.onResponseHeaders;
    if (hooks === null) return this.#writeHead(head);
    const stop = runHooks(hooks, this.ctx, (fn) => fn(this.ctx, head));
    if (stop instanceof Promise) {
      // An async hook: hold the upstream body until it settles (backpressure keeps memory bounded).
      this.#mode = 'holding';
      controller.pause();
      void stop.then((s) => {
        if (this.#mode === 'done') return;
        if (s) return this.#replace(controller, s.reply, s.error);
        this.#writeHead(head);
        const held = this.#chunks;
        this.#chunks = [];
        this.#size = 0;
        for (const chunk of held) this.#forward(controller, chunk);
        if (this.#endedWhileHolding) this.onResponseEnd();
        else controller.resume();
      });
      return;
    }
    if (stop) return this.#replace(controller, stop.reply, stop.error);
    this.#writeHead(head);
  }

  /** A response hook answered instead of the upstream: drop the upstream call, send the reply. */
  #replace(controller: Dispatcher.DispatchController, reply: import('../reply.js').Reply | undefined, error: GatewayError | undefined): void {
    this.#finish({ kind: 'sent' }, false);
    controller.abort(new Error('replaced by a response hook'));
    const answer = reply ?? { status: error!.status, headers: { 'x-gateway-error-source': 'gateway' }, body: error!.toJSON() };
    if (error) {
      this.ctx.error = error;
      this.ctx.source = 'gateway';
    }
    void sendReply(this.rt, this.ctx, this.out, answer as import('../reply.js').Reply, { limit: ALL_PLUGINS, proxied: true });
  }

  #writeHead(head: ResponseHead): void {
    this.#mode = 'committed';
    this.#prepareBody();
    if (this.#parser !== undefined) delete head.headers['content-length']; // events may be rewritten
    this.out.stopPings();
    if (this.out.writable) this.out.writeHead(head.status, head.headers, true);
  }

  #prepareBody(): void {
    // SSE is parsed only when someone reads events: chunk hooks, the usage meter, or a dialect.
    if (this.#sse && (this.rt.pipeline.onResponseChunk !== null || this.meter !== undefined || this.#streamT !== undefined || this.#ingressT !== undefined)) {
      this.#parser = this.translation?.translator.streamDecoder?.create() ?? new SseParser();
    }
    // Model-route answers are always captured: a 2xx that is not JSON is logged as unreadable.
    if (!this.#sse && (this.rt.pipeline.onResponseBody !== null || this.meter !== undefined || this.ctx.route.kind === 'model')) this.#capture = [];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    switch (this.#mode) {
      case 'committed':
        return this.#forward(controller, chunk);
      case 'buffering':
      case 'late':
      case 'holding':
      case 'translating':
        if (this.#size + chunk.length <= MAX_BUFFERED_ERROR || this.#mode !== 'buffering') {
          this.#chunks.push(chunk);
          this.#size += chunk.length;
        }
        return;
      default:
        return;
    }
  }

  #forward(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.out.writable) return;
    if (this.#capture !== undefined) {
      this.#captured += chunk.length;
      if (this.#captured <= MAX_CAPTURE) this.#capture.push(chunk);
      else this.#capture = undefined;
    }
    const ok = this.#parser === undefined ? this.out.write(chunk) : this.#writeEvents(this.#parser.push(chunk));
    if (!ok && !controller.paused) {
      controller.pause();
      this.out.onDrain(() => controller.resume());
    }
  }

  /**
   * Translates the events (provider dialect → OpenAI → client dialect, as far as `from` says they
   * still have to go), meters them, runs the chunk hooks (reverse order) over them and writes what
   * they keep. Meter and hooks see what the client will see.
   */
  #writeEvents(events: SseEvent[], from: 'provider' | 'openai' | 'client' = 'provider'): boolean {
    if (events.length === 0) return true;
    const hooks = this.rt.pipeline.onResponseChunk ?? [];
    const streamT = this.#streamT;
    const ingressT = this.#ingressT;
    let source = streamT !== undefined && from === 'provider' ? events.flatMap((e) => streamT.event(e)) : events;
    if (ingressT !== undefined && from !== 'client') source = source.flatMap((e) => ingressT.event(e));
    let text = '';
    for (const parsed of source) {
      const first = this.meter === undefined ? parsed : this.meter.event(parsed);
      if (first === null) continue;
      let batch: SseEvent[] = [first];
      for (const entry of hooks) {
        const next: SseEvent[] = [];
        for (const ev of batch) {
          if (ev.comment !== undefined && ev.data.length === 0) {
            next.push(ev); // comments (pings) are transport, not content
            continue;
          }
          let result: SseEvent | SseEvent[] | null | void;
          try {
            result = entry.fn(this.ctx, ev);
          } catch (err) {
            this.ctx.log.error('plugin hook failed', { plugin: entry.plugin, err });
            result = ev;
          }
          if (result === undefined) next.push(ev);
          else if (result === null) continue;
          else if (Array.isArray(result)) next.push(...result);
          else next.push(result);
        }
        batch = next;
      }
      for (const ev of batch) text += serializeSse(ev);
    }
    return text.length === 0 ? true : this.out.write(text);
  }

  onResponseEnd(): void {
    switch (this.#mode) {
      case 'committed': {
        if (this.#parser !== undefined) this.#writeEvents(this.#parser.end());
        if (this.#streamT !== undefined) this.#writeEvents(this.#streamT.end(), 'openai');
        if (this.#ingressT !== undefined) this.#writeEvents(this.#ingressT.end(), 'client');
        this.out.end();
        this.#finish({ kind: 'sent' }, true);
        return;
      }
      case 'buffering': {
        let body = Buffer.concat(this.#chunks);
        let headers = this.#headers;
        if (this.translation !== undefined || this.ingress !== undefined) {
          // Held for a possible fallback: in the client's dialect, should it become the answer.
          body = Buffer.from(JSON.stringify(this.#translateError(parseJson(body))));
          headers = { ...headers, 'content-type': 'application/json' };
          delete headers['content-length'];
          delete headers['content-encoding'];
        }
        this.#finish({ kind: 'upstream_error', status: this.#status, headers, body }, false);
        return;
      }
      case 'translating':
        this.#endTranslated();
        return;
      case 'late':
        this.#endLate();
        return;
      case 'holding':
        this.#endedWhileHolding = true;
        return;
      default:
        return;
    }
  }

  /** A dialect's whole answer: translate it and send it as a reply (hooks, metering and all). */
  #endTranslated(): void {
    const t = this.translation;
    const status = this.#status;
    const ok = status >= 200 && status < 300;
    let body: Record<string, unknown>;
    try {
      const parsed = parseJson(Buffer.concat(this.#chunks));
      if (!ok) body = this.#translateError(parsed);
      else {
        const openai = t !== undefined ? t.translator.response(t.ctx, parsed) : (parsed as Record<string, unknown>);
        if (typeof openai !== 'object' || openai === null) throw new Error('the answer is not a JSON object');
        body = this.ingress !== undefined ? this.ingress.dialect.response(openai, this.ctx.body!, { strict: this.ingress.strict }) : openai;
      }
    } catch (err) {
      this.#finish({ kind: 'failed', error: Errors.upstreamInvalidResponse(undefined, { cause: err }) }, false);
      return;
    }
    const bytes = Buffer.from(JSON.stringify(body));
    const headers = downstreamHeaders(this.#headers) as Record<string, string>;
    delete headers['content-length'];
    delete headers['content-encoding'];
    headers['content-type'] = 'application/json';
    if (!ok) headers['x-gateway-error-source'] = 'upstream';
    this.#mode = 'done';
    clearTimeout(this.#deadline);
    this.#offAbort?.();
    void (async () => {
      if (this.meter !== undefined && ok) {
        this.meter.body(bytes);
        this.ctx.usage = await settleUsage(this.rt, this.ctx, this.meter);
      }
      await sendReply(this.rt, this.ctx, this.out, makeReply(status, bytes, headers), { limit: ALL_PLUGINS, proxied: true });
    })().then(
      () => this.resolve({ kind: 'sent' }),
      (err: unknown) => this.resolve({ kind: 'failed', error: toGatewayError(err) }),
    );
  }

  /** A provider's error body in the client's dialect: provider → OpenAI (translator) → client (ingress). */
  #translateError(parsed: unknown): Record<string, unknown> {
    const t = this.translation;
    const openai = t !== undefined ? t.translator.error(t.ctx, this.#status, parsed, this.#headers) : parsed;
    if (this.ingress !== undefined) return this.ingress.dialect.error(this.#status, openai);
    return openai as Record<string, unknown>;
  }

  /** The head went out as events before the answer came; express the answer as events. */
  #endLate(): void {
    const body = Buffer.concat(this.#chunks);
    const ok = this.#status >= 200 && this.#status < 300;
    if (ok) {
      this.out.write(`data: ${body.toString('utf8').replace(/\n/g, '')}\n\n`);
      this.out.end('data: [DONE]\n\n');
    } else {
      this.ctx.streamError = Errors.upstreamStreamFailed(`The upstream answered ${this.#status}.`);
      this.out.failStream(eventBody(body), true);
    }
    this.#finish({ kind: 'sent' }, false);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const mode = this.#mode;
    if (mode === 'done') return;
    if (this.ctx.aborted) {
      // The client went away (or the gateway gave up): nothing left to tell anyone.
      this.#finish({ kind: 'sent' }, false);
      return;
    }
    const failure = upstreamFailure(err);
    if (mode === 'translating') {
      this.#finish({ kind: 'failed', error: failure }, false);
      return;
    }
    if (mode === 'committed' || mode === 'late') {
      const gw = Errors.upstreamStreamFailed(undefined, { cause: err });
      this.ctx.streamError = gw;
      this.ctx.log.warn('upstream failed mid-response', { code: failure.code, err });
      this.out.failStream(gw, this.#sse || mode === 'late');
      this.#finish({ kind: 'sent' }, false);
      return;
    }
    this.#finish({ kind: 'failed', error: failure }, false);
  }

  #finish(result: AttemptResult, complete: boolean): void {
    if (this.#mode === 'done') return;
    this.#mode = 'done';
    clearTimeout(this.#deadline);
    this.#offAbort?.();
    if (complete) {
      const capture = this.#capture;
      const body = this.rt.pipeline.onResponseBody;
      void (async () => {
        // Joined only for those who read the whole answer (the meter, onResponseBody observers).
        const bytes = capture === undefined || (this.meter === undefined && body === null) ? undefined : Buffer.concat(capture);
        if (capture !== undefined) {
          const json = expectsJson(this.ctx, this.#status);
          // The meter's parse serves both; with no meter, a byte check (answer-check.ts) instead of a parse.
          const readable = this.meter !== undefined ? this.meter.body(bytes!) : !json || looksLikeJsonObject(capture);
          // The bytes went out as they came (they are the provider's); the request is logged as failed.
          if (!readable && json) this.ctx.streamError ??= Errors.upstreamInvalidResponse(`The upstream answered ${this.#status} with a body that is not JSON.`);
        }
        if (this.meter !== undefined) {
          // Usage is known before the response hooks run, so budgets and logs read it there.
          if (this.#status >= 200 && this.#status < 300) this.ctx.usage = await settleUsage(this.rt, this.ctx, this.meter);
        }
        if (bytes !== undefined && body !== null) await runObservers(body, this.ctx, (fn) => fn(this.ctx, bytes));
        await runObservers(this.rt.pipeline.onResponseEnd, this.ctx, (fn) => fn(this.ctx));
      })().finally(() => this.resolve(result));
      return;
    }
    this.resolve(result);
  }
}
