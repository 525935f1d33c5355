/**
 * The two shared backends of distributed mode, opened once per process:
 *
 *   PostgreSQL ── pg.Pool ──────────── control plane (records, change log), logs, analytics, feedback
 *   Valkey ────── ioredis (commands) ─ counters (one script per request), cache entries, breakers
 *          └──── ioredis (subscriber) ─ the change feed (pub/sub needs a connection of its own)
 *
 * Clients: `pg` (node-postgres) because it is the most used PostgreSQL client for Node, pure JS,
 * with pooling and LISTEN/NOTIFY; `ioredis` because it is the most used Redis client, speaks
 * RESP to Valkey unchanged, reconnects by itself, and caches Lua scripts by SHA (`defineCommand`).
 *
 * Neither URL (they may hold passwords) is ever logged: only host and port are.
 *
 * Both clients are loaded when distributed mode opens, not when the gateway starts: an embedded
 * gateway never needs them, and loading them took about 0.2 s of every start.
 */
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { PostgresConfig, RedisConfig } from '../../config/types.js';
import type { Logger } from '../../logger.js';

/** node-postgres's constructors, loaded with distributed mode (for connections of a component's own). */
export type PgModule = Pick<typeof pg, 'Pool' | 'Client'>;

export interface Distributed {
  readonly pg: pg.Pool;
  /** The `pg` module itself: a component with a pool or a LISTEN connection of its own makes them from it. */
  readonly pgModule: PgModule;
  /** Commands (counters, cache). Fails fast while Valkey is unreachable (no offline queue). */
  readonly redis: Redis;
  /** A new connection for SUBSCRIBE (a subscribed connection can run nothing else); closed with the rest. */
  subscriber(): Redis;
  /** `<key_prefix><name>`: every Valkey key the gateway writes goes through this. */
  key(name: string): string;
  readonly postgresConfig: PostgresConfig;
  readonly redisConfig: RedisConfig;
  close(): Promise<void>;
}

/** host:port of a URL, for logs (never the credentials). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? '6379' : '5432')}`;
  } catch {
    return '(unparsable url)';
  }
}

/** Opens both backends and checks that each answers; throws a message naming which one did not. */
export async function openDistributed(postgres: PostgresConfig, redis: RedisConfig, log: Logger): Promise<Distributed> {
  const [{ default: pgModule }, { Redis }] = await Promise.all([import('pg'), import('ioredis')]);
  const pool = new pgModule.Pool({ connectionString: postgres.url, max: postgres.pool, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server emits 'error' on the pool; without a listener that ends the process.
  pool.on('error', (err) => log.warn('postgres connection lost', { backend: describeUrl(postgres.url), error: err.message }));
  const options = {
    lazyConnect: true,
    // A command while Valkey is away fails at once (the fault modes decide what happens), instead
    // of waiting in a queue while requests pile up.
    enableOfflineQueue: false,
    commandTimeout: redis.command_timeout,
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 5), 1000),
  };
  // Auto-pipelining: the commands of one event-loop turn (cache lookups of concurrent requests)
  // leave in one socket write instead of one write syscall each. Not the governance take: it
  // batches itself (governance-claims.ts), leaving at once when it is the only one in flight,
  // where auto-pipelining would hold every take until the end of the turn.
  const commands = new Redis(redis.url, { ...options, enableAutoPipelining: true, autoPipeliningIgnoredCommands: ['gwGovTake'] });
  commands.on('error', () => {
    // ioredis reports every failed reconnect; the fault paths log what matters, once.
  });
  const subscribers: Redis[] = [];
  const close = async (): Promise<void> => {
    for (const s of subscribers) s.disconnect();
    commands.disconnect();
    await pool.end().catch(() => undefined);
  };
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await close();
    throw new Error(`cannot reach PostgreSQL at ${describeUrl(postgres.url)}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await commands.connect();
    await commands.ping();
  } catch (err) {
    await close();
    throw new Error(`cannot reach Valkey/Redis at ${describeUrl(redis.url)}: ${(err as Error).message}`, { cause: err });
  }
  log.info('distributed mode', { postgres: describeUrl(postgres.url), redis: describeUrl(redis.url) });
  return {
    pg: pool,
    pgModule,
    redis: commands,
    subscriber() {
      // Subscribers may queue while reconnecting: ioredis re-subscribes them when Valkey is back.
      const s = new Redis(redis.url, { ...options, lazyConnect: false, enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null });
      s.on('error', () => undefined);
      subscribers.push(s);
      return s;
    },
    key: (name) => redis.key_prefix + name,
    postgresConfig: postgres,
    redisConfig: redis,
    close,
  };
}
