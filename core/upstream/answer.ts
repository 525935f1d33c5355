/**
 * The response handling of one upstream attempt: decides what the answer becomes and drives the
 * response sequencer (core/response/sequencer.ts), which runs the hooks.
 *
 *   head ──▶ 2xx, or the last option? ──yes──▶ sequencer: head hooks ▶ client head
 *              │ no                             bytes, or events (provider dialect → OpenAI →
 *              ▼                                client dialect, metered) ▶ sequencer ▶ client
 *      buffer the error answer ──▶ router (fallback/retry decides)
 *
 * A 2xx or the final option's answer is streamed as it arrives: nothing is buffered on the common
 * path. A dialect's whole JSON answer is translated at its end and sent as a reply.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayContext } from '../context.js';
import type { ResponseHead } from '../plugin.js';
import type { Reply } from '../reply.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import type { EventDecoder, StreamTranslator } from '../providers/types.js';
import { Errors, toGatewayError, type GatewayError } from '../errors.js';
import { afterSettled, runObservers } from '../pipeline.js';
import { ALL_PLUGINS, ResponseSequencer, type FlowSource } from '../response/sequencer.js';
import { SseParser, type SseEvent } from '../sse/sse-parser.js';
import { downstreamHeaders } from './headers.js';
import { reply as makeReply } from '../reply.js';
import type { UsageMeter } from '../usage/meter.js';
import { expectsJson, looksLikeJsonObject } from './answer-check.js';
import { settleUsage } from '../usage/estimate.js';
import { upstreamFailure } from './errors.js';
import type { BuiltCall } from './build.js';
import type { AnswerSink, UpstreamCall } from './call.js';

export type AttemptResult =
  /** The answer (or a reply) was written to the client; the response is finished or failed visibly. */
  | { kind: 'sent' }
  /** A non-2xx upstream answer that was not committed (more options remain). */
  | { kind: 'upstream_error'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /** No answer: the call could not be made or timed out, or the gateway refused it. */
  | { kind: 'failed'; error: GatewayError };

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

/**
 * States:
 * - waiting: no answer yet;
 * - holding: an async onResponseHeaders hook is deciding; the upstream is paused and anything it
 *   still delivers is held (undici stops its parser on pause, so this is normally nothing);
 * - committed: streaming the answer to the client (through the sequencer);
 * - buffering: holding a non-2xx answer for the router (more options remain);
 * - late: the head already went out as an event stream (pings), so the answer is buffered and
 *   sent whole, as events (the sequencer's pinged-head rule);
 * - translating: a dialect's whole answer, translated at its end and sent as a reply (also a 2xx
 *   JSON answer a plugin asked to see whole, `ctx.holdAnswer`, sent as it came);
 * - done: resolved; anything undici reports afterwards is ignored.
 */
type Mode = 'waiting' | 'holding' | 'committed' | 'buffering' | 'late' | 'translating' | 'done';

export class UpstreamAnswer implements AnswerSink, FlowSource {
  #mode: Mode = 'waiting';
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #sse = false;
  #parser: EventDecoder | SseParser | undefined;
  #capture: Buffer[] | undefined;
  #captured = 0;
  /** The upstream finished while an async response hook held the answer. */
  #endedWhileHolding = false;
  #seq: ResponseSequencer | undefined;
  /** Provider events → OpenAI events, for a translated stream. */
  #streamT: StreamTranslator | undefined;
  /** OpenAI events → the client's dialect's events (core/ingress). */
  #ingressT: StreamTranslator | undefined;

  constructor(
    private readonly rt: Runtime,
    private readonly ctx: GatewayContext,
    private readonly out: ResponseWriter,
    private readonly built: BuiltCall,
    private readonly call: UpstreamCall,
    private readonly final: boolean,
    private readonly resolve: (result: AttemptResult) => void,
    private readonly meter: UsageMeter | undefined,
  ) {}

  #sequencer(): ResponseSequencer {
    if (this.#seq === undefined) {
      this.#seq = new ResponseSequencer(this.rt, this.ctx, this.out, ALL_PLUGINS, true);
      this.#seq.attach(this);
    }
    return this.#seq;
  }

  // The sequencer's flow source: the upstream call, paused, resumed, or cancelled by a plugin.
  pause(): void {
    this.call.pause();
  }

  resume(): void {
    this.call.resume();
  }

  abort(reason: Error): void {
    this.abandoned();
    this.call.abort(reason);
  }

  start(status: number, headers: IncomingHttpHeaders): void {
    if (this.#mode !== 'waiting') return;
    this.#status = status;
    this.#headers = headers;
    const { translation, ingress } = this.built;
    const ctype = headers['content-type'];
    const decoder = translation?.translator.streamDecoder;
    this.#sse = typeof ctype === 'string' && (ctype.startsWith('text/event-stream') || (decoder !== undefined && ctype.startsWith(decoder.contentType)));
    const ok = status >= 200 && status < 300;
    const head: ResponseHead = { status, headers: downstreamHeaders(headers), sse: this.#sse };

    if (this.rt.pipeline.onUpstreamResponse !== null) {
      void runObservers(this.rt.pipeline.onUpstreamResponse, this.ctx, (fn) => fn(this.ctx, this.built.attempt, head));
    }
    if (!ok && !this.final) {
      this.#mode = 'buffering';
      return;
    }
    const translated = translation !== undefined || ingress !== undefined;
    // A plugin must see the whole answer before it goes out (ctx.holdAnswer): read it whole too.
    if ((translated && !(ok && this.#sse)) || (ok && !this.#sse && this.ctx.holdAnswer && !this.out.pinged)) {
      // A dialect's JSON answer (or error) is translated whole, then sent as a reply.
      this.#mode = 'translating';
      return;
    }
    if (this.out.pinged && !(ok && this.#sse)) {
      // Pings already sent a 200 event-stream head, so every other answer is sent whole, as events.
      this.out.stopPings();
      this.#mode = 'late';
      return;
    }
    if (translated) {
      if (translation !== undefined) this.#streamT = translation.translator.stream(translation.ctx);
      if (ingress !== undefined) this.#ingressT = ingress.dialect.stream(this.ctx.body!, { strict: ingress.strict, onAnswer: ingress.onAnswer });
      delete head.headers['content-length'];
      head.headers['content-type'] = 'text/event-stream';
    }
    if (!ok) head.headers['x-gateway-error-source'] = 'upstream';
    this.#commit(head);
  }

  #commit(head: ResponseHead): void {
    const seq = this.#sequencer();
    const verdict = seq.head(head);
    if (verdict instanceof Promise) {
      // An async hook: hold the upstream body until it settles (backpressure keeps memory bounded).
      this.#mode = 'holding';
      seq.holdHead();
      void verdict.then((replacement) => {
        if (this.#mode === 'done') return;
        if (replacement !== undefined) return this.#replace(replacement);
        this.#open(head);
        const held = this.#chunks;
        this.#chunks = [];
        this.#size = 0;
        for (const chunk of held) this.#forward(chunk);
        if (this.#endedWhileHolding) this.end();
        else seq.releaseHead();
      });
      return;
    }
    if (verdict !== undefined) return this.#replace(verdict);
    this.#open(head);
  }

  /** A response hook answered instead of the upstream: drop the upstream call, send the replacement. */
  #replace(replacement: Reply): void {
    this.#mode = 'done';
    this.call.done();
    this.call.abort(new Error('replaced by a response hook'));
    this.#sequencer()
      .replace(replacement)
      .then(
        () => this.resolve({ kind: 'sent' }),
        (err: unknown) => this.resolve({ kind: 'failed', error: toGatewayError(err) }),
      );
  }

  #open(head: ResponseHead): void {
    this.#mode = 'committed';
    const seq = this.#seq!;
    // SSE is parsed only when someone reads events: chunk hooks, the usage meter, or a dialect.
    if (this.#sse && (seq.readsEvents || this.meter !== undefined || this.#streamT !== undefined || this.#ingressT !== undefined)) {
      this.#parser = this.built.translation?.translator.streamDecoder?.create() ?? new SseParser();
      delete head.headers['content-length']; // events may be rewritten
    }
    // Model-route answers are always captured: a 2xx that is not JSON is logged as unreadable.
    if (!this.#sse && (this.rt.pipeline.onResponseBody !== null || this.meter !== undefined || this.ctx.route.kind === 'model')) this.#capture = [];
    seq.open(head);
  }

  data(chunk: Buffer): void {
    switch (this.#mode) {
      case 'committed':
        return this.#forward(chunk);
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

  #forward(chunk: Buffer): void {
    if (!this.out.writable) return;
    if (this.#capture !== undefined) {
      this.#captured += chunk.length;
      if (this.#captured <= MAX_CAPTURE) this.#capture.push(chunk);
      else this.#capture = undefined;
    }
    if (this.#parser === undefined) this.#seq!.write(chunk);
    else this.#events(this.#parser.push(chunk), 'provider');
  }

  /**
   * Translates the events (provider dialect → OpenAI → client dialect, as far as `from` says they
   * still have to go) and meters them; the sequencer runs the chunk hooks and writes. Meter and
   * hooks see what the client will see.
   */
  #events(events: SseEvent[], from: 'provider' | 'openai' | 'client'): void {
    if (events.length === 0) return;
    const streamT = this.#streamT;
    const ingressT = this.#ingressT;
    let source = streamT !== undefined && from === 'provider' ? events.flatMap((e) => streamT.event(e)) : events;
    if (ingressT !== undefined && from !== 'client') source = source.flatMap((e) => ingressT.event(e));
    const meter = this.meter;
    if (meter !== undefined) {
      const kept: SseEvent[] = [];
      for (const e of source) {
        const m = meter.event(e);
        if (m !== null) kept.push(m);
      }
      source = kept;
    }
    this.#seq!.events(source);
  }

  end(): void {
    switch (this.#mode) {
      case 'committed': {
        if (this.#parser !== undefined) this.#events(this.#parser.end(), 'provider');
        if (this.#streamT !== undefined) this.#events(this.#streamT.end(), 'openai');
        if (this.#ingressT !== undefined) this.#events(this.#ingressT.end(), 'client');
        this.#mode = 'done';
        this.call.done();
        const ended = this.#seq!.endStream();
        if (ended === undefined) this.#complete({ kind: 'sent' }, true);
        else void ended.then(() => this.#complete({ kind: 'sent' }, true));
        return;
      }
      case 'buffering': {
        let body = Buffer.concat(this.#chunks);
        let headers = this.#headers;
        if (this.built.translation !== undefined || this.built.ingress !== undefined) {
          // Held for a possible fallback: in the client's dialect, should it become the answer.
          body = Buffer.from(JSON.stringify(this.#translateError(parseJson(body))));
          headers = { ...headers, 'content-type': 'application/json' };
          delete headers['content-length'];
          delete headers['content-encoding'];
        }
        this.#settle({ kind: 'upstream_error', status: this.#status, headers, body });
        return;
      }
      case 'translating':
        this.#endTranslated();
        return;
      case 'late': {
        const headers = downstreamHeaders(this.#headers) as Record<string, string>;
        this.#sendWhole(makeReply(this.#status, Buffer.concat(this.#chunks), headers));
        return;
      }
      case 'holding':
        this.#endedWhileHolding = true;
        return;
      default:
        return;
    }
  }

  /** A dialect's whole answer: translate it and send it as a reply (hooks, metering and all). */
  #endTranslated(): void {
    const { translation: t, ingress } = this.built;
    const status = this.#status;
    const ok = status >= 200 && status < 300;
    if (ok && t === undefined && ingress === undefined) return this.#endHeld();
    let body: Record<string, unknown>;
    try {
      const parsed = parseJson(Buffer.concat(this.#chunks));
      if (!ok) body = this.#translateError(parsed);
      else {
        const openai = t !== undefined ? t.translator.response(t.ctx, parsed) : (parsed as Record<string, unknown>);
        if (typeof openai !== 'object' || openai === null) throw new Error('the answer is not a JSON object');
        body = ingress !== undefined ? ingress.dialect.response(openai, this.ctx.body!, { strict: ingress.strict, onAnswer: ingress.onAnswer }) : openai;
      }
    } catch (err) {
      this.#settle({ kind: 'failed', error: Errors.upstreamInvalidResponse(undefined, { cause: err }) });
      return;
    }
    const bytes = Buffer.from(JSON.stringify(body));
    const headers = downstreamHeaders(this.#headers) as Record<string, string>;
    delete headers['content-length'];
    delete headers['content-encoding'];
    headers['content-type'] = 'application/json';
    if (!ok) headers['x-gateway-error-source'] = 'upstream';
    if (this.meter !== undefined && ok) this.meter.body(bytes);
    this.#sendWhole(makeReply(status, bytes, headers), this.meter !== undefined && ok);
  }

  /**
   * A 2xx answer held whole for a plugin (ctx.holdAnswer), not translated: the provider's own
   * bytes go out as a reply, so onResponseHeaders sees them (`head.body`) before the client does.
   * Not JSON is an invalid answer, as it would be for a dialect.
   */
  #endHeld(): void {
    const bytes = Buffer.concat(this.#chunks);
    if (!looksLikeJsonObject([bytes])) {
      this.#settle({ kind: 'failed', error: Errors.upstreamInvalidResponse(undefined, { cause: new Error('the answer is not a JSON object') }) });
      return;
    }
    const headers = downstreamHeaders(this.#headers) as Record<string, string>;
    delete headers['content-length'];
    const metered = this.meter !== undefined && this.meter.body(bytes);
    this.#sendWhole(makeReply(this.#status, bytes, headers), metered);
  }

  /** Sends a whole answer as a reply through the sequencer (usage settled first when metered). */
  #sendWhole(answer: Reply, metered = false): void {
    this.#mode = 'done';
    this.call.done();
    void (async () => {
      if (metered) this.ctx.usage = await settleUsage(this.rt, this.ctx, this.meter!);
      await this.#sequencer().reply(answer);
    })().then(
      () => this.resolve({ kind: 'sent' }),
      (err: unknown) => this.resolve({ kind: 'failed', error: toGatewayError(err) }),
    );
  }

  /** A provider's error body in the client's dialect: provider → OpenAI (translator) → client (ingress). */
  #translateError(parsed: unknown): Record<string, unknown> {
    const { translation: t, ingress } = this.built;
    const openai = t !== undefined ? t.translator.error(t.ctx, this.#status, parsed, this.#headers) : parsed;
    if (ingress !== undefined) return ingress.dialect.error(this.#status, openai);
    return openai as Record<string, unknown>;
  }

  error(err: Error): void {
    const mode = this.#mode;
    if (mode === 'done') return;
    this.#mode = 'done';
    this.call.done();
    const seq = this.#seq;
    if (this.ctx.aborted) {
      // The client went away (or the gateway gave up): nothing left to tell anyone.
      this.#complete({ kind: 'sent' }, false);
      return;
    }
    const failure = upstreamFailure(err);
    if (mode === 'committed' && seq !== undefined) {
      this.ctx.log.warn('upstream failed mid-response', { code: failure.code, err });
      seq.failStream(Errors.upstreamStreamFailed(undefined, { cause: err }), this.#sse);
      this.#complete({ kind: 'sent' }, false);
      return;
    }
    if (mode === 'late') {
      // The head went out as events (pings): the failure can only be the error event.
      this.ctx.log.warn('upstream failed mid-response', { code: failure.code, err });
      const s = this.#sequencer();
      s.failStream(Errors.upstreamStreamFailed(undefined, { cause: err }), true);
      afterSettled(s.finish(undefined), () => this.resolve({ kind: 'sent' }));
      return;
    }
    this.#settle({ kind: 'failed', error: failure });
  }

  /** The plugin side ended the stream (an error event): the upstream is cancelled, the phase ends. */
  abandoned(): void {
    if (this.#mode !== 'committed') return;
    this.#mode = 'done';
    this.call.done();
    this.#complete({ kind: 'sent' }, true);
  }

  /** Resolved without an answer sent to the client (the router decides what comes next). */
  #settle(result: AttemptResult): void {
    this.#mode = 'done';
    this.call.done();
    this.resolve(result);
  }

  /**
   * The committed answer is over: check and meter what was captured (`settle`: it came whole),
   * then the sequencer's end of the phase (onResponseBody, onResponseEnd).
   */
  #complete(result: AttemptResult, settle: boolean): void {
    const seq = this.#seq;
    if (seq === undefined) return this.resolve(result);
    const capture = settle ? this.#capture : undefined;
    const meter = settle ? this.meter : undefined;
    // Joined only for those who read the whole answer (the meter, onResponseBody observers).
    const bytes = capture === undefined || (meter === undefined && this.rt.pipeline.onResponseBody === null) ? undefined : joined(capture);
    if (capture !== undefined) {
      const json = expectsJson(this.ctx, this.#status);
      // The meter's parse serves both; with no meter, a byte check (answer-check.ts) instead of a parse.
      const readable = meter !== undefined ? meter.body(bytes!) : !json || looksLikeJsonObject(capture);
      // The bytes went out as they came (they are the provider's); the request is logged as failed.
      if (!readable && json) this.ctx.streamError ??= Errors.upstreamInvalidResponse(`The upstream answered ${this.#status} with a body that is not JSON.`);
    }
    // Usage is known before the response hooks run, so budgets and logs read it there. An answer
    // that reported it needs no promise; one that did not is counted (estimate.ts), asynchronously.
    let pending: Promise<void> | undefined;
    if (meter !== undefined && this.#status >= 200 && this.#status < 300) {
      if (meter.usage !== undefined) this.ctx.usage = meter.usage;
      else
        pending = settleUsage(this.rt, this.ctx, meter).then((usage) => {
          this.ctx.usage = usage;
          return seq.finish(bytes);
        });
    }
    afterSettled(pending ?? seq.finish(bytes), () => this.resolve(result));
  }
}

/** The chunks as one buffer: an answer that came in one chunk (most do) is not copied. */
function joined(chunks: Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
