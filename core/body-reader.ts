/**
 * Reads request bodies with a hard limit, and parses JSON bodies strictly.
 *
 * The limit is checked twice: against a declared `content-length` before reading a byte (413 at
 * once), and against the running total while reading (chunked uploads, lying clients). Bodies are
 * kept as the bytes received so the router can forward them untouched.
 *
 * A deadline bounds how long the client may take to send the body: Node enforces
 * `server.request_timeout` itself only on HTTP/1.1 connections, so for HTTP/2 streams this is what
 * turns a slow-body client into a 408.
 *
 * The source is what carries the body: Node's HTTP/1.1 request, or the HTTP/2 stream itself (the
 * gateway serves HTTP/2 on the core stream API, see core/server.ts). Both emit `data`, `end` and
 * `aborted` (the HTTP/2 stream emits `aborted` whenever it closes before the answer ended).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import { Errors } from './errors.js';

export type BodySource = IncomingMessage | ServerHttp2Stream;

const EMPTY = Buffer.alloc(0);

/**
 * Reads the whole body (`headers` are the request's), refusing more than `limit` bytes (413) and, when `timeoutMs` is given, a
 * body still incomplete after that many ms (408 `request_timeout`).
 */
export function readBody(req: BodySource, headers: IncomingHttpHeaders, limit: number, timeoutMs?: number): Promise<Buffer> {
  const declared = headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(limit));
  }
  // An HTTP/2 stream whose HEADERS frame ended it carries no body: no need to wait for its 'end'.
  if (req.readableEnded || (req as ServerHttp2Stream).endAfterHeaders === true) return Promise.resolve(EMPTY);
  const complete = (req as IncomingMessage).complete;
  if (complete === true) return takeBuffered(req as IncomingMessage, limit);
  if (complete === false) {
    // Node's HTTP/1.1 parser calls the request handler as soon as the head is parsed, and the
    // gateway gets here before the parser goes on to the body that came in the same read. Look
    // again once this read is handled (the check phase of the same loop turn): a small body is
    // then in the stream's buffer, whole, and costs no listeners and no deadline timer.
    const message = req as IncomingMessage;
    return new Promise<Buffer>((resolve) => setImmediate(() => resolve(message.complete ? takeBuffered(message, limit) : readStreamed(message, limit, timeoutMs))));
  }
  return readStreamed(req, limit, timeoutMs);
}

/** The body as it arrives, with a deadline when `timeoutMs` is given. */
function readStreamed(req: BodySource, limit: number, timeoutMs: number | undefined): Promise<Buffer> {
  // A client gone before the listeners below (HTTP/1.1 looks a loop turn later): its 'aborted' has been emitted.
  if (req.destroyed) return Promise.reject(Errors.badRequest('The client closed the connection while sending the body.'));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            cleanup();
            req.pause();
            reject(Errors.requestTimeout());
          }, Math.max(0, timeoutMs));
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(joined(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(Errors.badRequest('The request body could not be read.', { cause: err }));
    };
    const onAborted = (): void => {
      cleanup();
      reject(Errors.badRequest('The client closed the connection while sending the body.'));
    };
    function cleanup(): void {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/**
 * An HTTP/1.1 body Node's parser has already read whole: a small request comes in one packet with
 * its head, and the parser pushes its body into the stream before the gateway asks for it. It is
 * taken from the stream's buffer at once: no deadline to arm (the body cannot be late) and no
 * listeners to add and remove. In the gateway under load, the timer alone (Node's timer list made
 * and dropped per request) took about 4 µs of CPU a request.
 */
function takeBuffered(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Paused, `read()` returns everything buffered as one Buffer, then null.
  for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
    size += chunk.length;
    if (size > limit) return Promise.reject(tooLarge(limit));
    chunks.push(chunk);
  }
  return Promise.resolve(joined(chunks, size));
}

const tooLarge = (limit: number): Error => Errors.bodyTooLarge(`The request body exceeds the limit of ${limit} bytes.`);

/** The body read, as one Buffer (the chunk itself when there is one). */
function joined(chunks: Buffer[], size: number): Buffer {
  return chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json(?:\s*;|\s*$)/i;

/** True for `application/json` and `application/*+json`, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && JSON_TYPE.test(value);
}

/** Parses a JSON object body; the error says which rule broke (encoding, syntax, shape). */
export function parseJsonObject(body: Buffer): Record<string, unknown> {
  if (body.length === 0) throw Errors.invalidJson('The request body is empty; a JSON object is required.');
  if (!isUtf8(body)) throw Errors.invalidEncoding();
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    // V8's message quotes a slice of the input, which may hold a secret: report the position only.
    const at = /position (\d+)/.exec((err as Error).message);
    throw Errors.invalidJson(`The request body is not valid JSON${at ? ` (at byte ${at[1]})` : ''}.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw Errors.invalidBody();
  return value as Record<string, unknown>;
}
