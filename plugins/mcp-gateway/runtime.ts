/**
 * The MCP gateway's sessions and its request handler (index.ts has the overview). Everything here
 * runs on the MCP SDK, whose modules took about a quarter of a second of every gateway's start;
 * the plugin loads this module on the first MCP request instead (index.ts).
 */
import type { ReadableStreamReadResult } from 'node:stream/web';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  AdminErrors,
  authorize,
  headerString,
  optionalService,
  reply,
  type GatewayApp,
  type GatewayContext,
  type Reply,
} from '../../core/index.js';
import { reachableServer } from './access.js';
import { scopeOf, type JsonRpcRequest } from './call.js';
import { MCP_DENIED } from './errors.js';
import { createProxyServer } from './proxy.js';
import { relayCall } from './relay.js';
import type { McpGatewayOptions } from './schema.js';
import { sameScope, Session, Sessions, type Scope } from './session.js';
import { SharedSessions } from './shared-sessions.js';

/** The headers of MCP's HTTP transport the SDK's transport reads. */
const FORWARDED = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

/** A JSON-RPC error answer outside any session (no SDK transport to write it). */
function rpcError(status: number, code: number, message: string, id: string | number | null = null): Reply {
  return reply(status, { jsonrpc: '2.0', id, error: { code, message } });
}

const sessionsFull = (id: string | number | null): Reply => rpcError(503, -32011, 'The gateway holds as many MCP sessions as it may; try again later.', id);

type Read = ReadableStreamReadResult<Uint8Array>;

/** `Promise.race` against {@link ALREADY} tells whether a promise had already settled. */
const NOT_YET = 'not yet' as const;
const ALREADY: Promise<typeof NOT_YET> = Promise.resolve(NOT_YET);

/**
 * The reply body for a web `Response` body the SDK's transport writes. A POST's answer is awaited:
 * when the transport had finished writing it by then (a call's response with no progress before
 * it), it goes out as one buffer with a length, in one write; otherwise, and for the GET stream,
 * the chunks stream as they come. When the client goes away the read is cancelled at once: a
 * pending `read()` would otherwise hold a long-lived stream (the GET stream, a slow call's answer)
 * open until its next event, and a drain with it.
 */
async function replyBody(ctx: GatewayContext, body: ReadableStream<Uint8Array>, done: () => void): Promise<Buffer | AsyncGenerator<Buffer>> {
  const reader = body.getReader();
  const off = ctx.onAbort(() => void reader.cancel().catch(() => undefined));
  const release = (): void => {
    off();
    done();
    void reader.cancel().catch(() => undefined);
  };
  if (ctx.method !== 'POST') return chunks(reader, undefined, reader.read(), release);
  let first: Read;
  try {
    first = await reader.read();
  } catch (err) {
    release();
    throw err;
  }
  if (first.done) {
    release();
    return Buffer.alloc(0);
  }
  const next = reader.read();
  const now = await Promise.race([next, ALREADY]).catch(() => NOT_YET);
  if (now !== NOT_YET && now.done) {
    release();
    return bytes(first.value);
  }
  return chunks(reader, first.value, next, release);
}

const bytes = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** `first` (already read), then what `pending` and the reads after it give, until the end. */
async function* chunks(reader: ReadableStreamDefaultReader<Uint8Array>, first: Uint8Array | undefined, pending: Promise<Read>, release: () => void): AsyncGenerator<Buffer> {
  try {
    if (first !== undefined) yield bytes(first);
    for (let read = pending; ; read = reader.read()) {
      const { value, done } = await read;
      if (done) return;
      yield bytes(value);
    }
  } finally {
    release();
  }
}

/** The plugin's handler and what it holds, made on the first MCP request. */
export interface McpRuntime {
  handle(ctx: GatewayContext): Promise<Reply>;
  close(): Promise<void>;
}

export function createMcpRuntime(app: GatewayApp, options: McpGatewayOptions): McpRuntime {
  const sessions = new Sessions(options.max_sessions, options.session_idle_ms);
  const connect = { dispatcher: app.upstream, policy: app.config.security.custom_hosts, timeoutMs: options.connect_timeout_ms };
  const timeoutFor = (slug: string): number => options.timeouts[slug] ?? options.timeout_ms;
  // Looked up at first use; without the plugin, arguments and results pass unchecked.
  const guardrails = optionalService(app, 'guardrails', 'MCP tool arguments and results are not checked by guardrails');

  // Distributed mode: sessions resumable on every host (shared-sessions.ts).
  const distributed = app.store.distributed;
  const shared = distributed === undefined ? undefined : new SharedSessions(distributed, options.session_idle_ms, app.log, (id) => {
    // Ended on another host (DELETE): this host's copy ends too.
    const s = sessions.get(id);
    if (s === undefined) return;
    sessions.remove(s);
    void s.close();
  });

  const relayOptions = { store: app.store, timeoutFor, guardrails };
  const resuming = new Map<string, Promise<Session | undefined>>();

  function open(ctx: GatewayContext, scope: Scope, initialize: unknown, id?: string): Session {
    const principal = ctx.get('principal')!;
    const onInitialized = (s: Session): void | Promise<void> => {
      sessions.add(s);
      if (shared !== undefined && s.id !== undefined && id === undefined) return shared.save(s.id, principal, scope, initialize);
    };
    const onDeleted = (s: Session): void => {
      sessions.remove(s);
      if (shared !== undefined && s.id !== undefined) void shared.end(s.id);
    };
    const session = new Session(principal, scope, app.store, connect, onInitialized, onDeleted, id);
    session.server = createProxyServer(session, relayOptions);
    // Every answer the session sends fills in its call's record (outcome and error code).
    const send = session.transport.send.bind(session.transport);
    session.transport.send = (message: JSONRPCMessage, opts) => {
      const m = message as { id?: string | number; result?: unknown; error?: { code: number } };
      if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) {
        const rec = session.calls.get(m.id);
        if (rec !== undefined) {
          if (m.error !== undefined) {
            rec.outcome = m.error.code === MCP_DENIED ? 'denied' : 'error';
            rec.error_code = m.error.code;
          } else if (rec.outcome === null) rec.outcome = 'ok';
        }
      }
      return send(message, opts);
    };
    return session;
  }

  /**
   * A session another host opened (or this one, before a restart), opened here again: its
   * initialize is replayed into a session of this host's own with the same id, then the
   * client's `notifications/initialized`. Undefined when no such session is shared for this
   * key and endpoint.
   */
  async function resume(ctx: GatewayContext, sid: string, scope: Scope): Promise<Session | undefined> {
    const saved = await shared!.load(sid);
    const principal = ctx.get('principal')!;
    if (saved === undefined || saved.key_id !== principal.key_id || saved.user_id !== principal.user_id || !sameScope(saved.scope, scope)) return undefined;
    if (!isInitializeRequest(saved.initialize)) return undefined;
    const session = open(ctx, scope, saved.initialize, sid);
    await session.server.connect(session.transport);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const replayed = await session.transport.handleRequest(new Request('http://gateway/', { method: 'POST', headers }), { parsedBody: saved.initialize });
    // The initialize answer goes nowhere: the client had it from the host that opened the session.
    await replayed.text().catch(() => undefined);
    if (replayed.status !== 200 || session.id !== sid) {
      sessions.remove(session);
      await session.close();
      return undefined;
    }
    const version = headerString(ctx.headers, 'mcp-protocol-version') ?? saved.initialize.params.protocolVersion;
    const initialized = await session.transport.handleRequest(
      new Request('http://gateway/', { method: 'POST', headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': version } }),
      { parsedBody: { jsonrpc: '2.0', method: 'notifications/initialized' } },
    );
    await initialized.body?.cancel().catch(() => undefined);
    app.log.info('MCP session resumed from another host', { session: sid });
    return session;
  }

  async function handle(ctx: GatewayContext): Promise<Reply> {
    const principal = ctx.get('principal');
    if (principal === undefined) throw AdminErrors.unauthenticated();
    authorize(principal, { level: 'workspace', scope: 'mcp.invoke' });
    const scope = scopeOf(ctx);
    const message = (ctx.method === 'POST' ? ctx.body : undefined) as JsonRpcRequest | undefined;
    const id = message?.id ?? null;
    if (scope.kind === 'one' && reachableServer(app.store, principal, scope.slug) === undefined) {
      return rpcError(404, -32012, `No MCP server "${scope.slug}" is reachable with this key.`, id);
    }

    const sid = headerString(ctx.headers, 'mcp-session-id');
    let session: Session | undefined;
    if (sid !== undefined) {
      session = sessions.find(sid, principal, scope);
      if (session === undefined && shared !== undefined && sessions.get(sid) === undefined) {
        if (sessions.full) return sessionsFull(id);
        // Concurrent requests for one session resume it once.
        let pending = resuming.get(sid);
        if (pending === undefined) {
          pending = resume(ctx, sid, scope).finally(() => resuming.delete(sid));
          resuming.set(sid, pending);
        }
        session = await pending;
        // The one that resumed it may have been another key's request: check this one's.
        if (session !== undefined) session = sessions.find(sid, principal, scope);
      }
      if (session === undefined) return rpcError(404, -32001, 'Session not found: initialize a new one.', id);
      shared?.touch(sid);
    } else if (message !== undefined && isInitializeRequest(message)) {
      if (sessions.full) return sessionsFull(id);
      session = open(ctx, scope, message);
      await session.server.connect(session.transport);
    } else {
      return rpcError(400, -32600, 'Bad Request: send initialize first, then the Mcp-Session-Id header it answers with.', id);
    }
    session.lastUsed = Date.now();

    // A client's cancellation of a call in flight reaches it here too (a relayed call has no SDK handler to abort).
    if (message?.method === 'notifications/cancelled') {
      const of = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof of === 'string' || typeof of === 'number') session.aborts.get(of)?.abort();
    }

    const call = ctx.get('mcpCall');
    const tracked = message?.id !== undefined && typeof message.method === 'string' ? message.id : undefined;
    let untrack = (): void => undefined;
    const abort = new AbortController();
    if (tracked !== undefined) {
      const s = session;
      if (call !== undefined) s.calls.set(tracked, call);
      s.contexts.set(tracked, ctx);
      s.aborts.set(tracked, abort);
      const off = ctx.onAbort(() => abort.abort());
      untrack = () => {
        off();
        if (s.aborts.get(tracked) === abort) s.aborts.delete(tracked);
        if (s.contexts.get(tracked) === ctx) s.contexts.delete(tracked);
        if (call !== undefined && s.calls.get(tracked) === call) s.calls.delete(tracked);
        if (call !== undefined && call.outcome === null && abort.signal.aborted) call.outcome = 'cancelled';
      };
    }

    if (tracked !== undefined) {
      let relayed: Reply | undefined;
      try {
        relayed = await relayCall(ctx, session, message, abort, untrack, relayOptions);
      } catch (err) {
        untrack();
        throw err;
      }
      if (relayed !== undefined) return relayed;
    }

    const headers = new Headers();
    for (const name of FORWARDED) {
      const v = headerString(ctx.headers, name);
      if (v !== undefined) headers.set(name, v);
    }
    // What the SDK's transport reads of a `Request` (its method, URL and headers), not a `Request`:
    // that would parse the URL and make an AbortController per call. No body either: the
    // transport takes the parsed message.
    const request = { method: ctx.method, url: `http://gateway${ctx.path}`, headers } as unknown as Request;
    let response: Response;
    try {
      response = await session.transport.handleRequest(request, message !== undefined ? { parsedBody: message } : {});
    } catch (err) {
      untrack();
      throw err;
    }
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => (out[k] = v));
    if (response.body === null) {
      untrack();
      return reply(response.status, undefined, out);
    }
    return reply(response.status, await replyBody(ctx, response.body, untrack), out);
  }


  return {
    handle,
    async close() {
      // Local copies only: the sessions stay resumable on the other hosts (and after a restart).
      await sessions.closeAll();
      shared?.close();
    },
  };
}
