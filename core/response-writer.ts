/**
 * The one owner of the client response (HTTP/1.1 `ServerResponse` or HTTP/2 compat response).
 *
 * It adds the gateway's headers to every head, honours backpressure (`write()` → false means wait
 * for `drain`), sends SSE `: ping` comments while a stream waits for its first upstream byte, and
 * makes failures visible: before the head, an error reply; after it, an SSE `event: error` (for
 * event streams) or a destroyed connection, never a normal-looking end.
 */
import type { ServerResponse } from 'node:http';
import { constants as h2, type Http2ServerResponse } from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { GatewayContext } from './context.js';
import type { GatewayError } from './errors.js';

export type ClientResponse = ServerResponse | Http2ServerResponse;
type Headers = Record<string, string | string[] | number>;

const PING = Buffer.from(': ping\n\n');

export class ResponseWriter {
  readonly #res: ClientResponse;
  readonly #ctx: GatewayContext;
  readonly #h1: boolean;
  #pingTimer: NodeJS.Timeout | undefined;
  /** The head was sent by the ping machinery as `200 text/event-stream`, before any upstream answer. */
  #pinged = false;
  #closeAfter: boolean;
  /** Resolves once the response is finished or the client went away. */
  readonly done: Promise<void>;

  constructor(res: ClientResponse, ctx: GatewayContext, options: { closeConnection: boolean }) {
    this.#res = res;
    this.#ctx = ctx;
    this.#h1 = ctx.httpVersion.charCodeAt(0) === 49; // '1'
    this.#closeAfter = options.closeConnection;
    this.done = new Promise((resolve) => {
      res.once('close', () => {
        this.stopPings();
        // 'close' before 'finish' means the client went away mid-response: abort upstream work.
        if (!res.writableFinished) ctx.abort(new Error('client closed the connection'));
        resolve();
      });
    });
  }

  /** Ends the connection after this response (HTTP/1.1): used when the request body was left unread. */
  closeAfterResponse(): void {
    this.#closeAfter = true;
  }

  get headersSent(): boolean {
    return this.#res.headersSent;
  }

  /** True when the head went out as a 200 event stream before the upstream answered (pings). */
  get pinged(): boolean {
    return this.#pinged;
  }

  /** False once the client is gone or the response ended. */
  get writable(): boolean {
    return !this.#res.destroyed && !this.#res.writableEnded;
  }

  /** Writes the head with the gateway headers added. `proxied` adds the routing headers. */
  writeHead(status: number, headers: Headers, proxied: boolean): void {
    const ctx = this.#ctx;
    ctx.status = status;
    headers['x-gateway-trace-id'] = ctx.traceId;
    headers['x-gateway-request-id'] = ctx.id;
    for (const name in ctx.responseHeaders) headers[name] = ctx.responseHeaders[name]!;
    if (proxied) {
      if (ctx.provider !== undefined) headers['x-gateway-provider'] = ctx.provider;
      headers['x-gateway-last-used-option-index'] = ctx.optionPath;
      headers['x-gateway-retry-attempt-count'] = String(ctx.retryCount);
      headers['x-gateway-cache-status'] = ctx.cacheStatus;
    }
    headers['server-timing'] = this.serverTiming();
    if (this.#closeAfter && this.#h1) headers['connection'] = 'close';
    this.#res.writeHead(status, headers as Record<string, string | string[]>);
  }

  /** `Server-Timing`: the gateway's own share and the upstream wait, in ms. */
  serverTiming(): string {
    const t = this.#ctx.timings;
    const total = performance.now() - t.start;
    const upstream = t.upstreamMs + (t.upstreamStart > t.upstreamHeaders ? performance.now() - t.upstreamStart : 0);
    return `gateway;dur=${Math.max(0, total - upstream).toFixed(3)}, upstream;dur=${upstream.toFixed(3)}`;
  }

  /** Writes a chunk; false means the client is slow: wait for {@link onDrain} before writing more. */
  write(chunk: Buffer | string): boolean {
    if (this.#ctx.timings.firstByte === 0) this.#ctx.timings.firstByte = performance.now();
    return (this.#res as ServerResponse).write(chunk);
  }

  onDrain(callback: () => void): void {
    this.#res.once('drain', callback);
  }

  end(chunk?: Buffer | string): void {
    this.stopPings();
    if (this.#closeAfter && !this.#h1) this.resetUnreadStream();
    if (chunk !== undefined) (this.#res as ServerResponse).end(chunk);
    else this.#res.end();
  }

  /**
   * The HTTP/2 form of `connection: close` for a request whose body was left unread (too large,
   * too slow, broken): once the answer is out, reset the stream with NO_ERROR so the client stops
   * sending (RFC 9113 §8.1). Without it the stream stays half-open while the client keeps
   * sending. A stream whose request is complete is left alone.
   */
  private resetUnreadStream(): void {
    const stream = (this.#res as Http2ServerResponse).stream;
    stream.once('finish', () => {
      if (!stream.closed && !stream.destroyed && stream.state.remoteClose !== 1) stream.close(h2.NGHTTP2_NO_ERROR);
    });
  }

  /** Sends a whole body with a head (replies, errors, buffered upstream answers). */
  send(status: number, headers: Headers, body: Buffer | string | undefined, proxied: boolean): void {
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    this.writeHead(status, headers, proxied);
    this.end(body);
  }

  /** The error reply before any head was sent, in the one error shape. */
  sendError(err: GatewayError): void {
    const headers: Headers = { 'content-type': 'application/json', 'x-gateway-error-source': 'gateway' };
    if (err.headers) Object.assign(headers, err.headers);
    this.send(err.status, headers, JSON.stringify(err.toJSON()), false);
  }

  /**
   * A failure after the head was sent. Event streams get a final `event: error` carrying the error
   * object and are then ended; any other body is cut off (the connection or HTTP/2 stream is reset),
   * so no client mistakes a truncated answer for a complete one.
   */
  failStream(err: GatewayError | Record<string, unknown>, sse: boolean): void {
    this.stopPings();
    if (!this.writable) return;
    if (sse) {
      const body = 'toJSON' in err && typeof err.toJSON === 'function' ? err.toJSON() : err;
      (this.#res as ServerResponse).end(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    } else {
      this.#res.destroy();
    }
  }

  /**
   * Starts `: ping` comments every `interval` ms while nothing else was written. The first ping
   * sends the head (200, text/event-stream): idle-timeout proxies (load balancers, nginx) then
   * keep a slow-to-start stream open.
   */
  startPings(interval: number): void {
    if (interval <= 0 || this.#pingTimer) return;
    const tick = (): void => {
      if (!this.writable) return this.stopPings();
      if (!this.#res.headersSent) {
        this.#pinged = true;
        this.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, true);
      }
      (this.#res as ServerResponse).write(PING);
    };
    this.#pingTimer = setInterval(tick, interval);
    this.#pingTimer.unref();
  }

  stopPings(): void {
    if (this.#pingTimer) {
      clearInterval(this.#pingTimer);
      this.#pingTimer = undefined;
    }
  }

  /** Tears the response down (client gone, or the gateway must stop writing). */
  destroy(): void {
    this.stopPings();
    this.#res.destroy();
  }
}
