/**
 * Opens the upstream WebSocket of a session, before the client's handshake is answered, so that a
 * refusal can still be an HTTP answer:
 *
 *   open                     ─▶ the session starts (the client gets its 101)
 *   refused (a non-101 answer) ─▶ its status and body go to the client as they came
 *                                 (`x-gateway-error-source: upstream`), as for any upstream error
 *   failed (connect, timeout, guard) ─▶ 502 upstream_unreachable / 504 upstream_timeout
 */
import type { ClientRequestArgs, IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import WebSocket from 'ws';
import { Errors, type GatewayError } from '../../core/index.js';
import type { UpstreamCall } from './target.js';

/** A message the upstream sent before the session took over (its first event arrives with the 101). */
export interface EarlyMessage {
  data: Buffer;
  isBinary: boolean;
}

export type Connected =
  | { kind: 'open'; ws: WebSocket; early: EarlyMessage[]; stopHolding(): void }
  | { kind: 'refused'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { kind: 'failed'; error: GatewayError };

export interface ConnectOptions {
  protocols: string[];
  timeout: number;
  maxPayload: number;
  lookup: LookupFunction;
  /** Subscribes to the client going away while the handshake runs; returns an unsubscribe. */
  onAbort(listener: () => void): () => void;
}

function noop(): void {}

/** An upstream's refusal body is kept up to this size (an error object, not a payload). */
const MAX_REFUSAL_BODY = 64 * 1024;

export function connectUpstream(call: UpstreamCall, options: ConnectOptions): Promise<Connected> {
  return new Promise((resolve) => {
    const settings: WebSocket.ClientOptions & ClientRequestArgs = {
      headers: call.headers,
      handshakeTimeout: options.timeout,
      maxPayload: options.maxPayload,
      perMessageDeflate: false,
      followRedirects: false,
      autoPong: true,
      lookup: options.lookup,
    };
    const ws = new WebSocket(call.url, options.protocols, settings);
    let settled = false;
    const finish = (result: Connected): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      resolve(result);
    };
    const unsubscribe = options.onAbort(() => {
      ws.terminate();
      finish({ kind: 'failed', error: Errors.upstreamUnreachable('The client left before the upstream answered.') });
    });
    ws.once('open', () => {
      ws.off('error', onError);
      // Until the client's handshake is done, the upstream is paused and what it already sent
      // (OpenAI sends session.created at once) is kept, in order, for the session to pass on.
      ws.pause();
      const early: EarlyMessage[] = [];
      const hold = (data: Buffer, isBinary: boolean): void => void early.push({ data, isBinary });
      ws.on('message', hold);
      ws.on('error', noop); // the session listens from its start; until then an error ends in 'close'
      finish({ kind: 'open', ws, early, stopHolding: () => ws.off('message', hold) });
    });
    const onError = (err: Error): void => {
      const timedOut = /handshake has timed out/i.test(err.message);
      finish({
        kind: 'failed',
        error: timedOut ? Errors.upstreamTimeout('The upstream did not accept the WebSocket in time.', { cause: err }) : Errors.upstreamUnreachable(undefined, { cause: err }),
      });
    };
    ws.on('error', onError);
    ws.once('unexpected-response', (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_REFUSAL_BODY) chunks.push(chunk.subarray(0, MAX_REFUSAL_BODY - size));
        size += chunk.length;
      });
      const done = (): void => {
        finish({ kind: 'refused', status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) });
        req.destroy();
      };
      res.once('end', done);
      res.once('error', done);
      res.once('aborted', done);
    });
  });
}
