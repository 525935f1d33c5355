/**
 * WebSocket upgrades: an HTTP/1.1 `Upgrade: websocket` request to a path a plugin serves (its
 * `upgrades` hook) goes through the same request flow as every request of its route, and only the
 * terminal stage differs: the plugin's session instead of the router.
 *
 *   GET /v1/realtime  Upgrade: websocket
 *     ─▶ core/server.ts 'upgrade' ─▶ does a plugin serve this path? ── no ─▶ served as a plain request
 *     ─▶ onRequest, onRequestBody (YAML order; no body is read): auth, virtual keys, routing
 *        configs, rate limits and budgets apply as to any request of the route (pass-through here)
 *          └─ a hook answers or fails ─▶ that HTTP answer, response hooks included; connection closed
 *     ─▶ terminal: route.handle(ctx, upgrade) ─▶ upgrade.accept() ─▶ 101 through the response hooks
 *        (x-gateway-request-id, x-ratelimit-*, …) ─▶ the open WebSocket, the plugin's to serve
 *     ─▶ the socket closed ─▶ onDone (every plugin) with the session's outcome, duration and usage
 *
 * The refusals before the handshake are ordinary answers on the raw socket: a ServerResponse is
 * bound to it, so the response writer, the sequencer and every hook work unchanged. The 101 goes
 * out the same way; the socket then belongs to the WebSocket (`ws`, without compression: the
 * proxy relays messages, it has nothing to gain from deflating them twice).
 *
 * HTTP/2 (RFC 8441 extended CONNECT) is not served: WebSocket clients speak HTTP/1.1.
 */
import { createHash } from 'node:crypto';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import type { GatewayContext } from './context.js';
import type { Pipeline } from './pipeline.js';
import type { MaybePromise } from './plugin.js';
import type { ResponseWriter } from './response-writer.js';
import type { Runtime } from './runtime.js';
import { reply, isReply, type Reply } from './reply.js';
import { ALL_PLUGINS, sendReply } from './respond.js';
import { Errors } from './errors.js';
import { headerValue } from './upstream/headers.js';

declare module './context.js' {
  interface ContextVars {
    /** Set by the core on a WebSocket upgrade request: the plugin route serving it. */
    upgrade: UpgradeRoute;
  }
}

/** A WebSocket endpoint a plugin serves (`PluginHooks.upgrades`). */
export interface UpgradeRoute {
  /** The exact path, e.g. `/v1/realtime`. The request's route is still the table's (pass-through under `/v1/`). */
  path: string;
  /** The name logs, analytics and metrics give the session (the log record's `route`), e.g. `realtime`. */
  name: string;
  /**
   * Runs once the request hooks let the upgrade through. Refuse by throwing a GatewayError or
   * returning a reply (an HTTP answer, nothing upgraded); or call `upgrade.accept()` and resolve
   * once the session is over, with `ctx.usage`, `ctx.provider`, `ctx.streamError` set as they
   * should appear in `onDone`.
   */
  handle(ctx: GatewayContext, upgrade: Upgrade): MaybePromise<Reply | void>;
}

/** The handshake a route completes (second argument of {@link UpgradeRoute.handle}). */
export interface Upgrade {
  /** The subprotocols the client offered (`Sec-WebSocket-Protocol`), in order. */
  readonly protocols: ReadonlyArray<string>;
  /**
   * Answers 101 through the response hooks and returns the client's WebSocket, PAUSED: attach
   * its listeners, then `resume()` it (nothing is emitted before). `protocol` must be
   * one the client offered (a client that offered any requires one back). Undefined when a
   * response hook replaced the 101 with another answer (that answer went out; nothing upgraded).
   */
  accept(options?: { protocol?: string; maxPayload?: number }): Promise<WebSocket | undefined>;
}

/** The request as the upgrade listener got it. */
export interface UpgradeRequest {
  route: UpgradeRoute;
  req: IncomingMessage;
  socket: Socket;
  /** Bytes the client sent after the request head (frames sent before the 101, rare). */
  head: Buffer;
  /** Where an accepted session is registered (for shutdown). */
  sessions: OpenSessions;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const KEY = /^[A-Za-z0-9+/]{22}==$/;
/** Messages larger than this close the session (1009): Realtime audio arrives in small chunks. */
const DEFAULT_MAX_PAYLOAD = 16 * 1024 * 1024;

/** What `ws` does on the server side once a handshake is done; not in its type declarations. */
interface ServerSideSocket {
  setSocket(socket: Duplex, head: Buffer, options: { allowSynchronousEvents: boolean; maxPayload: number; skipUTF8Validation: boolean }): void;
}

/** `ws`'s server-side constructor form (address null, then options), which its declarations omit. */
const ServerWebSocket = WebSocket as unknown as new (address: null, protocols: undefined, options: { autoPong: boolean }) => WebSocket;

/** One gateway's accepted sessions (their client sockets), told "going away" when it drains. */
export class OpenSessions {
  readonly #open = new Set<WebSocket>();

  add(ws: WebSocket): void {
    this.#open.add(ws);
    ws.once('close', () => this.#open.delete(ws));
  }

  /**
   * Shutdown: every open session gets close 1001 ("going away"), so that it ends (its route passes
   * the close on, `onDone` runs) within the grace period instead of being cut at its end.
   */
  closeAll(): void {
    for (const ws of this.#open) ws.close(1001, 'the gateway is shutting down');
  }
}

const tables = new WeakMap<Pipeline, ReadonlyMap<string, UpgradeRoute>>();

/** The upgrade route serving `path` (built once per pipeline), for WebSocket upgrade requests only. */
export function findUpgradeRoute(pipeline: Pipeline, path: string, req: IncomingMessage): UpgradeRoute | undefined {
  if (headerValue(req.headers, 'upgrade')?.toLowerCase() !== 'websocket') return undefined;
  let table = tables.get(pipeline);
  if (table === undefined) {
    const map = new Map<string, UpgradeRoute>();
    for (const p of pipeline.plugins) for (const route of p.hooks.upgrades ?? []) if (!map.has(route.path)) map.set(route.path, route);
    tables.set(pipeline, (table = map));
  }
  return table.size === 0 ? undefined : table.get(path);
}

/**
 * A response bound to the raw socket of an upgrade request, for the answers before the handshake
 * (and the 101 itself). Anything but a 101 closes the connection once sent: the HTTP parser let go
 * of the socket, so it cannot carry another request.
 */
export function upgradeResponse(req: IncomingMessage, socket: Socket): ServerResponse {
  // Node's upgrade path took its own error listener off: an error must not be thrown.
  socket.on('error', noop);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => {
    // Closed once written, whatever the client does with its half of the connection.
    if (res.statusCode !== 101) socket.destroySoon();
  });
  return res;
}

function noop(): void {}

function offeredProtocols(req: IncomingMessage): string[] {
  const raw = headerValue(req.headers, 'sec-websocket-protocol');
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** The terminal stage of an upgrade request: the handshake checks, then the route's session. */
export async function runUpgrade(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, request: UpgradeRequest, draining: () => boolean): Promise<void> {
  const { req, socket, head, route } = request;
  const key = headerValue(req.headers, 'sec-websocket-key');
  if (ctx.method !== 'GET' || key === undefined || !KEY.test(key)) {
    throw Errors.badRequest('A WebSocket upgrade needs GET with a valid Sec-WebSocket-Key.', { param: 'sec-websocket-key' });
  }
  if (headerValue(req.headers, 'sec-websocket-version') !== '13') {
    throw Errors.badRequest('Only WebSocket version 13 is supported.', { param: 'sec-websocket-version', headers: { 'sec-websocket-version': '13' } });
  }
  const protocols = offeredProtocols(req);
  const upgrade: Upgrade = {
    protocols,
    async accept(options = {}) {
      if (out.headersSent) throw new Error('upgrade: the request was already answered');
      if (draining()) throw Errors.draining();
      const { protocol } = options;
      if (protocol !== undefined && !protocols.includes(protocol)) throw new Error('upgrade: the protocol must be one the client offered');
      const headers: Record<string, string> = {
        upgrade: 'websocket',
        connection: 'Upgrade',
        'sec-websocket-accept': createHash('sha1').update(key + GUID).digest('base64'),
      };
      if (protocol !== undefined) headers['sec-websocket-protocol'] = protocol;
      await sendReply(rt, ctx, out, reply(101, undefined, headers), { limit: ALL_PLUGINS, proxied: true });
      if (ctx.status !== 101 || socket.destroyed) return undefined;
      const ws = new ServerWebSocket(null, undefined, { autoPong: true });
      (ws as unknown as ServerSideSocket).setSocket(socket, head, {
        allowSynchronousEvents: true,
        maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
        skipUTF8Validation: false,
      });
      ws.pause();
      request.sessions.add(ws);
      return ws;
    },
  };
  const answer = await route.handle(ctx, upgrade);
  if (isReply(answer) && !out.headersSent) {
    // An upstream's refusal relayed by the route stays the upstream's answer in the log.
    if (answer.headers['x-gateway-error-source'] !== 'upstream') ctx.source = 'plugin';
    await sendReply(rt, ctx, out, answer, { limit: ALL_PLUGINS, proxied: false });
  } else if (!out.headersSent && !ctx.aborted) {
    // A route that neither accepted nor refused would leave the client waiting.
    throw Errors.internal('The WebSocket route neither accepted nor refused the upgrade.');
  }
}
