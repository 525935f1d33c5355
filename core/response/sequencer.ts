/**
 * The response phase, in one place. Every answer the client gets (a plugin's reply, a gateway
 * error, a cache hit, a proxied upstream answer) goes through one ResponseSequencer, which owns
 * the order of the response hooks and what a failure looks like at each point:
 *
 *   head  onResponseHeaders (reverse, plugins up to `limit`). A reply or error from a hook replaces
 *         the answer ONCE: the replacement's head runs the hooks again, so every plugin sees the
 *         head that goes out, but it is not replaced again.
 *   body  whole: sent, then onResponseBody(bytes)
 *         streamed bytes: written as they come; a slow client pauses the source
 *         SSE events: onResponseChunk per event (reverse), with holds, waits and failures
 *         (EventStream), then written; onResponseStreamEnd when the source ended
 *   end   onResponseEnd (reverse), exactly once, also after a failure or a client that left
 *         (`ctx.streamError`, `ctx.aborted` say which)
 *   fail  before the head: an error reply (the caller's); after it: `event: error` on event
 *         streams, a cut connection otherwise. A head already sent by pings (200 event stream)
 *         takes the answer as events: a 2xx body as one data event, anything else as an error event.
 *
 * The upstream side (core/upstream/answer.ts) and the gateway's replies (core/respond.ts) only
 * drive it; neither decides hook order.
 */
import type { GatewayContext } from '../context.js';
import type { EventStream, ResponseHead } from '../plugin.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import { passed, runHooks, runObservers, upTo, type EventStage, type Stop } from '../pipeline.js';
import { reply as makeReply, type Reply } from '../reply.js';
import { Errors, isGatewayError, toGatewayError, type GatewayError } from '../errors.js';
import { serializeSse, type SseEvent } from '../sse/sse-parser.js';

/** Every plugin's response hooks run (the request reached the terminal stage). */
export const ALL_PLUGINS = Number.MAX_SAFE_INTEGER;

/** What the sequencer pauses and cancels while it streams: the upstream call (undici's controller). */
export interface FlowSource {
  pause(): void;
  resume(): void;
  /** Stop sending: a plugin ended the stream. */
  abort(reason: Error): void;
}

/** Why the source is paused; it resumes when no reason is left. */
const DRAIN = 1;
const WAIT = 2;
const HEAD = 4;

/** The empty inbox, shared: most responses never queue an event (replaced before a push). */
const NONE: SseEvent[] = [];

/** A streamed reply body: a Readable, an async generator, any async iterable of chunks. */
export function isStreamBody(body: unknown): body is AsyncIterable<Buffer | string> {
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && typeof (body as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function';
}

function encode(reply: Reply): { body: Buffer | string | undefined; headers: Record<string, string | string[]> } {
  const b = reply.body;
  const headers: Record<string, string | string[]> = { ...reply.headers };
  if (b === undefined || isStreamBody(b)) return { body: undefined, headers };
  if (typeof b === 'string' || Buffer.isBuffer(b)) return { body: b, headers };
  // Plugin replies are arbitrary values; admin routes serialize with their own compiled serializers.
  if (headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  return { body: JSON.stringify(b), headers };
}

/** A reply or upstream body as the object of an error event: JSON bytes parsed, anything else wrapped. */
export function eventBody(body: unknown): Record<string, unknown> {
  let value = body;
  if (Buffer.isBuffer(value) || typeof value === 'string') {
    const text = value.toString();
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return { error: { message: String(value).slice(0, 2000), type: 'upstream_error', param: null, code: null } };
}

/** On Anthropic's routes the one error shape also carries Anthropic's top-level `type: "error"`. */
function errorBody(ctx: GatewayContext, err: GatewayError): Record<string, unknown> {
  const body = err.toJSON() as unknown as Record<string, unknown>;
  const anthropic = ctx.route.kind === 'model' && (ctx.route.name === 'messages' || ctx.route.name === 'messages.count_tokens');
  return anthropic ? { type: 'error', ...body } : body;
}

/** A gateway error as a reply in the one error shape; it becomes the request's outcome. */
export function errorReply(ctx: GatewayContext, err: GatewayError): Reply {
  ctx.error = err;
  ctx.source = 'gateway';
  return makeReply(err.status, errorBody(ctx, err), { 'x-gateway-error-source': 'gateway', ...err.headers });
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** One plugin's place in one stream: its held events and its handle (the EventStream it is given). */
class Stage implements EventStream {
  held: SseEvent[] = [];
  /** While its hook runs: where what it passes on goes (released events first, then its return). */
  out: SseEvent[] | undefined;
  /** The event its hook is looking at, and whether the hook held it. */
  current: SseEvent | undefined;
  tookCurrent = false;

  constructor(
    readonly seq: ResponseSequencer,
    readonly at: number,
    readonly def: EventStage,
  ) {}

  get closed(): boolean {
    return this.seq.closed;
  }

  hold(...events: SseEvent[]): null {
    for (const e of events) {
      if (e === this.current) this.tookCurrent = true;
      this.held.push(e);
    }
    return null;
  }

  release(replacement?: SseEvent[]): void {
    const events = replacement ?? this.held;
    this.held = [];
    if (events.length > 0) this.seq.releaseFrom(this, events);
  }

  wait(work: Promise<unknown>): void {
    this.seq.waitFor(work);
  }

  fail(error: GatewayError): void {
    this.seq.failEvents(error);
  }
}

export class ResponseSequencer {
  readonly #rt: Runtime;
  readonly #ctx: GatewayContext;
  readonly #out: ResponseWriter;
  /** Response hooks run for plugins at or before this index (the one that answered). */
  readonly #limit: number;
  /** Routing headers go on the head (a proxied answer, a cache hit). */
  readonly #proxied: boolean;
  #finished = false;
  #closed = false;
  #source: FlowSource | undefined;
  #paused = 0;
  /** Event flow: created on the first event, only when some plugin reads events. */
  #stages: Stage[] | undefined;
  /** Hook calls in progress (a release from outside a hook waits for them). */
  #busy = 0;
  #waits = 0;
  /** Events read while a wait holds the flow, not yet shown to any hook. */
  #inbox: SseEvent[] = NONE;
  #deferred: Array<{ events: SseEvent[]; from: number }> | undefined;
  /** Serialized events of this turn, written once. */
  #text = '';
  /** The source ended while a wait held the flow: the end runs when it is over. */
  #endPending: (() => void) | undefined;

  constructor(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, limit: number, proxied: boolean) {
    this.#rt = rt;
    this.#ctx = ctx;
    this.#out = out;
    this.#limit = limit;
    this.#proxied = proxied;
  }

  /** The response is over: ended, failed, or ended by a plugin. */
  get closed(): boolean {
    return this.#closed;
  }

  /** True when SSE events must be parsed and shown to plugins. */
  get readsEvents(): boolean {
    return this.#rt.pipeline.eventStages !== null && this.#limit === ALL_PLUGINS;
  }

  // ── head ──────────────────────────────────────────────────────────────────────────────────

  /**
   * Runs onResponseHeaders on `head`. Returns the replacement when a hook answered instead (its
   * error as an error reply), else undefined; a promise only when a hook was async.
   */
  head(head: ResponseHead): Reply | undefined | Promise<Reply | undefined> {
    const hooks = upTo(this.#rt.pipeline.onResponseHeaders, this.#limit);
    if (hooks === null) return undefined;
    const ctx = this.#ctx;
    const stop = runHooks(hooks, ctx, (fn) => fn(ctx, head));
    if (stop instanceof Promise) return stop.then((s) => this.#verdict(s));
    return this.#verdict(stop);
  }

  #verdict(stop: Stop | undefined): Reply | undefined {
    if (stop === undefined) return undefined;
    return stop.reply ?? errorReply(this.#ctx, stop.error!);
  }

  /** The source of a streamed answer: paused for a slow client or a plugin's wait, cancelled by a plugin's fail. */
  attach(source: FlowSource): void {
    this.#source = source;
  }

  /**
   * Sends the head of a streamed answer (after {@link head} let it through). An upstream's event
   * stream keeps its pings during silences and gets the idle watch
   * (`upstream.stream_idle_timeout`); any other body stops the pings.
   */
  open(head: ResponseHead): void {
    const out = this.#out;
    if (head.sse && this.#source !== undefined) {
      const config = this.#rt.config;
      out.watchStream(config.server.stream_ping_interval, config.upstream.stream_idle_timeout, () => this.#idle());
    } else out.stopPings();
    // A head sent by pings already went out as a 200 event stream; the events follow it.
    if (out.writable && !out.headersSent) out.writeHead(head.status, head.headers, this.#proxied);
  }

  // ── whole replies ─────────────────────────────────────────────────────────────────────────

  /** A reply through the whole phase: head hooks (a hook may replace it), body, end hooks. */
  async reply(reply: Reply): Promise<void> {
    const { body, headers } = encode(reply);
    const head: ResponseHead = body === undefined ? { status: reply.status, headers, sse: false } : { status: reply.status, headers, sse: false, body };
    let replacement = this.head(head);
    if (isPromise(replacement)) replacement = await replacement;
    if (replacement !== undefined) return this.replace(replacement);
    return this.#send(head, reply.body, body);
  }

  /**
   * Answers with `reply` instead of what was going out (a hook's replacement): its head runs the
   * hooks once more, but nothing replaces it again.
   */
  async replace(reply: Reply): Promise<void> {
    const { body, headers } = encode(reply);
    const head: ResponseHead = body === undefined ? { status: reply.status, headers, sse: false } : { status: reply.status, headers, sse: false, body };
    // Every hook sees the head that goes out; what they return no longer replaces it.
    const ctx = this.#ctx;
    const observing = runObservers(upTo(this.#rt.pipeline.onResponseHeaders, this.#limit), ctx, (fn) => fn(ctx, head));
    if (observing !== undefined) await observing;
    return this.#send(head, reply.body, body);
  }

  async #send(head: ResponseHead, raw: unknown, body: Buffer | string | undefined): Promise<void> {
    if (isStreamBody(raw)) return this.#stream(head, raw);
    const out = this.#out;
    if (out.pinged) this.#asEvents(head.status, raw);
    else if (out.writable && !out.headersSent) out.send(head.status, head.headers, body, this.#proxied);
    this.#closed = true;
    const pending = this.finish(body);
    if (pending !== undefined) await pending;
  }

  /**
   * The head went out as an event stream (pings) before the answer: a 2xx body becomes one data
   * event and `[DONE]`, anything else the error event.
   */
  #asEvents(status: number, raw: unknown): void {
    const out = this.#out;
    if (!out.writable) return;
    if (status >= 200 && status < 300) {
      const text = Buffer.isBuffer(raw) || typeof raw === 'string' ? raw.toString() : JSON.stringify(raw ?? null);
      out.write(`data: ${text.replace(/\n/g, '')}\n\n`);
      out.end('data: [DONE]\n\n');
      return;
    }
    // A gateway error is the outcome already; an upstream's error answer fails the stream.
    if (this.#ctx.error === undefined) this.#ctx.streamError ??= Errors.upstreamStreamFailed(`The upstream answered ${status}.`);
    out.failStream(eventBody(raw), true);
  }

  /**
   * Streams a reply body with backpressure (a `false` write waits for `drain`, or for the client
   * to go away). The first chunk is read before the head goes out, so a source that fails at once
   * is still an ordinary error reply (thrown to the caller); a failure after the head fails the
   * stream. onResponseBody does not run (there is no whole body to hand over).
   */
  async #stream(head: ResponseHead, body: AsyncIterable<Buffer | string>): Promise<void> {
    const out = this.#out;
    const ctx = this.#ctx;
    const it = body[Symbol.asyncIterator]();
    try {
      let next = await it.next();
      if (!out.writable) return;
      delete head.headers['content-length'];
      this.open(head);
      while (!next.done) {
        if (!out.writable) break;
        if (!out.write(next.value)) {
          await new Promise<void>((resolve) => {
            const off = ctx.onAbort(resolve);
            out.onDrain(() => (off(), resolve()));
          });
        }
        next = await it.next();
      }
      if (out.writable) out.end();
    } catch (err) {
      if (!out.headersSent) throw err;
      const error = toGatewayError(err);
      ctx.log.warn('streamed reply failed', { code: error.code, err });
      this.failStream(error, false);
    } finally {
      this.#closed = true;
      // Lets a generator run its cleanup (close cursors, files) when the loop ended early.
      await it.return?.();
    }
    const pending = this.finish(undefined);
    if (pending !== undefined) await pending;
  }

  // ── streamed answers ──────────────────────────────────────────────────────────────────────

  /** Raw bytes of a streamed answer. A slow client pauses the source until it drains. */
  write(chunk: Buffer | string): void {
    const out = this.#out;
    out.heard();
    if (!out.writable) return;
    if (!out.write(chunk)) this.#pause(DRAIN);
  }

  /** The source is paused while an async onResponseHeaders hook decides (anything it still sends is the caller's). */
  holdHead(): void {
    this.#pause(HEAD);
  }

  releaseHead(): void {
    this.#resume(HEAD);
  }

  #pause(reason: number): void {
    if (this.#paused & reason) return;
    const was = this.#paused;
    this.#paused |= reason;
    if (reason === DRAIN) this.#out.onDrain(() => this.#resume(DRAIN));
    if (was === 0) this.#source?.pause();
  }

  #resume(reason: number): void {
    if ((this.#paused & reason) === 0) return;
    this.#paused &= ~reason;
    if (this.#paused === 0 && !this.#closed) this.#source?.resume();
  }

  /**
   * SSE events of a streamed answer, in the client's dialect: through each plugin's
   * onResponseChunk (reverse order), then written in one write.
   */
  events(events: SseEvent[]): void {
    if (this.#closed || events.length === 0) return;
    this.#out.heard();
    const defs = this.#limit === ALL_PLUGINS ? this.#rt.pipeline.eventStages : null;
    if (defs === null) {
      let text = '';
      for (const e of events) text += serializeSse(e);
      return this.write(text);
    }
    if (this.#stages === undefined) {
      const ctx = this.#ctx;
      this.#stages = (ctx.passed === undefined ? defs : defs.filter((def) => !passed(ctx, def))).map((def, i) => new Stage(this, i, def));
    }
    if (this.#waits > 0) {
      if (this.#inbox === NONE) this.#inbox = [];
      for (const e of events) this.#inbox.push(e);
      return;
    }
    for (let k = 0; k < events.length; k++) {
      this.#flow(events[k]!, 0);
      if (this.#closed) return;
      if (this.#waits > 0) {
        if (this.#inbox === NONE) this.#inbox = [];
        for (let j = k + 1; j < events.length; j++) this.#inbox.push(events[j]!);
        break;
      }
    }
    this.#flush();
  }

  /** One event from stage `from` on; what comes out of the last stage is serialized. */
  #flow(event: SseEvent, from: number): void {
    const stages = this.#stages!;
    const ctx = this.#ctx;
    let batch: SseEvent[] = [event];
    for (let i = from; i < stages.length && batch.length > 0; i++) {
      const stage = stages[i]!;
      const next: SseEvent[] = [];
      for (const ev of batch) {
        if (ev.comment !== undefined && ev.data.length === 0) {
          next.push(ev); // comments (pings) are transport, not content
          continue;
        }
        stage.out = next;
        stage.current = ev;
        stage.tookCurrent = false;
        this.#busy++;
        let result: SseEvent | SseEvent[] | null | void;
        try {
          result = stage.def.chunk(ctx, ev, stage);
        } catch (err) {
          ctx.log.error('plugin hook failed', { plugin: stage.def.plugin, err });
          result = stage.tookCurrent ? null : ev;
        }
        this.#busy--;
        stage.out = undefined;
        stage.current = undefined;
        if (this.#closed) return;
        if (result === undefined) {
          if (!stage.tookCurrent) next.push(ev);
        } else if (result === null) continue;
        else if (Array.isArray(result)) for (const r of result) next.push(r);
        else next.push(result);
      }
      batch = next;
    }
    for (const ev of batch) this.#text += serializeSse(ev);
    if (this.#busy === 0 && this.#deferred !== undefined) this.#runDeferred();
  }

  #runDeferred(): void {
    const deferred = this.#deferred!;
    this.#deferred = undefined;
    for (const d of deferred) for (const e of d.events) this.#flow(e, d.from);
  }

  #flush(): void {
    const text = this.#text;
    if (text.length === 0) return;
    this.#text = '';
    this.write(text);
  }

  /** A stage passes on events: inside its hook, into its output; outside, on through the later stages now. */
  releaseFrom(stage: Stage, events: SseEvent[]): void {
    if (this.#closed) return;
    if (stage.out !== undefined) {
      for (const e of events) stage.out.push(e);
      return;
    }
    if (this.#busy > 0) {
      (this.#deferred ??= []).push({ events, from: stage.at + 1 });
      return;
    }
    for (const e of events) this.#flow(e, stage.at + 1);
    this.#flush();
  }

  /** No event enters the flow (and the source is paused) until `work` settles. */
  waitFor(work: Promise<unknown>): void {
    if (this.#closed) return;
    this.#waits++;
    this.#pause(WAIT);
    work
      .then(undefined, (err: unknown) => {
        const error = isGatewayError(err) ? toGatewayError(err) : Errors.pluginFailed(undefined, { cause: err });
        if (!isGatewayError(err)) this.#ctx.log.error('plugin hook failed', { err });
        this.failEvents(error);
      })
      .finally(() => {
        this.#waits--;
        if (this.#waits === 0) this.#drainInbox();
      });
  }

  #drainInbox(): void {
    const inbox = this.#inbox;
    let k = 0;
    while (k < inbox.length && this.#waits === 0 && !this.#closed) this.#flow(inbox[k++]!, 0);
    this.#inbox = k === inbox.length ? NONE : inbox.slice(k);
    if (this.#closed) return;
    this.#flush();
    if (this.#waits > 0) return;
    const end = this.#endPending;
    if (end !== undefined) {
      // The source is over; the end (waiting on this) goes on.
      this.#endPending = undefined;
      this.#paused &= ~WAIT;
      end();
      return;
    }
    this.#resume(WAIT);
  }

  /**
   * The source ended: what plugins still hold goes out (after their onResponseStreamEnd), then the
   * response ends. A promise only when a plugin holds or waits.
   */
  endStream(): void | Promise<void> {
    if (this.#closed) return;
    if (this.#stages === undefined) return this.#close();
    if (this.#waits > 0) return new Promise<void>((resolve) => (this.#endPending = resolve)).then(() => (this.#closed ? undefined : this.#endStages()));
    return this.#endStages();
  }

  async #endStages(): Promise<void> {
    const stages = this.#stages!;
    const ctx = this.#ctx;
    for (let i = 0; i < stages.length; i++) {
      const stage = stages[i]!;
      const end = stage.def.end;
      if (end !== undefined) {
        const out: SseEvent[] = [];
        stage.out = out;
        this.#busy++;
        let result: unknown;
        try {
          result = end(ctx, stage);
        } catch (err) {
          ctx.log.error('plugin hook failed', { plugin: stage.def.plugin, err });
        }
        this.#busy--;
        stage.out = undefined;
        if (this.#closed) return;
        for (const e of out) this.#flow(e, i + 1);
        if (isPromise(result)) {
          // While it settles, its releases go out at once (nothing else is flowing).
          try {
            await result;
          } catch (err) {
            ctx.log.error('plugin hook failed', { plugin: stage.def.plugin, err });
          }
          if (this.#closed) return;
        }
      }
      if (stage.held.length > 0) {
        const held = stage.held;
        stage.held = [];
        for (const e of held) this.#flow(e, i + 1);
      }
      this.#flush();
      if (this.#waits > 0) await new Promise<void>((resolve) => (this.#endPending = resolve));
      if (this.#closed) return;
    }
    this.#close();
  }

  #close(): void {
    if (this.#deferred !== undefined) this.#runDeferred();
    this.#flush();
    this.#closed = true;
    if (this.#out.writable) this.#out.end();
  }

  /**
   * The upstream of a flowing event stream stayed silent past `upstream.stream_idle_timeout`: the
   * stream ends with an `upstream_idle_timeout` error event and the upstream call is closed. Not
   * while the gateway itself holds the upstream (a slow client, a plugin's wait): false then.
   */
  #idle(): boolean {
    if (this.#closed) return true;
    if (this.#paused !== 0) return false;
    const ms = this.#rt.config.upstream.stream_idle_timeout;
    const error = Errors.upstreamIdleTimeout(`The upstream sent nothing for ${ms} ms (upstream.stream_idle_timeout); the stream was closed.`);
    this.#ctx.log.warn('upstream stream idle: closed', { code: error.code, idle_ms: ms, provider: this.#ctx.provider });
    this.failEvents(error, 'the upstream stream was idle too long');
    return true;
  }

  /** A plugin (or the idle watch) ends the stream with an error event: what is held is dropped, the source cancelled. */
  failEvents(error: GatewayError, reason = 'the stream was ended by a plugin'): void {
    if (this.#closed) return;
    this.#flush();
    this.#inbox = NONE;
    this.#deferred = undefined;
    if (this.#stages !== undefined) for (const s of this.#stages) s.held = [];
    this.#closed = true;
    this.#ctx.streamError = error;
    this.#out.failStream(errorBody(this.#ctx, error), true);
    const end = this.#endPending;
    this.#endPending = undefined;
    end?.();
    const source = this.#source;
    // Outside the current undici callback: aborting inside it re-enters the handler.
    if (source !== undefined) queueMicrotask(() => source.abort(new Error(reason)));
  }

  /**
   * The answer failed after its head: an event stream gets an `event: error`, anything else is cut
   * off. Before the head, the caller answers with an error reply instead.
   */
  failStream(error: GatewayError, sse: boolean): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#ctx.streamError = error;
    this.#out.failStream(error, sse);
    const end = this.#endPending;
    this.#endPending = undefined;
    end?.();
  }

  /**
   * The end of the phase, once: onResponseBody (a whole body), then onResponseEnd. Synchronous
   * (undefined) when every hook was; a promise when one was not.
   */
  finish(body: Buffer | string | undefined): Promise<void> | undefined {
    if (this.#finished) return undefined;
    this.#finished = true;
    this.#closed = true;
    const ctx = this.#ctx;
    const pipeline = this.#rt.pipeline;
    const bodyHooks = upTo(pipeline.onResponseBody, this.#limit);
    const ends = upTo(pipeline.onResponseEnd, this.#limit);
    const end = (): Promise<void> | undefined => runObservers(ends, ctx, (fn) => fn(ctx));
    if (bodyHooks !== null && body !== undefined) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      const pending = runObservers(bodyHooks, ctx, (fn) => fn(ctx, bytes));
      if (pending !== undefined) return pending.then(end);
    }
    return end();
  }
}
