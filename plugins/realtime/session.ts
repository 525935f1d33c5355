/**
 * One Realtime session: two open WebSockets, the client's and the upstream's, relayed message by
 * message in both directions.
 *
 *   client ──text/binary──▶ upstream          upstream ──text/binary──▶ client
 *                                                 └─ response.done ─▶ usage (UsageMeter)
 *
 * - Nothing is buffered beyond the message in hand: each message is sent on as it arrives, with
 *   its type (text or binary). A side that has more than `highWaterMark` bytes queued towards it
 *   pauses the other side's socket (TCP backpressure to the sender) until its queue is below half.
 * - Pings are answered by each socket itself (they belong to one connection, not to the session).
 * - Closing: a close from either side is passed to the other with its code and reason (1005, no
 *   code, stays without one; an upstream that vanished without a close, 1006, becomes 1014 "bad
 *   gateway" towards the client, and the session's outcome `upstream_stream_error`, as for an
 *   upstream close with 1011…1014; a client that
 *   vanished becomes 1001 "going away" towards the upstream). A side that
 *   does not finish its closing handshake within CLOSE_GRACE_MS is cut.
 * - The session is over once both sockets are closed.
 */
import WebSocket from 'ws';
import { Errors, type GatewayError } from '../../core/index.js';
import { UsageMeter } from './usage.js';
import type { Connected } from './upstream.js';

/** How long a side gets to complete the close the other side started. */
const CLOSE_GRACE_MS = 5_000;

export interface SessionResult {
  /** Who closed first. */
  closedBy: 'client' | 'upstream';
  code: number;
  /** Set when the session ended abnormally on the upstream's side. */
  error: GatewayError | undefined;
  meter: UsageMeter;
}

/** A close code as it may be sent on: undefined for "no code", a stand-in for the reserved ones. */
function sendable(code: number, lost: number): number | undefined {
  if (code === 1005) return undefined;
  if (code === 1006 || code === 1015) return lost;
  if ((code >= 1000 && code <= 1014 && code !== 1004) || (code >= 3000 && code <= 4999)) return code;
  return 1011;
}

/** Relays `from`'s messages to `to`; returns the handler, for messages that arrived before it. */
function relay(from: WebSocket, to: WebSocket, highWaterMark: number, observe?: (data: Buffer) => void): (data: Buffer, isBinary: boolean) => void {
  let paused = false;
  const low = highWaterMark / 2;
  const drained = (): void => {
    if (paused && to.bufferedAmount <= low) {
      paused = false;
      from.resume();
    }
  };
  const onMessage = (bytes: Buffer, isBinary: boolean): void => {
    if (!isBinary && observe !== undefined) observe(bytes);
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(bytes, { binary: isBinary }, drained);
    if (!paused && to.bufferedAmount > highWaterMark) {
      paused = true;
      from.pause();
    }
  };
  // Messages arrive as Buffers (the default binaryType, 'nodebuffer').
  from.on('message', onMessage);
  return onMessage;
}

/**
 * Runs the session to its end. Both sockets come paused: `early` holds what the upstream sent
 * before (passed on first, in order), then both resume.
 */
export function runSession(client: WebSocket, upstream: Connected & { kind: 'open' }, options: { highWaterMark: number }): Promise<SessionResult> {
  const meter = new UsageMeter();
  relay(client, upstream.ws, options.highWaterMark);
  const fromUpstream = relay(upstream.ws, client, options.highWaterMark, (data) => meter.observe(data));
  upstream.stopHolding();
  for (const m of upstream.early.splice(0)) fromUpstream(m.data, m.isBinary);
  return closing(client, upstream.ws, meter);
}

function closing(client: WebSocket, upstream: WebSocket, meter: UsageMeter): Promise<SessionResult> {
  // Errors end in 'close' (ws emits it after 'error'); listening keeps them from being thrown.
  client.on('error', () => undefined);
  let upstreamError: Error | undefined;
  upstream.on('error', (err) => {
    upstreamError = err;
  });

  return new Promise((resolve) => {
    let closedBy: SessionResult['closedBy'] | undefined;
    let firstCode = 1005;
    let error: GatewayError | undefined;
    let open = 2;
    const graceTimers: NodeJS.Timeout[] = [];
    const closed = (): void => {
      if (--open > 0) return;
      for (const t of graceTimers) clearTimeout(t);
      resolve({ closedBy: closedBy ?? 'client', code: firstCode, error, meter });
    };
    const passOn = (to: WebSocket, code: number, reason: Buffer): void => {
      if (to.readyState === WebSocket.CLOSED) return;
      if (to.readyState === WebSocket.CONNECTING) return void to.terminate();
      // A peer that vanished: "going away" to the upstream, "bad gateway" to the client.
      const out = sendable(code, to === upstream ? 1001 : 1014);
      if (to.readyState === WebSocket.OPEN) {
        if (out === undefined) to.close();
        else to.close(out, reason);
      }
      graceTimers.push(setTimeout(() => to.terminate(), CLOSE_GRACE_MS).unref());
    };
    client.once('close', (code: number, reason: Buffer) => {
      if (closedBy === undefined) {
        closedBy = 'client';
        firstCode = code;
        passOn(upstream, code, reason);
      }
      closed();
    });
    const upstreamClosed = (code: number, reason: Buffer): void => {
      if (closedBy === undefined) {
        closedBy = 'upstream';
        firstCode = code;
        if (code === 1006 || code === 1015) {
          error = Errors.upstreamStreamFailed('The upstream WebSocket ended without a close.', { cause: upstreamError });
          passOn(client, code, Buffer.from('upstream connection lost'));
        } else {
          // 1011 internal error, 1012 restart, 1013 try again later, 1014 bad gateway: the upstream failed.
          if (code >= 1011 && code <= 1014) error = Errors.upstreamStreamFailed(`The upstream closed the session with code ${code}.`);
          passOn(client, code, reason);
        }
      }
      closed();
    };
    // The upstream may have gone while the client's handshake ran: its 'close' is not coming again.
    if (upstream.readyState === WebSocket.CLOSED) upstreamClosed(1006, Buffer.alloc(0));
    else upstream.once('close', upstreamClosed);
    client.resume();
    upstream.resume();
  });
}
