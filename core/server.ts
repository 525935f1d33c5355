/**
 * The listener: one port for HTTP/1.1 and cleartext HTTP/2 (prior knowledge), or TLS with ALPN
 * (h2 and http/1.1) when `server.tls` is set. Both shapes hand each connection to the same two
 * servers:
 *
 *   cleartext:  net.Server ──sniff first bytes──▶ "PRI * HTTP/2.0…" ? http2.Server : http.Server
 *   TLS:        tls.Server ──ALPN (h2, http/1.1)──▶ http2.Server | http.Server
 *
 * HTTP/2 is served on the core stream API (`'stream'` with the stream and its headers), not on
 * Node's compatibility layer (Http2ServerRequest/Http2ServerResponse): that layer builds two
 * objects and about a dozen listeners per stream and re-validates every header, which made h2
 * several times slower than HTTP/1.1 per request. An http2 server only builds it once someone
 * listens for `'request'`, so nobody here does; with TLS, HTTP/1.1 is not served through the h2
 * server's `allowHTTP1` fallback (which is such a listener) but through the plain http.Server,
 * which also gives HTTP/1.1 over TLS the same header and request timeouts as cleartext.
 *
 * The handed-over sockets arrive with `emit('connection')`. Such an http.Server never called
 * `listen()`, so it must be told `emit('listening')`, or Node never starts the connection checks
 * behind `headersTimeout`/`requestTimeout` and a slow client is never answered 408.
 *
 * Slow clients: on HTTP/1.1, Node answers 408 after `headers_timeout`/`request_timeout`. HTTP/2
 * streams get the same bounds here: a session must open its first stream within
 * `headers_timeout`, and every stream must have sent its whole request within `request_timeout`
 * of its start. The body reader answers 408 through the normal path (logged, with the gateway's
 * headers); {@link guardStream} is the backstop for a stream nobody is reading: 408 when nothing
 * was answered yet, else a reset (NGHTTP2_CANCEL). A stream whose request is complete is never
 * touched, so long streamed responses run as long as they need.
 *
 * Upgrades (HTTP/1.1 `Upgrade:`): Node hands every request with an Upgrade header to the
 * `'upgrade'` listener once one exists, `Upgrade: h2c` from `curl --http2` included. The handler
 * takes the WebSocket upgrades a plugin serves (core/upgrade.ts); any other is given back to the
 * parser as the plain request it also is (its head rebuilt without the upgrade headers, the bytes
 * already read put back), so adding the listener changes nothing for them.
 *
 * Draining (SIGTERM): stop accepting, answer with `connection: close`, close idle keep-alive
 * connections, send HTTP/2 GOAWAY, wait for requests in flight up to the grace period, then cut
 * what is left.
 */
import net from 'node:net';
import tls from 'node:tls';
import http, { STATUS_CODES } from 'node:http';
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { ServerConfig } from './config/types.js';
import type { Logger } from './logger.js';
import { Errors, type GatewayError } from './errors.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface Listener {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
  /** Stops accepting and waits for in-flight work (bounded by `graceMs`), then closes everything. */
  close(graceMs: number, inflight: () => number): Promise<void>;
}

/** What the listener calls: one entry point per protocol, each with Node's own objects. */
export interface ConnectionHandlers {
  http1(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** One HTTP/2 request: its stream, its headers (pseudo-headers included) and the peer address. */
  http2(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, remoteAddress: string | undefined): void;
  /**
   * An HTTP/1.1 request with an `Upgrade` header. True: the handler took the socket (it answers
   * and owns it from now on); false: the listener serves it as a plain request.
   */
  upgrade?(req: http.IncomingMessage, socket: net.Socket, head: Buffer): boolean;
  /** Draining began: long-lived connections the handler took (WebSocket sessions) are asked to end. */
  drain?(): void;
}

export async function listen(config: ServerConfig, handlers: ConnectionHandlers, log: Logger, baseDir: string): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  const backstopMs = config.request_timeout + STREAM_BACKSTOP_MARGIN_MS;

  const h1 = http.createServer(
    {
      keepAliveTimeout: config.keep_alive_timeout,
      headersTimeout: Math.min(config.headers_timeout, config.request_timeout),
      requestTimeout: config.request_timeout,
      maxHeaderSize: config.max_header_size,
      noDelay: true,
      // Node checks the two timeouts above on this interval (default 30 s): keep it tight.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(config.headers_timeout / 4))),
    },
    handlers.http1,
  );
  h1.on('clientError', answerClientError);
  h1.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    if (handlers.upgrade?.(req, socket, head) === true) return;
    serveAsPlainRequest(h1, req, socket, head);
  });
  h1.emit('listening');

  // No request listener: see the file comment (the compatibility layer stays off).
  const h2 = http2.createServer({ settings: { maxHeaderListSize: config.max_header_size } });
  h2.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    // The HTTP/2 form of the headers timeout: a session that has not completed the headers of a
    // first stream in time (a client dribbling a HEADERS frame byte by byte keeps the idle timer
    // below alive) is cut.
    const firstStream = setTimeout(() => session.destroy(), config.headers_timeout);
    session.once('close', () => {
      clearTimeout(firstStream);
      sessions.delete(session);
    });
    // An idle session is closed gracefully (GOAWAY): open streams finish first.
    session.setTimeout(config.keep_alive_timeout, () => session.close());
    // Read once per session: the session's socket is a proxy object, costly to ask per stream.
    const remoteAddress = session.socket.remoteAddress;
    session.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      clearTimeout(firstStream);
      // Without a listener a stream error (a client's RST_STREAM with an error code) would be
      // thrown; the response writer sees the stream close and aborts the request instead.
      stream.on('error', ignoreStreamError);
      guardStream(stream, backstopMs);
      handlers.http2(stream, headers, remoteAddress);
    });
  });

  let front: net.Server;
  if (config.tls) {
    front = tls.createServer(
      {
        key: readFileSync(resolvePath(baseDir, config.tls.key)),
        cert: readFileSync(resolvePath(baseDir, config.tls.cert)),
        ALPNProtocols: ['h2', 'http/1.1'],
        // RFC 9113 §9.2: HTTP/2 over TLS needs TLS 1.2 or later (what http2.createSecureServer sets).
        minVersion: 'TLSv1.2',
        noDelay: true,
      },
      (socket) => {
        track(sockets, socket);
        // A client that offered no ALPN (alpnProtocol false) speaks HTTP/1.1.
        (socket.alpnProtocol === 'h2' ? h2 : h1).emit('connection', socket);
      },
    );
  } else {
    front = net.createServer({ noDelay: true }, (socket) => {
      track(sockets, socket);
      sniff(socket, config.headers_timeout, (isH2) => (isH2 ? h2 : h1).emit('connection', socket));
    });
  }

  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(config.port, config.host, () => {
      front.off('error', reject);
      resolve();
    });
  });
  front.on('error', (err) => log.error('listener error', { err }));
  const address = front.address() as net.AddressInfo;

  return {
    host: address.address,
    port: address.port,
    secure: config.tls !== undefined,
    async close(graceMs, inflight) {
      front.close();
      handlers.drain?.();
      for (const session of sessions) session.close();
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline) {
        h1.closeIdleConnections();
        if (inflight() === 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (inflight() > 0) log.warn('grace period over: closing connections with requests in flight', { inflight: inflight() });
      h1.closeIdleConnections();
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * How much later than `request_timeout` the per-stream backstop fires: the body reader's own 408,
 * which goes through the pipeline and the logs, must win whenever the body is being read.
 */
const STREAM_BACKSTOP_MARGIN_MS = 1000;

/**
 * Bounds the time an HTTP/2 stream may take to send its whole request. The timer runs from the
 * stream's start until its request is complete (END_STREAM received, `state.remoteClose`) or the
 * stream closes; the response side is never bounded here.
 */
function guardStream(stream: http2.ServerHttp2Stream, timeoutMs: number): void {
  if (stream.endAfterHeaders) return; // no body: the request was complete with its headers
  const timer = setTimeout(() => {
    if (stream.closed || stream.destroyed || stream.state.remoteClose === 1) return;
    if (stream.headersSent) {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      return;
    }
    const error = Errors.requestTimeout();
    const body = JSON.stringify(error.toJSON());
    stream.respond({
      ':status': error.status,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-gateway-error-source': 'gateway',
    });
    // Then reset with NO_ERROR once the answer is out: the client stops sending the rest
    // (RFC 9113 §8.1, a response before the request is complete).
    stream.end(body, () => stream.close(http2.constants.NGHTTP2_NO_ERROR));
  }, timeoutMs);
  stream.once('close', () => clearTimeout(timer));
}

function ignoreStreamError(): void {}

/** Header fields that ask for an upgrade (dropped, so the parser reads the request as a plain one). */
const UPGRADE_FIELDS = new Set(['upgrade', 'http2-settings']);

/**
 * Gives an upgrade request nobody takes back to the HTTP parser as a plain request: its head is
 * rebuilt from the raw headers without `Upgrade`, `HTTP2-Settings` and their `Connection` tokens,
 * put back in front of the body bytes already read, and the socket goes through `'connection'`
 * again (a new parser; keep-alive carries on from there). A client asking `Upgrade: h2c` gets an
 * HTTP/1.1 answer, as RFC 9110 §7.8 allows.
 */
function serveAsPlainRequest(h1: http.Server, req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (UPGRADE_FIELDS.has(name)) continue;
    let value = raw[i + 1]!;
    if (name === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token.length > 0 && !UPGRADE_FIELDS.has(token.toLowerCase()))
        .join(', ');
      if (value.length === 0) continue;
    }
    lines.push(`${raw[i]}: ${value}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  h1.emit('connection', socket);
}

function track(sockets: Set<net.Socket>, socket: net.Socket): void {
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
}

/**
 * Reads just enough of a new connection to tell the HTTP/2 preface from an HTTP/1 request line,
 * then gives the bytes back (`unshift`) and hands the socket over. A client that connects and
 * sends nothing is dropped after the headers timeout.
 */
function sniff(socket: net.Socket, timeoutMs: number, handOver: (isH2: boolean) => void): void {
  let buf: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const onReadable = (): void => {
    let chunk: Buffer | null;
    while ((chunk = socket.read() as Buffer | null) !== null) buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    if (buf.length === 0) return;
    const n = Math.min(buf.length, PREFACE.length);
    const isH2 = buf.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (isH2 && buf.length < PREFACE.length) return; // a split preface: wait for the rest
    clearTimeout(timer);
    socket.off('readable', onReadable);
    socket.off('close', onClose);
    socket.unshift(buf);
    handOver(isH2);
  };
  const onClose = (): void => clearTimeout(timer);
  socket.on('readable', onReadable);
  socket.once('close', onClose);
  socket.on('error', () => socket.destroy());
}

/**
 * Errors Node's HTTP/1 parser raises before a request object exists (malformed request, headers
 * too large, request timeout). They get the gateway's error shape, written straight to the socket.
 */
function answerClientError(err: Error & { code?: string }, socket: net.Socket): void {
  const started = (socket as net.Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === 'ECONNRESET' || !socket.writable || started) {
    socket.destroy();
    return;
  }
  let error: GatewayError;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') error = Errors.requestTimeout();
  else if (err.code === 'HPE_HEADER_OVERFLOW') error = Errors.headersTooLarge();
  else error = Errors.badRequest('The request is not valid HTTP.');
  const body = JSON.stringify(error.toJSON());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'content-type: application/json\r\n' +
      'x-gateway-error-source: gateway\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}
