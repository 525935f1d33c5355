/**
 * MCP sessions across hosts (distributed mode). A session lives in the process that opened it;
 * what it takes to open it again (its initialize request, the key that opened it, its endpoint) is
 * kept in Valkey for as long as the session may idle. A host that is asked for a session it does
 * not hold resumes it from there (index.ts): behind a load balancer without affinity, or after the
 * host that opened it restarted, the client's session goes on.
 *
 *   initialize on host A ── save ──▶ <prefix>mcp-session:<id>  {key, user, scope, initialize}  PX idle
 *   a call on host B     ── load ──▶ replay initialize into a session of B's own ─▶ answer the call
 *   DELETE on any host   ── end ───▶ DEL, and PUBLISH <prefix>mcp-sessions-ended <id>: every host closes its copy
 *
 * Upstream MCP sessions are per host: a resumed session connects to its upstreams again. A
 * server-to-client GET stream stays on the host it was opened on.
 */
import type { Redis } from 'ioredis';
import type { Distributed, Logger, Principal } from '../../core/index.js';
import type { Scope } from './session.js';

export interface SharedSession {
  key_id: string | null;
  user_id: string | null;
  scope: Scope;
  /** The client's initialize request, replayed to resume the session. */
  initialize: unknown;
}

export class SharedSessions {
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #key: (id: string) => string;
  readonly #channel: string;
  /** When each session's key was last given its full lifetime again, by id. */
  readonly #touched = new Map<string, number>();

  constructor(
    distributed: Distributed,
    private readonly idleMs: number,
    private readonly log: Logger,
    onEnded: (id: string) => void,
  ) {
    this.#redis = distributed.redis;
    this.#key = (id) => distributed.key(`mcp-session:${id}`);
    this.#channel = distributed.key('mcp-sessions-ended');
    this.#subscriber = distributed.subscriber();
    this.#subscriber.on('message', (channel: string, id: string) => {
      if (channel === this.#channel) onEnded(id);
    });
    void this.#subscriber.subscribe(this.#channel).catch((err: unknown) => this.log.warn('MCP session end notices are not received', { err: String(err) }));
  }

  /** Keeps the session resumable; the initialize answer waits for it, so the client's next request finds it on any host. */
  async save(id: string, principal: Principal, scope: Scope, initialize: unknown): Promise<void> {
    const record: SharedSession = { key_id: principal.key_id, user_id: principal.user_id, scope, initialize };
    try {
      await this.#redis.set(this.#key(id), JSON.stringify(record), 'PX', this.idleMs);
      this.#touched.set(id, Date.now());
    } catch (err) {
      // The session works here; only another host could not resume it.
      this.log.warn('MCP session not shared: other hosts cannot resume it', { err: String(err) });
    }
  }

  /** The session may idle `idleMs` from now; told to Valkey at most every quarter of that. */
  touch(id: string): void {
    const now = Date.now();
    if (now - (this.#touched.get(id) ?? 0) < this.idleMs / 4) return;
    if (this.#touched.size >= 100_000) this.#touched.clear(); // sessions swept here are not told: bound the map instead
    this.#touched.set(id, now);
    this.#redis.pexpire(this.#key(id), this.idleMs).catch(() => undefined);
  }

  /** The session `id` as saved, if another host (or this one, before a restart) opened it and it has not ended. */
  async load(id: string): Promise<SharedSession | undefined> {
    try {
      const text = await this.#redis.get(this.#key(id));
      return text === null ? undefined : (JSON.parse(text) as SharedSession);
    } catch (err) {
      this.log.warn('MCP session could not be looked up in Valkey', { err: String(err) });
      return undefined;
    }
  }

  /** Ends the session on every host. */
  async end(id: string): Promise<void> {
    this.#touched.delete(id);
    await Promise.all([this.#redis.del(this.#key(id)), this.#redis.publish(this.#channel, id)]).catch((err: unknown) =>
      this.log.warn('MCP session end not shared: other hosts keep their copies until they idle out', { err: String(err) }),
    );
  }

  close(): void {
    this.#subscriber.disconnect();
  }
}
