/**
 * Cache entries in Valkey, for distributed mode: an answer stored through one host is a hit on
 * every host. Used instead of the LMDB {@link EntryStore} when `app.store.distributed` is set.
 *
 *   <prefix>cache:e:<workspace>:<key>   the entry (framed below), SET … PX <the storing request's max_age>
 *   <prefix>cache:expiry                zset: entry key → expires at (ms)      (bounds, soonest to expire goes first)
 *   <prefix>cache:size                  hash: entry key → bytes counted
 *   <prefix>cache:bytes                 the byte total of the entries in the zset
 *
 * Entry value: a 4-byte big-endian header length, the JSON header (created, stream, content
 * type, usage, latency), then the body bytes as the cache stores them today (an SSE text for a
 * stream, replayed as it is). The workspace is in the Valkey key as well as in the hashed cache
 * key: an entry is never read across workspaces.
 *
 * Bounds: `max_entries` and `max_bytes` hold over all hosts. Every write runs one script that
 * forgets entries whose TTL passed, stores the entry, and evicts the entries closest to their
 * expiry until the totals fit (with one `max_age` that is the oldest first, as in LMDB).
 *
 * Read-your-writes: a write is sent in the background; until Valkey has answered it, the entry is
 * also held in memory and this host reads it from there (no round trip), so an answer just stored
 * is a hit for the next identical request on this host. Other hosts see it once the write lands.
 *
 * Faults: a lookup that cannot reach Valkey is a miss and a write is skipped; each counts in
 * `gateway_shared_state_faults_total{kind="cache"}` and an outage logs one warning. ioredis
 * reconnects by itself, so caching resumes when Valkey is back, without a restart.
 */
import type { Redis } from 'ioredis';
import type { Distributed, Outage } from '../../core/index.js';
import type { CacheEntry, StoreLimits } from './entry-store.js';

/** Fixed cost counted per entry on top of its value (key, index rows). */
const ROW_OVERHEAD = 160;
/** Entries evicted at most per write: bounds how long one script runs. */
const EVICT_BATCH = 500;

interface Header {
  created: number;
  stream: boolean;
  content_type: string;
  usage: CacheEntry['usage'];
  latency_ms: number;
}

/**
 * KEYS: entry, expiry zset, size hash, byte total. ARGV: value, ttl ms, now ms, size, max entries,
 * max bytes, evict batch. Returns the number of entries evicted.
 */
const WRITE_SCRIPT = `
local now = tonumber(ARGV[3])
local size = tonumber(ARGV[4])
local maxEntries = tonumber(ARGV[5])
local maxBytes = tonumber(ARGV[6])
local batch = tonumber(ARGV[7])
local function forget(k)
  local s = redis.call('HGET', KEYS[3], k)
  if s then redis.call('DECRBY', KEYS[4], s) redis.call('HDEL', KEYS[3], k) end
  redis.call('ZREM', KEYS[2], k)
end
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, batch)) do forget(k) end
forget(KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
local bytes = redis.call('INCRBY', KEYS[4], size)
local n = redis.call('ZCARD', KEYS[2])
local evicted = 0
while (n > maxEntries or bytes > maxBytes) and evicted < batch do
  local first = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #first == 0 then break end
  forget(first[1])
  redis.call('DEL', first[1])
  bytes = tonumber(redis.call('GET', KEYS[4]) or '0')
  n = n - 1
  evicted = evicted + 1
end
return evicted
`;

interface CacheCommands {
  cacheWrite(entry: string, expiry: string, sizes: string, bytes: string, value: Buffer, ttl: number, now: number, size: number, maxEntries: number, maxBytes: number, batch: number): Promise<number>;
}

/** The framed value of an entry. */
export function encodeEntry(entry: CacheEntry): Buffer {
  const header: Header = { created: entry.created, stream: entry.stream, content_type: entry.content_type, usage: entry.usage, latency_ms: entry.latency_ms };
  const head = Buffer.from(JSON.stringify(header));
  const out = Buffer.allocUnsafe(4 + head.length + entry.body.byteLength);
  out.writeUInt32BE(head.length, 0);
  head.copy(out, 4);
  out.set(entry.body, 4 + head.length);
  return out;
}

/** The entry of a framed value; undefined for bytes this code did not write. */
export function decodeEntry(value: Buffer): CacheEntry | undefined {
  if (value.length < 4) return undefined;
  const length = value.readUInt32BE(0);
  if (4 + length > value.length) return undefined;
  let header: Header;
  try {
    header = JSON.parse(value.toString('utf8', 4, 4 + length)) as Header;
  } catch {
    return undefined;
  }
  if (typeof header.created !== 'number' || typeof header.stream !== 'boolean' || typeof header.content_type !== 'string') return undefined;
  return { ...header, body: value.subarray(4 + length) };
}

export class SharedEntries {
  readonly #redis: Redis & CacheCommands;
  readonly #distributed: Distributed;
  readonly #limits: StoreLimits;
  readonly #outage: Outage;
  readonly #expiry: string;
  readonly #sizes: string;
  readonly #bytes: string;
  #closed = false;
  readonly #pending = new Set<Promise<unknown>>();
  /** Entries sent but not acknowledged yet, by cache key (read-your-writes on this host). */
  readonly #unsettled = new Map<string, CacheEntry>();

  /** `outage` is shared with the vector feed: one warning per Valkey outage for the whole cache. */
  constructor(distributed: Distributed, limits: StoreLimits, outage: Outage) {
    this.#distributed = distributed;
    const redis = distributed.redis as Redis & Partial<CacheCommands>;
    // ioredis sends it by SHA and reloads it on NOSCRIPT (a restarted Valkey has forgotten it).
    if (redis.cacheWrite === undefined) redis.defineCommand('cacheWrite', { numberOfKeys: 4, lua: WRITE_SCRIPT });
    this.#redis = redis as Redis & CacheCommands;
    this.#limits = limits;
    this.#outage = outage;
    this.#expiry = distributed.key('cache:expiry');
    this.#sizes = distributed.key('cache:size');
    this.#bytes = distributed.key('cache:bytes');
  }

  /** The Valkey key of an entry (the workspace in clear, so an operator can see and drop a tenant's entries). */
  keyOf(workspace: string, key: string): string {
    return this.#distributed.key(`cache:e:${workspace}:${key}`);
  }

  /** The entry under `key` in `workspace` if it was stored after `notBefore` (ms); a miss when Valkey cannot answer. */
  async fresh(workspace: string, key: string, notBefore: number): Promise<CacheEntry | undefined> {
    if (this.#unsettled.size > 0) {
      // The cache key hashes the workspace in: a key names one workspace's entry only.
      const mine = this.#unsettled.get(key);
      if (mine !== undefined && mine.created > notBefore) return mine;
    }
    if (!this.#outage.attempt()) {
      this.#outage.skipped();
      return undefined;
    }
    let value: Buffer | null;
    try {
      value = await this.#redis.getBuffer(this.keyOf(workspace, key));
    } catch (err) {
      this.#outage.fault(err);
      return undefined;
    }
    this.#outage.ok();
    if (value === null) return undefined;
    const entry = decodeEntry(value);
    return entry !== undefined && entry.created > notBefore ? entry : undefined;
  }

  /** Stores (or replaces) an entry for `ttlMs`, in the background; skipped (and counted) while Valkey is away. */
  write(workspace: string, key: string, entry: CacheEntry, ttlMs: number): void {
    if (this.#closed || ttlMs <= 0) return;
    if (!this.#outage.attempt()) return this.#outage.skipped();
    const value = encodeEntry(entry);
    const size = value.length + ROW_OVERHEAD;
    const { max_entries, max_bytes } = this.#limits;
    this.#unsettled.set(key, entry);
    const done = this.#redis
      .cacheWrite(this.keyOf(workspace, key), this.#expiry, this.#sizes, this.#bytes, value, Math.ceil(ttlMs), Date.now(), size, max_entries, max_bytes, EVICT_BATCH)
      .then(
        () => this.#outage.ok(),
        (err: unknown) => this.#outage.fault(err),
      )
      .finally(() => {
        if (this.#unsettled.get(key) === entry) this.#unsettled.delete(key);
      });
    this.#pending.add(done);
    void done.finally(() => this.#pending.delete(done));
  }

  /** Stops writing and waits for writes already sent. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pending]);
  }
}
