/**
 * The one owner of the client response: Node's HTTP/1.1 `ServerResponse`, or the HTTP/2 stream
 * itself (the gateway serves HTTP/2 on the core stream API, see core/server.ts).
 *
 * It adds the gateway's headers to every head, honours backpressure (`write()` → false means wait
 * for `drain`), sends SSE `: ping` comments while a stream is silent (waiting for its first
 * upstream byte, and between events once it flows), watches a flowing stream's upstream for
 * silence (the idle timeout), and makes failures visible: before the head, an error reply; after
 * it, an SSE `event: error` (for event streams) or a reset connection or stream, never a
 * normal-looking end.
 *
 * Keep-alive costs one interval timer per stream and two field stores per write: a write marks the
 * client side busy, the sequencer marks the upstream side heard, and the tick counts quiet ticks.
 * A ping goes out only between events (the last write ended with a blank line), so it never splits
 * an event, and it is written here, past the response hooks, so no plugin sees it as an event.
 *
 * Syscalls: a whole answer leaves in one write. On HTTP/1.1 Node corks the socket from the first
 * write to the next tick, so head, body and end written in one tick go out together; on HTTP/2 a
 * bodyless answer is one HEADERS frame with END_STREAM, and the session sends every frame queued
 * in a tick (any stream) in one write.
 */
import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import { constants as h2, type ServerHttp2Stream } from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { GatewayContext } from './context.js';
import type { GatewayError } from './errors.js';

type Headers = Record<string, string | string[] | number>;

const PING = Buffer.from(': ping\n\n');
const END_STREAM = { endStream: true };
/**
 * A head with a body to follow waits for trailers, and the trailers are empty: the body's end is
 * then an empty DATA frame with END_STREAM, sent once the last write completed. Without it the
 * stream can close (the client's request being complete) before Node reports the last write done:
 * Node then destroys the stream without ever emitting 'finish', so a complete answer looks like a
 * client gone away, and it builds an ERR_STREAM_DESTROYED with a stack trace per response (about
 * 5 % of the CPU under load). Node's compatibility layer sends its answers the same way.
 */
const WAIT_FOR_TRAILERS = { waitForTrailers: true };
const NO_TRAILERS = {};

function sendNoTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(NO_TRAILERS);
}

/** A whole HTTP/2 answer outside any request context (the liveness probe): head, body, end. */
export function respondWhole(stream: ServerHttp2Stream, headers: Record<string, string | number>, body: string): void {
  stream.once('wantTrailers', sendNoTrailers);
  stream.respond(headers, WAIT_FOR_TRAILERS);
  stream.end(body);
}

/**
 * Connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2): Node's stream API throws
 * on them, where its compatibility layer silently dropped them; they are dropped here too.
 */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te']);

const LF = 10;
const CR = 13;

/** True when nothing was written yet or the last write ended an SSE event (a blank line). */
function endsEvent(tail: Buffer | string | undefined): boolean {
  if (tail === undefined || tail.length === 0) return true;
  const n = tail.length;
  const at = (i: number): number => (i < 0 ? -1 : typeof tail === 'string' ? tail.charCodeAt(i) : tail[i]!);
  const last = at(n - 1);
  if (last !== LF && last !== CR) return false;
  const prev = at(n - 2);
  if (prev === LF || (prev === CR && last === CR)) return true; // \n\n, \r\r, \n\r
  // \r\n ends one line: the line before must have ended there too (\r\n\r\n, \n\r\n).
  if (prev === CR && last === LF) {
    const before = at(n - 3);
    return before === LF || before === CR;
  }
  return false;
}

/**
 * A duration in ms with three decimals, as `toFixed(3)` writes it for the non-negative values
 * timings are, in about 80 ns against 210 (`toFixed` was a sixth of the answer's head in a profile).
 */
export function millis(ms: number): string {
  const us = Math.round(Math.max(0, ms) * 1000);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

export class ResponseWriter {
  /** The HTTP/1.1 response, or undefined on HTTP/2. */
  readonly #res: ServerResponse | undefined;
  /** The HTTP/2 stream, or undefined on HTTP/1.1. */
  readonly #stream: ServerHttp2Stream | undefined;
  readonly #ctx: GatewayContext;
  /** The stream's one keep-alive timer (pings, idle watch); undefined when off. */
  #pingTimer: NodeJS.Timeout | undefined;
  /** Tick period (ms), and how many quiet ticks make a ping, or an idle upstream (0 = never). */
  #period = 0;
  #pingTicks = 0;
  #idleTicks = 0;
  /** Called when the upstream stayed silent for the idle timeout; false means "not its fault" (paused by us). */
  #onIdle: (() => boolean) | undefined;
  /** Something was written, or heard from the upstream, since the last tick. */
  #wrote = false;
  #heard = false;
  #quiet = 0;
  #silent = 0;
  /** The last chunk written: a ping waits for it to end an event. */
  #tail: Buffer | string | undefined;
  /** The head was sent by the ping machinery as `200 text/event-stream`, before any upstream answer. */
  #pinged = false;
  #closeAfter: boolean;
  /** HTTP/2: the gateway ended the stream (its last frame is queued). */
  #ended = false;
  /** Resolves once the response is finished or the client went away. */
  readonly done: Promise<void>;

  constructor(target: ServerResponse | ServerHttp2Stream, ctx: GatewayContext, options: { closeConnection: boolean }) {
    const h1 = ctx.httpVersion.charCodeAt(0) === 49; // '1'
    this.#res = h1 ? (target as ServerResponse) : undefined;
    this.#stream = h1 ? undefined : (target as ServerHttp2Stream);
    this.#ctx = ctx;
    this.#closeAfter = options.closeConnection;
    this.done = new Promise((resolve) => {
      target.once('close', () => {
        this.stopPings();
        // The client went away mid-response: abort upstream work. On HTTP/1.1 that is 'close'
        // before 'finish'. An HTTP/2 stream reset by the client first ends its writable side
        // (Node does it), so 'finish' says nothing there: the stream must close with NO_ERROR
        // after the gateway ended it.
        if (this.#stream === undefined ? !target.writableFinished : !this.#ended || this.#stream.rstCode !== h2.NGHTTP2_NO_ERROR) {
          ctx.abort(new Error('client closed the connection'));
        }
        resolve();
      });
    });
  }

  /** Ends the connection after this response (HTTP/1.1): used when the request body was left unread. */
  closeAfterResponse(): void {
    this.#closeAfter = true;
  }

  get headersSent(): boolean {
    return this.#stream === undefined ? this.#res!.headersSent : this.#stream.headersSent;
  }

  /** True when the head went out as a 200 event stream before the upstream answered (pings). */
  get pinged(): boolean {
    return this.#pinged;
  }

  /** False once the client is gone or the response ended. */
  get writable(): boolean {
    const target = this.#stream ?? this.#res!;
    return !target.destroyed && !target.writableEnded;
  }

  /** Writes the head with the gateway headers added. `proxied` adds the routing headers. */
  writeHead(status: number, headers: Headers, proxied: boolean): void {
    this.#head(status, headers, proxied, false);
  }

  #head(status: number, headers: Headers, proxied: boolean, endStream: boolean): void {
    const ctx = this.#ctx;
    ctx.status = status;
    headers['x-gateway-trace-id'] = ctx.traceId;
    headers['x-gateway-request-id'] = ctx.id;
    // Error answers carry the id where the SDKs look for one (`x-request-id`, the OpenAI SDK's
    // `err.requestID`); an upstream's own id, when it sent one, is kept.
    if (status >= 400 && headers['x-request-id'] === undefined) headers['x-request-id'] = ctx.id;
    for (const name in ctx.responseHeaders) headers[name] = ctx.responseHeaders[name]!;
    if (proxied) {
      if (ctx.provider !== undefined) headers['x-gateway-provider'] = ctx.provider;
      headers['x-gateway-last-used-option-index'] = ctx.optionPath;
      headers['x-gateway-retry-attempt-count'] = String(ctx.retryCount);
      headers['x-gateway-cache-status'] = ctx.cacheStatus;
    }
    headers['server-timing'] = this.serverTiming();
    const stream = this.#stream;
    if (stream === undefined) {
      if (this.#closeAfter) headers['connection'] = 'close';
      this.#res!.writeHead(status, headers as Record<string, string | string[]>);
      return;
    }
    // A stream the client already reset takes no head (the compatibility layer ignored it too).
    if (stream.destroyed || stream.closed) return;
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (CONNECTION_SPECIFIC.has(lower)) {
        delete headers[name];
        continue;
      }
      // The checks HTTP/1.1's writeHead makes: the stream API sends whatever it is given.
      validateHeaderName(lower);
      validateHeaderValue(lower, headers[name] as string); // numbers and arrays are checked as their text
    }
    headers[h2.HTTP2_HEADER_STATUS] = status;
    if (endStream) return stream.respond(headers, END_STREAM);
    // Before respond(): a HEAD or 204 answer ends with its head.
    stream.once('wantTrailers', sendNoTrailers);
    stream.respond(headers, WAIT_FOR_TRAILERS);
  }

  /** `Server-Timing`: the gateway's own share and the upstream wait, in ms. */
  serverTiming(): string {
    const t = this.#ctx.timings;
    const total = performance.now() - t.start;
    const upstream = t.upstreamMs + (t.upstreamStart > t.upstreamHeaders ? performance.now() - t.upstreamStart : 0);
    return `gateway;dur=${millis(total - upstream)}, upstream;dur=${millis(upstream)}`;
  }

  /** Writes a chunk; false means the client is slow: wait for {@link onDrain} before writing more. */
  write(chunk: Buffer | string): boolean {
    if (this.#ctx.timings.firstByte === 0) this.#ctx.timings.firstByte = performance.now();
    this.#wrote = true;
    this.#tail = chunk;
    const stream = this.#stream;
    if (stream === undefined) return this.#res!.write(chunk);
    // A reset stream, or a HEAD/204/304 answer (ended by its head), takes no body.
    if (stream.destroyed || stream.writableEnded) return true;
    return stream.write(chunk);
  }

  onDrain(callback: () => void): void {
    (this.#stream ?? this.#res!).once('drain', callback);
  }

  end(chunk?: Buffer | string): void {
    this.stopPings();
    const stream = this.#stream;
    if (stream === undefined) {
      if (chunk !== undefined) this.#res!.end(chunk);
      else this.#res!.end();
      return;
    }
    this.#ended = true;
    if (this.#closeAfter) this.resetUnreadStream(stream);
    if (stream.destroyed || stream.writableEnded) return;
    if (chunk !== undefined) stream.end(chunk);
    else stream.end();
  }

  /**
   * The HTTP/2 form of `connection: close` for a request whose body was left unread (too large,
   * too slow, broken): once the answer is out, reset the stream with NO_ERROR so the client stops
   * sending (RFC 9113 §8.1). Without it the stream stays half-open while the client keeps
   * sending. A stream whose request is complete is left alone.
   */
  private resetUnreadStream(stream: ServerHttp2Stream): void {
    stream.once('finish', () => {
      if (!stream.closed && !stream.destroyed && stream.state.remoteClose !== 1) stream.close(h2.NGHTTP2_NO_ERROR);
    });
  }

  /** Sends a whole body with a head (replies, errors, buffered upstream answers). */
  send(status: number, headers: Headers, body: Buffer | string | undefined, proxied: boolean): void {
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    if (this.#stream === undefined || (body !== undefined && body.length > 0)) {
      this.#head(status, headers, proxied, false);
      this.end(body);
      return;
    }
    // HTTP/2 without a body: the head ends the stream (one HEADERS frame with END_STREAM).
    this.stopPings();
    this.#ended = true;
    if (this.#closeAfter) this.resetUnreadStream(this.#stream);
    this.#head(status, headers, proxied, true);
  }

  /**
   * A failure after the head was sent. Event streams get a final `event: error` carrying the error
   * object and are then ended; any other body is cut off (the connection is destroyed, or the
   * HTTP/2 stream reset with INTERNAL_ERROR: a reset with NO_ERROR would end the body normally for
   * the client), so no client mistakes a truncated answer for a complete one.
   */
  failStream(err: GatewayError | Record<string, unknown>, sse: boolean): void {
    this.stopPings();
    if (!this.writable) return;
    if (sse) {
      const body = 'toJSON' in err && typeof err.toJSON === 'function' ? err.toJSON() : err;
      this.end(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    } else if (this.#stream !== undefined) {
      this.#stream.close(h2.NGHTTP2_INTERNAL_ERROR);
    } else {
      this.#res!.destroy();
    }
  }

  /**
   * Starts `: ping` comments every `interval` ms of silence. A ping before the head sends the head
   * (200, text/event-stream): idle-timeout proxies (load balancers, nginx) then keep a
   * slow-to-start stream open.
   */
  startPings(interval: number): void {
    if (interval <= 0 || this.#pingTimer) return;
    this.#arm(interval, 1, 0);
  }

  /**
   * A stream under way (its event-stream head is out): pings go on during silences of `pingEvery`
   * ms, and an upstream silent for `idleAfter` ms calls `onIdle` (0 turns either off). The same
   * timer as the pings before the head, re-armed once if its period changes.
   */
  watchStream(pingEvery: number, idleAfter: number, onIdle: () => boolean): void {
    const ping = pingEvery > 0 ? pingEvery : 0;
    const idle = idleAfter > 0 ? idleAfter : 0;
    if (ping === 0 && idle === 0) return this.stopPings();
    // Fine enough that an idle upstream is noticed within a quarter of the timeout.
    const period = ping === 0 ? idle / 4 : idle === 0 ? ping : Math.min(ping, idle / 4);
    this.#onIdle = onIdle;
    this.#arm(period, ping === 0 ? 0 : Math.max(1, Math.round(ping / period)), idle === 0 ? 0 : Math.max(1, Math.ceil(idle / period)));
  }

  /** The upstream sent something (the idle watch starts over). */
  heard(): void {
    this.#heard = true;
  }

  #arm(period: number, pingTicks: number, idleTicks: number): void {
    this.#pingTicks = pingTicks;
    this.#idleTicks = idleTicks;
    this.#quiet = 0;
    this.#silent = 0;
    this.#wrote = false;
    this.#heard = false;
    if (this.#pingTimer !== undefined && period === this.#period) return;
    if (this.#pingTimer !== undefined) clearInterval(this.#pingTimer);
    this.#period = period;
    // The closure exists only for streams that ping or are watched, not for every response.
    this.#pingTimer = setInterval(() => this.#tick(), period);
    this.#pingTimer.unref();
  }

  #tick(): void {
    if (!this.writable) return this.stopPings();
    if (this.#wrote) {
      this.#wrote = false;
      this.#quiet = 0;
    } else this.#quiet++;
    if (this.#heard) {
      this.#heard = false;
      this.#silent = 0;
    } else this.#silent++;
    if (this.#idleTicks > 0 && this.#silent >= this.#idleTicks) {
      this.#silent = 0;
      if (this.#onIdle?.() === true) return this.stopPings();
    }
    if (this.#pingTicks > 0 && this.#quiet >= this.#pingTicks && endsEvent(this.#tail)) {
      this.#quiet = 0;
      if (!this.headersSent) {
        this.#pinged = true;
        this.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, true);
      }
      if (this.#stream === undefined) this.#res!.write(PING);
      else this.#stream.write(PING);
    }
  }

  stopPings(): void {
    if (this.#pingTimer) {
      clearInterval(this.#pingTimer);
      this.#pingTimer = undefined;
      this.#onIdle = undefined;
    }
  }
}
