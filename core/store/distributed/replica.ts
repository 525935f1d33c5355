/**
 * Distributed mode's control plane: PostgreSQL is the authority, and every host's LMDB store is a
 * replica of it, so every synchronous read (Collection.get/getBy/cached/cachedBy/list) works as on
 * the embedded default and the hot path never queries PostgreSQL.
 *
 *   admin write ─▶ writeScope: mutex (this process) ─▶ PG: BEGIN; pg_advisory_xact_lock (all hosts)
 *     ─▶ catch up the replica ─▶ handler (writes LMDB as today; each write journaled with its
 *     before-image) ─▶ upsert the journal into gw_records with fresh seqs; NOTIFY; COMMIT ─▶ answer
 *   PG fails anywhere ─▶ before-images restored locally ─▶ 503 control_plane_unavailable
 *
 *   every host: LISTEN (a notice arrives only once its data is committed) + a poll every 500 ms
 *     ─▶ catch up: rows WHERE seq > local seq, in seq order ─▶ LMDB (record, indexes, version bump
 *        so memory caches drop) and the local seq, in one transaction
 *
 * Why writes serialize on one lock: admin writes are rare, and with the replica caught up under
 * the lock the local unique indexes (slugs, emails, key hashes) are authoritative across hosts,
 * and seqs are taken in commit order, so a reader that saw seq n has seen every change before it.
 *
 * Writes made outside a scope (the hot path: a key marked exhausted, usage alerts, the audit of a
 * refused call made after its scope) go to an outbox, shipped by a background flusher under the
 * same lock. They are at-least-once while the process lives, last writer wins per record; a kill -9
 * loses at most the last FLUSH_MS of them, and while PostgreSQL is down the outbox keeps up to
 * OUTBOX_MAX records (further ones stay local only, counted and logged).
 *
 * Why no AsyncLocalStorage for "the current scope": on Node 20 it slows every promise of the
 * process (see companion.ts). Scopes are serialized per process by the mutex, so one "current
 * journal" per replica is enough; a hot-path write landing while a scope runs rides with it.
 */
import type pg from 'pg';
import type { Collection, WriteObserver } from '../collection.js';
import type { Store } from '../store.js';
import type { Logger } from '../../logger.js';
import { Errors } from '../../errors.js';
import type { Distributed, PgModule } from './connections.js';
import { runMigrations } from './migrate.js';
import {
  CHANGES_AFTER,
  CONTROL_PLANE_CHANNEL,
  CONTROL_PLANE_COMPONENT,
  CONTROL_PLANE_STEPS,
  CONTROL_PLANE_WRITE_LOCK,
  PURGE_TOMBSTONES,
  UPSERT_RECORDS,
} from './control-plane-schema.js';

/** The pseudo-collection of replicated meta settings (the organisation and default workspace ids). */
const META = '_meta';
const REPLICATED_META = new Set(['organisation_id', 'default_workspace_id']);
const SEQ_KEY = ['replica', 'seq'];
const CLUSTER_KEY = ['replica', 'cluster_id'];

/** Rows per catch-up query. */
const PAGE = 1000;
/** Safety-net poll, besides LISTEN/NOTIFY. */
const POLL_MS = 500;
/** A connection attempt to PostgreSQL gives up after this: admin writes answer 503 quickly. */
const CONNECT_MS = 1500;
/** The longest wait for the write lock (another host's scope), server side. */
const LOCK_WAIT_MS = 5000;
/** Any one query gives up after this, client side (a server that stopped answering). */
const QUERY_MS = LOCK_WAIT_MS + 3000;
/** Misses (an unknown key presented) ask PostgreSQL at most once per this interval, per process. */
const FRESHEN_GAP_MS = 50;
/** A miss waits at most this long for its catch-up (PostgreSQL unreachable). */
const FRESHEN_WAIT_MS = 1000;
/** Outbox: how soon a hot-path write is shipped, and the retry interval while PostgreSQL is down. */
const FLUSH_MS = 100;
const FLUSH_RETRY_MS = 1000;
const OUTBOX_MAX = 100_000;
/**
 * Deletes stay in PostgreSQL as tombstones this long, then are purged (hourly). A host that was
 * away longer reloads its replica from PostgreSQL at start.
 */
export const TOMBSTONE_KEEP_MS = 7 * 86_400_000;
const PURGE_EVERY_MS = 3_600_000;

interface Change {
  collection: string;
  id: string;
  before?: unknown;
  after?: unknown;
  /** Written by an asynchronous put/remove: read it back after `root.flushed`. */
  async: boolean;
}

interface Row {
  collection: string;
  id: string;
  data: unknown;
  seq: string;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * Refuses distributed mode without `GATEWAY_MASTER_KEY`: a secret sealed on one host must open on
 * every other, which a key generated into one host's data dir cannot do.
 */
export function requireSharedMasterKey(env: NodeJS.ProcessEnv): void {
  const key = env.GATEWAY_MASTER_KEY;
  if (key === undefined || key.length === 0) {
    throw new Error(
      'distributed mode needs GATEWAY_MASTER_KEY (32+ characters, the same on every host): provider secrets sealed on one host must open on the others, and a key generated into one data dir cannot',
    );
  }
}

/**
 * A checked-out client whose server goes away between queries (the handler runs while the scope
 * holds it) emits 'error'; unheard, that would end the process. The failing query reports it.
 */
const ignoreError = (): void => undefined;

async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  client.on('error', ignoreError);
  return client;
}

/** Back to the pool, or destroyed when `err` says the connection may be broken. */
function release(client: pg.PoolClient, err?: unknown): void {
  client.removeListener('error', ignoreError);
  client.release(err === undefined ? undefined : err instanceof Error ? err : new Error(String(err)));
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const keyOf = (collection: string, id: string): string => `${collection}\u0000${id}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export interface ReplicaStartOptions {
  /** LISTEN + poll + outbox flusher; off for a one-shot CLI command. Default true. */
  feed?: boolean;
}

export interface ReplicaStatus {
  /** The highest seq applied locally. */
  seq: number;
  /** False after a failed query to PostgreSQL, until one succeeds. */
  reachable: boolean;
  /** Hot-path writes waiting to be shipped. */
  outbox: number;
  /** Hot-path writes left local-only because the outbox was full. */
  dropped: number;
}

export class ControlPlaneReplica {
  readonly #store: Store;
  readonly #log: Logger;
  readonly #url: string;
  readonly #pool: pg.Pool;
  readonly #pg: PgModule;
  readonly #collections = new Map<string, Collection<{ id: string }>>();
  /** The journal of the running write scope, if one runs. */
  #journal: Map<string, Change> | undefined;
  #outbox = new Map<string, Change>();
  #dropped = 0;
  #mutex: Promise<void> = Promise.resolve();
  #inflight: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #freshening: Promise<void> | undefined;
  #lastFreshen = -Infinity;
  #reachable = true;
  #closed = false;
  #listener: pg.Client | undefined;
  #poll: NodeJS.Timeout | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #purge: NodeJS.Timeout | undefined;

  constructor(store: Store, distributed: Distributed, log: Logger) {
    this.#store = store;
    this.#log = log;
    this.#url = distributed.postgresConfig.url;
    this.#pg = distributed.pgModule;
    // A pool of its own: short connect and query timeouts (a write answers 503 fast, never hangs),
    // and the feed and the writes never wait behind the logs' queries.
    this.#pool = new this.#pg.Pool({ connectionString: this.#url, max: 4, connectionTimeoutMillis: CONNECT_MS, query_timeout: QUERY_MS, idleTimeoutMillis: 30_000 });
    this.#pool.on('error', () => {
      // An idle client lost its server: the next query reconnects; the failing path logs.
    });
    for (const c of Object.values(store.c) as Array<Collection<{ id: string }>>) this.#collections.set(c.name, c);
  }

  /** The highest seq applied to this replica. */
  get seq(): number {
    return (this.#store.meta.get(SEQ_KEY) as number | undefined) ?? 0;
  }

  status(): ReplicaStatus {
    return { seq: this.seq, reachable: this.#reachable, outbox: this.#outbox.size, dropped: this.#dropped };
  }

  /**
   * Migrates, checks what the data dir holds, loads every change after the local seq (all of
   * them for a fresh data dir), then follows the change feed.
   */
  async start(options: ReplicaStartOptions = {}): Promise<void> {
    await runMigrations(this.#pool, CONTROL_PLANE_COMPONENT, CONTROL_PLANE_STEPS, this.#log);
    const { rows } = await this.#pool.query<{ cluster_id: string; horizon: string }>('SELECT cluster_id, horizon FROM gw_control_plane');
    this.#adopt(rows[0]!.cluster_id, Number(rows[0]!.horizon));
    const observer: WriteObserver = (collection, id, async) => this.#observe(collection, id, async);
    for (const c of this.#collections.values()) c.observe(observer);
    await this.#catchUpWith(this.#pool);
    if (options.feed === false) return;
    this.#listen(0);
    this.#poll = setInterval(() => void this.catchUp().catch(() => undefined), POLL_MS);
    this.#poll.unref();
    // Every host purges on its own clock; a purge finding nothing to do costs one indexed query.
    this.#purge = setInterval(() => void this.purgeTombstones().catch(() => undefined), PURGE_EVERY_MS);
    this.#purge.unref();
  }

  /**
   * Deletes tombstones older than `keepMs` from PostgreSQL and raises the horizon: a replica
   * below it (away longer than that) reloads at its next start. Returns how many were purged.
   */
  async purgeTombstones(keepMs = TOMBSTONE_KEEP_MS): Promise<number> {
    const { rows } = await this.#pool.query<{ purged: string }>(PURGE_TOMBSTONES, [keepMs]);
    return Number(rows[0]?.purged ?? 0);
  }

  /**
   * The data dir's replica belongs to this database, or is made to. A dir with embedded-mode data
   * (written before distributed mode, never a replica) is refused: its records are not in
   * PostgreSQL, and silently hiding or overwriting them would lose them.
   */
  #adopt(cluster: string, horizon: number): void {
    const { meta, root } = this.#store;
    const local = meta.get(CLUSTER_KEY) as string | undefined;
    if (local === cluster) {
      if (this.seq >= horizon) return;
      // Away longer than tombstones are kept: a delete it never saw may be gone from PostgreSQL.
      this.#log.warn('the local replica is older than the purged deletes; reloading it from PostgreSQL', { seq: this.seq, horizon });
    } else if (local === undefined) {
      const used = meta.get('organisation_id') !== undefined || [...this.#collections.values()].some((c) => c.count() > 0);
      if (used) {
        throw new Error(
          `the data dir ${this.#store.path} holds embedded-mode data, which is not in PostgreSQL; distributed mode keeps a replica of PostgreSQL in its data dir: point store.path (GATEWAY_DATA_DIR) at an empty directory`,
        );
      }
    } else {
      // Another database (a new one, or a restored one): this replica's records are not its own.
      this.#log.warn('the local replica was loaded from another PostgreSQL database; reloading it');
    }
    root.transactionSync(() => {
      for (const c of this.#collections.values()) c.clearReplica();
      for (const key of REPLICATED_META) meta.removeSync(key);
      meta.putSync(SEQ_KEY, 0);
      meta.putSync(CLUSTER_KEY, cluster);
    });
  }

  /**
   * Brings the replica up to PostgreSQL. Coalesced: one query in flight; a call made while one
   * runs gets a second one that starts after it (so it sees what was committed before the call).
   */
  catchUp(): Promise<void> {
    if (this.#inflight === undefined) {
      this.#inflight = this.#catchUpWith(this.#pool).finally(() => (this.#inflight = undefined));
      return this.#inflight;
    }
    this.#queued ??= this.#inflight
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.catchUp();
      });
    return this.#queued;
  }

  /**
   * For a miss on the hot path (an API key, a virtual key, a config unknown here): resolves after
   * a catch-up that started after the call, so a record committed through another host before
   * the request is found. All waiters share one query, and misses query at most once per
   * FRESHEN_GAP_MS, so a flood of random bad keys is not a flood of queries. Never rejects; waits
   * at most FRESHEN_WAIT_MS (PostgreSQL unreachable: the miss stands).
   */
  freshen(): Promise<void> {
    if (this.#freshening === undefined) {
      // Always through a timer, even with no wait: callers joining this round must have called
      // before its catch-up starts.
      const wait = Math.max(0, this.#lastFreshen + FRESHEN_GAP_MS - performance.now());
      this.#freshening = sleep(wait).then(() => {
        this.#freshening = undefined;
        this.#lastFreshen = performance.now();
        return this.catchUp();
      });
    }
    return Promise.race([this.#freshening.catch(() => undefined), sleep(FRESHEN_WAIT_MS)]);
  }

  /** Records `meta[key]` (one of the replicated settings) as changed by the running scope. */
  noteMeta(key: string): void {
    if (!REPLICATED_META.has(key)) throw new Error(`meta key ${key} is not replicated`);
    const journal = this.#journal;
    const k = keyOf(META, key);
    if (journal === undefined || journal.has(k)) return;
    journal.set(k, { collection: META, id: key, before: this.#read(META, key), async: false });
  }

  /**
   * Runs an admin write: see the file header. `fn`'s own error is rethrown after its writes (an
   * audit record of a refused call) are shipped; a PostgreSQL failure is 503
   * `control_plane_unavailable` with nothing changed on any host.
   */
  async writeScope<R>(fn: () => R | Promise<R>): Promise<R> {
    const unlock = await this.#lock();
    try {
      if (this.#closed) throw Errors.controlPlaneUnavailable('The gateway is shutting down; the change was not saved.');
      const client = await this.#begin();
      const journal = new Map<string, Change>();
      this.#journal = journal;
      let result: R | undefined;
      let failure: unknown;
      let failed = false;
      try {
        result = await fn();
      } catch (err) {
        failed = true;
        failure = err;
      } finally {
        this.#journal = undefined;
      }
      await this.#commit(client, [...journal.values()], undefined);
      if (failed) throw failure;
      return result as R;
    } finally {
      unlock();
    }
  }

  /** An in-process FIFO mutex: scopes and outbox flushes of this process, one at a time. */
  #lock(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const previous = this.#mutex;
    this.#mutex = previous.then(() => mine);
    return previous.then(() => release);
  }

  /**
   * A client in a transaction holding the write lock, with the replica caught up. One retry when
   * the failure came before anything ran: a pooled connection may be dead after a restart.
   */
  async #begin(): Promise<pg.PoolClient> {
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient | undefined;
      try {
        client = await checkout(this.#pool);
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`);
        await client.query('SELECT pg_advisory_xact_lock($1)', [CONTROL_PLANE_WRITE_LOCK]);
        await this.#catchUpWith(client);
        return client;
      } catch (err) {
        if (client) release(client, err);
        const lockTimeout = (err as { code?: string }).code === '55P03';
        if (attempt === 0 && !lockTimeout && !this.#closed) continue;
        this.#down(err);
        throw Errors.controlPlaneUnavailable(undefined, { cause: err });
      }
    }
  }

  /**
   * Ships the changes (their values as they are now in LMDB: a write rolled back locally ships
   * nothing) and commits. On failure, restores the before-images and throws 503. `keep`: records
   * whose remote rows were not applied (the outbox's, last writer wins).
   */
  async #commit(client: pg.PoolClient, changes: Change[], onFailure: (() => void) | undefined): Promise<void> {
    const shipped: Change[] = [];
    try {
      if (changes.some((c) => c.async)) await this.#store.root.flushed;
      for (const c of changes) {
        const after = this.#read(c.collection, c.id);
        if ('before' in c && same(c.before, after)) continue;
        shipped.push({ ...c, after });
      }
      let top = 0;
      if (shipped.length > 0) {
        const { rows } = await client.query<{ seq: string }>(UPSERT_RECORDS, [
          shipped.map((c) => c.collection),
          shipped.map((c) => c.id),
          shipped.map((c) => (c.after === undefined ? null : JSON.stringify(c.after))),
        ]);
        for (const r of rows) top = Math.max(top, Number(r.seq));
        await client.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, String(top)]);
      }
      await client.query('COMMIT');
      release(client);
      this.#up();
      if (top > 0) this.#advance(top);
    } catch (err) {
      release(client, err);
      this.#down(err);
      if (onFailure) onFailure();
      else this.#restore(shipped);
      throw Errors.controlPlaneUnavailable(undefined, { cause: err });
    }
  }

  /**
   * Puts the before-images back, for records still as the failed scope left them (one another
   * host changed since, applied by a catch-up, stays as it is).
   */
  #restore(changes: Change[]): void {
    if (changes.length === 0) return;
    try {
      this.#store.root.transactionSync(() => {
        for (const c of changes) if (same(this.#read(c.collection, c.id), c.after)) this.#apply(c.collection, c.id, c.before);
      });
    } catch (err) {
      this.#log.error('control plane: could not restore the local replica after a failed write', { err });
    }
  }

  #advance(seq: number): void {
    const { meta, root } = this.#store;
    root.transactionSync(() => {
      if (((meta.get(SEQ_KEY) as number | undefined) ?? 0) < seq) meta.putSync(SEQ_KEY, seq);
    });
  }

  async #catchUpWith(q: Queryable, keep?: ReadonlySet<string>): Promise<void> {
    for (;;) {
      let rows: Row[];
      try {
        ({ rows } = await q.query<Row>(CHANGES_AFTER, [this.seq, PAGE]));
      } catch (err) {
        this.#down(err);
        throw err;
      }
      this.#up();
      // A local failure (a full disk) is not PostgreSQL's: it propagates without the "unreachable" warning.
      if (rows.length > 0) this.#applyRows(rows, keep);
      if (rows.length < PAGE) return;
    }
  }

  /**
   * Applies a page in one LMDB transaction, skipping rows at or below the local seq read inside it:
   * concurrent catch-ups (the feed, a scope, another worker process on this data dir) are idempotent.
   */
  #applyRows(rows: Row[], keep: ReadonlySet<string> | undefined): void {
    const { meta, root } = this.#store;
    root.transactionSync(() => {
      const local = (meta.get(SEQ_KEY) as number | undefined) ?? 0;
      let last = local;
      for (const r of rows) {
        const seq = Number(r.seq);
        if (seq <= last) continue;
        if (keep === undefined || !keep.has(keyOf(r.collection, r.id))) this.#apply(r.collection, r.id, r.data ?? undefined);
        last = seq;
      }
      if (last > local) meta.putSync(SEQ_KEY, last);
    });
  }

  #read(collection: string, id: string): unknown {
    if (collection === META) {
      const value = this.#store.meta.get(id);
      return value === undefined ? undefined : { value };
    }
    return this.#collections.get(collection)?.get(id);
  }

  #apply(collection: string, id: string, value: unknown): void {
    if (collection === META) {
      if (!REPLICATED_META.has(id)) return;
      const v = (value as { value?: unknown } | undefined)?.value;
      if (v === undefined) this.#store.meta.removeSync(id);
      else this.#store.meta.putSync(id, v);
      return;
    }
    // A collection this gateway does not know (a newer gateway's) is skipped.
    this.#collections.get(collection)?.applyReplicated(id, (value ?? undefined) as { id: string } | undefined);
  }

  #observe(collection: Collection<{ id: string }>, id: string, async: boolean): void {
    const key = keyOf(collection.name, id);
    const journal = this.#journal;
    if (journal !== undefined) {
      const seen = journal.get(key);
      if (seen === undefined) journal.set(key, { collection: collection.name, id, before: collection.get(id), async });
      else if (async) seen.async = true;
      return;
    }
    const queued = this.#outbox.get(key);
    if (queued !== undefined) {
      if (async) queued.async = true;
      return;
    }
    if (this.#outbox.size >= OUTBOX_MAX) {
      if (this.#dropped++ === 0) this.#log.warn('control plane: outbox full while PostgreSQL is unreachable; further hot-path changes stay on this host', { max: OUTBOX_MAX });
      return;
    }
    this.#outbox.set(key, { collection: collection.name, id, async });
    this.#scheduleFlush(FLUSH_MS);
  }

  #scheduleFlush(ms: number): void {
    if (this.#flushTimer !== undefined || this.#closed) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flushing = this.flushOutbox().finally(() => (this.#flushing = undefined));
    }, ms);
    this.#flushTimer.unref();
  }

  /**
   * Ships the outbox under the write lock. Remote changes of the same records are not applied
   * first: the local change is the later one (last writer wins). On failure, the records go back
   * into the outbox and a retry is scheduled.
   */
  async flushOutbox(): Promise<void> {
    if (this.#outbox.size === 0) return;
    const unlock = await this.#lock();
    const batch = this.#outbox;
    this.#outbox = new Map();
    try {
      if (batch.size === 0) return;
      let client: pg.PoolClient | undefined;
      try {
        client = await checkout(this.#pool);
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`);
        await client.query('SELECT pg_advisory_xact_lock($1)', [CONTROL_PLANE_WRITE_LOCK]);
        await this.#catchUpWith(client, new Set(batch.keys()));
      } catch (err) {
        if (client) release(client, err);
        this.#down(err);
        throw err;
      }
      await this.#commit(client, [...batch.values()], () => undefined);
    } catch {
      for (const [k, c] of batch) if (!this.#outbox.has(k)) this.#outbox.set(k, c);
      this.#scheduleFlush(FLUSH_RETRY_MS);
    } finally {
      unlock();
    }
  }

  /** LISTEN on a connection of its own; reconnects with backoff and catches up on every (re)connect. */
  #listen(failures: number): void {
    if (this.#closed) return;
    const client = new this.#pg.Client({ connectionString: this.#url, connectionTimeoutMillis: CONNECT_MS, keepAlive: true });
    this.#listener = client;
    let retried = false;
    const retry = (): void => {
      if (retried) return;
      retried = true;
      void client.end().catch(() => undefined);
      if (this.#closed) return;
      setTimeout(() => this.#listen(failures + 1), Math.min(100 * 2 ** Math.min(failures, 4), 2000)).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (msg) => {
      if (Number(msg.payload) > this.seq) void this.catchUp().catch(() => undefined);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CONTROL_PLANE_CHANNEL}`))
      .then(() => {
        failures = 0;
        return this.catchUp();
      })
      .catch(retry);
  }

  #down(err: unknown): void {
    if (!this.#reachable || this.#closed) return;
    this.#reachable = false;
    this.#log.warn('control plane: PostgreSQL unreachable; serving from the local replica, admin writes answer 503', { error: (err as Error).message });
  }

  #up(): void {
    if (this.#reachable) return;
    this.#reachable = true;
    this.#log.info('control plane: PostgreSQL reachable again; replica caught up', { seq: this.seq });
  }

  /** Stops the feed, ships what the outbox holds (bounded wait), and closes the connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#poll);
    clearInterval(this.#purge);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    await this.#flushing;
    if (this.#outbox.size > 0) await Promise.race([this.flushOutbox(), sleep(2000)]);
    this.#closed = true;
    // The last scope (if one runs) finishes first.
    await Promise.race([this.#lock().then((unlock) => unlock()), sleep(QUERY_MS)]);
    for (const c of this.#collections.values()) c.observe(null);
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.end().catch(() => undefined);
    await Promise.race([this.#inflight?.catch(() => undefined), sleep(2000)]);
    await this.#pool.end().catch(() => undefined);
  }
}
