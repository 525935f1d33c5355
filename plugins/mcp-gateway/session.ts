/**
 * One MCP session between a client and the gateway: an SDK `Server` on a web-standard Streamable
 * HTTP transport, and, per upstream MCP server it reaches, one SDK `Client` connected on first use.
 *
 *   client ── POST/GET/DELETE /<slug>/mcp or /v1/mcp ──▶ transport ──▶ Server (proxy.ts handlers)
 *                                                                       └─▶ Client ──▶ upstream
 *
 * A session belongs to the API key that opened it: another key presenting its id is answered as
 * if it did not exist. Sessions live in this process; in distributed mode another host resumes
 * one it is asked for (shared-sessions.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { GatewayContext, McpCall, Principal } from '../../core/index.js';
import type { Reachable } from './access.js';
import { connectUpstream, upstreamTarget, type ConnectOptions, type UpstreamTarget } from './upstream.js';
import type { Store } from '../../core/index.js';

/** Which servers a session reaches: one (`/<slug>/mcp`) or every one the key may use (`/v1/mcp`). */
export type Scope = { kind: 'one'; slug: string } | { kind: 'all' };

/** The same endpoint: both `/v1/mcp`, or both `/<slug>/mcp` of one slug. */
export const sameScope = (a: Scope, b: Scope): boolean => (a.kind === 'one' ? b.kind === 'one' && a.slug === b.slug : b.kind === 'all');

/** A connected upstream: the SDK client, and where it is with the credentials it sends (for relay.ts). */
export interface Linked {
  client: Client;
  target: UpstreamTarget;
  /** The target's URL, parsed once. */
  origin: string;
  path: string;
}

export class Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  server!: Server;
  lastUsed = Date.now();
  /** The call record of each JSON-RPC request in flight, by id: handlers fill in its outcome. */
  readonly calls = new Map<string | number, McpCall>();
  /** The HTTP request of each JSON-RPC request in flight, by id: handlers read its key, metadata, guardrail results. */
  readonly contexts = new Map<string | number, GatewayContext>();
  /** Aborts the upstream call of a request whose HTTP client went away. */
  readonly aborts = new Map<string | number, AbortController>();
  readonly #upstreams = new Map<string, Promise<Linked>>();
  #closed = false;

  constructor(
    readonly principal: Principal,
    readonly scope: Scope,
    private readonly store: Store,
    private readonly connect: Omit<ConnectOptions, 'signal'>,
    onInitialized: (s: Session) => void | Promise<void>,
    /** A DELETE from the client ended it. */
    onDeleted: (s: Session) => void,
    /** The id of a session resumed from another host (shared-sessions.ts); a new one otherwise. */
    id?: string,
  ) {
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: id === undefined ? randomUUID : () => id,
      onsessioninitialized: () => onInitialized(this),
      onsessionclosed: () => void this.close().finally(() => onDeleted(this)),
    });
  }

  get id(): string | undefined {
    return this.transport.sessionId;
  }

  /** The session's client to `r`'s server, connected once and shared by its calls. */
  upstream(r: Reachable): Promise<Client> {
    return this.link(r).then((l) => l.client);
  }

  /** The session's connection to `r`'s server: its client and target, connected once. */
  link(r: Reachable): Promise<Linked> {
    let linked = this.#upstreams.get(r.server.slug);
    if (linked === undefined) {
      const target = upstreamTarget(this.store, r.integration);
      linked = connectUpstream(target, this.connect).then((client) => {
        // A transport failure (the server went away mid-stream) closes the client, which fails
        // every call waiting on it at once; the next call connects again.
        client.onerror = () => void client.close();
        client.onclose = () => {
          if (this.#upstreams.get(r.server.slug) === linked) this.#upstreams.delete(r.server.slug);
        };
        if (this.#closed) void client.close();
        const url = new URL(target.url);
        return { client, target, origin: url.origin, path: `${url.pathname}${url.search}` };
      });
      linked.catch(() => this.#upstreams.delete(r.server.slug));
      this.#upstreams.set(r.server.slug, linked);
    }
    return linked;
  }

  /** The guarded dispatcher upstream calls go through. */
  get dispatcher(): ConnectOptions['dispatcher'] {
    return this.connect.dispatcher;
  }

  /** Ends the session: every upstream session is ended (DELETE) and closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const a of this.aborts.values()) a.abort();
    const clients = [...this.#upstreams.values()];
    this.#upstreams.clear();
    await Promise.all(
      clients.map(async (p) => {
        const c = (await p.catch(() => undefined))?.client;
        if (c === undefined) return;
        const t = c.transport as { terminateSession?: () => Promise<void> } | undefined;
        await t?.terminateSession?.().catch(() => undefined);
        await c.close().catch(() => undefined);
      }),
    );
    await this.server?.close().catch(() => undefined);
  }
}

/** The open sessions of this process, with an idle sweep and a cap. */
export class Sessions {
  readonly #byId = new Map<string, Session>();
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly max: number, private readonly idleMs: number) {
    this.#timer = setInterval(() => this.sweep(Date.now()), Math.min(60_000, Math.max(1000, idleMs / 4))).unref();
  }

  get size(): number {
    return this.#byId.size;
  }

  get full(): boolean {
    return this.#byId.size >= this.max;
  }

  add(s: Session): void {
    if (s.id !== undefined) this.#byId.set(s.id, s);
  }

  remove(s: Session): void {
    if (s.id !== undefined && this.#byId.get(s.id) === s) this.#byId.delete(s.id);
  }

  /** The session `id`, whoever opened it. */
  get(id: string): Session | undefined {
    return this.#byId.get(id);
  }

  /** The session `id` if `principal` opened it on this endpoint. */
  find(id: string, principal: Principal, scope: Scope): Session | undefined {
    const s = this.#byId.get(id);
    if (s === undefined || s.principal.key_id !== principal.key_id || s.principal.user_id !== principal.user_id) return undefined;
    return sameScope(s.scope, scope) ? s : undefined;
  }

  sweep(now: number): void {
    for (const s of this.#byId.values()) {
      if (now - s.lastUsed > this.idleMs) {
        this.remove(s);
        void s.close();
      }
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#timer);
    const all = [...this.#byId.values()];
    this.#byId.clear();
    await Promise.all(all.map((s) => s.close()));
  }
}
