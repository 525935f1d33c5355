/**
 * The listener: one port for HTTP/1.1 and cleartext HTTP/2 (prior knowledge), or TLS with ALPN
 * (h2 and http/1.1) when `server.tls` is set.
 *
 *   cleartext:  net.Server ──sniff first bytes──▶ "PRI * HTTP/2.0…" ? http2.Server : http.Server
 *   TLS:        http2.SecureServer (allowHTTP1) ── ALPN picks h2 or http/1.1
 *
 * The sniffed sockets are handed over with `emit('connection')`. Such an http.Server never called
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
 * Draining (SIGTERM): stop accepting, answer with `connection: close`, close idle keep-alive
 * connections, send HTTP/2 GOAWAY, wait for requests in flight up to the grace period, then cut
 * what is left.
 */
import net from 'node:net';
import http, { STATUS_CODES } from 'node:http';
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { ServerConfig } from './config/types.js';
import type { Logger } from './logger.js';
import { Errors, type GatewayError } from './errors.js';
import type { ClientRequest } from './body-reader.js';
import type { ClientResponse } from './response-writer.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface Listener {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
  /** Stops accepting and waits for in-flight work (bounded by `graceMs`), then closes everything. */
  close(graceMs: number, inflight: () => number): Promise<void>;
}

type Handler = (req: ClientRequest, res: ClientResponse) => void;

export async function listen(config: ServerConfig, handler: Handler, log: Logger, baseDir: string): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  const h2Settings: http2.Settings = { maxHeaderListSize: config.max_header_size };

  const onSession = (session: http2.Http2Session): void => {
    sessions.add(session);
    // The HTTP/2 form of the headers timeout: a session that has not completed the headers of a
    // first stream in time (a client dribbling a HEADERS frame byte by byte keeps the idle timer
    // below alive) is cut.
    const firstStream = setTimeout(() => session.destroy(), config.headers_timeout);
    session.once('stream', () => clearTimeout(firstStream));
    session.once('close', () => {
      clearTimeout(firstStream);
      sessions.delete(session);
    });
    // An idle session is closed gracefully (GOAWAY): open streams finish first.
    session.setTimeout(config.keep_alive_timeout, () => session.close());
  };
  const onStream = (stream: http2.ServerHttp2Stream): void => guardStream(stream, config.request_timeout + STREAM_BACKSTOP_MARGIN_MS);

  let front: net.Server;
  let h1: http.Server | undefined;
  if (config.tls) {
    const secure = http2.createSecureServer(
      {
        key: readFileSync(resolvePath(baseDir, config.tls.key)),
        cert: readFileSync(resolvePath(baseDir, config.tls.cert)),
        allowHTTP1: true,
        settings: h2Settings,
      },
      handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
    );
    secure.on('session', onSession);
    secure.on('stream', onStream);
    secure.on('secureConnection', (socket: net.Socket) => track(sockets, socket));
    // HTTP/1.1 over TLS shares this server; bound its idle connections the same way.
    secure.setTimeout(config.keep_alive_timeout);
    front = secure;
  } else {
    h1 = http.createServer(
      {
        keepAliveTimeout: config.keep_alive_timeout,
        headersTimeout: Math.min(config.headers_timeout, config.request_timeout),
        requestTimeout: config.request_timeout,
        maxHeaderSize: config.max_header_size,
        noDelay: true,
        // Node checks the two timeouts above on this interval (default 30 s): keep it tight.
        connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(config.headers_timeout / 4))),
      },
      handler as (req: http.IncomingMessage, res: http.ServerResponse) => void,
    );
    h1.on('clientError', answerClientError);
    const h2 = http2.createServer({ settings: h2Settings }, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
    h2.on('session', onSession);
    h2.on('stream', onStream);
    const h1Server = h1;
    front = net.createServer({ noDelay: true }, (socket) => {
      track(sockets, socket);
      sniff(socket, config.headers_timeout, (isH2) => (isH2 ? h2 : h1Server).emit('connection', socket));
    });
    h1.emit('listening');
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
      for (const session of sessions) session.close();
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline) {
        h1?.closeIdleConnections();
        if (inflight() === 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (inflight() > 0) log.warn('grace period over: closing connections with requests in flight', { inflight: inflight() });
      h1?.closeIdleConnections();
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
