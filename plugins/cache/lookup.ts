/**
 * The lookup, once per upstream attempt: work out whether the cache applies, build the key, and
 * answer from the cache when an entry is fresh.
 *
 *   simple     exact key ─ fresh entry? ─▶ HIT (reply)          : MISS
 *   semantic   exact key ─ fresh entry? ─▶ HIT (reply)
 *              embed the prompt ─ failed? ─▶ SEMANTIC MISS
 *              best vector of the partition ≥ threshold, entry fresh? ─▶ SEMANTIC HIT : SEMANTIC MISS
 *   force refresh                          ─▶ REFRESH (no lookup; the answer replaces the entry)
 *   a miss whose key is in flight          ─▶ wait for that call's answer ─▶ HIT (see flights.ts)
 *
 * On the embedded store the simple path is synchronous (one hash, one memory-mapped read); only
 * the embeddings call makes a semantic lookup asynchronous. In distributed mode the entry is one
 * Valkey GET (a miss when Valkey cannot answer).
 */
import { performance } from 'node:perf_hooks';
import { actingWorkspace, headerString, PASS, reply, type GatewayApp, type GatewayContext, type Reply, type Step, type UpstreamAttempt } from '../../core/index.js';
import { cacheKey, keyBody, partitionKey, type KeyParts } from './key.js';
import { semanticInput } from './prompt-text.js';
import { EntryStore, type CacheEntry } from './entry-store.js';
import type { SharedEntries } from './shared-entries.js';
import type { SemanticIndex } from './semantic-index.js';
import type { Embed } from './embedder.js';
import type { CacheOptions } from './schema.js';
import type { CacheState } from './state.js';
import type { Flights, Flight } from './flights.js';

export interface Semantic {
  index: SemanticIndex;
  embed: Embed;
  threshold: number;
  /** Adds the vector of an entry just stored: to this host's index, and in distributed mode to every host's. */
  remember(pid: string, key: string, created: number, ttlMs: number, vector: Float32Array): void;
}

/** Where entries live: LMDB (synchronous reads), or Valkey in distributed mode. */
export type Entries = EntryStore | SharedEntries;

export interface LookupDeps {
  app: GatewayApp;
  options: CacheOptions;
  entries: Entries;
  /** Undefined when no embeddings target is configured: semantic mode then matches exactly. */
  semantic: Semantic | undefined;
  /** Undefined when `single_flight` is off. */
  flights: Flights | undefined;
}

/** Failed leaders a request waits behind before it goes upstream on its own. */
const MAX_FOLLOWS = 2;

/** How many stale candidates a semantic lookup may discard before calling it a miss. */
const MAX_STALE_CANDIDATES = 3;

const isTrue = (v: string | undefined): boolean => v !== undefined && v.trim().toLowerCase() === 'true';

/** The mode and max age for this request: the routing config's `cache` block, else the plugin's defaults. */
function settingsOf(ctx: GatewayContext, options: CacheOptions): { mode: 'simple' | 'semantic'; maxAge: number } | undefined {
  const block = ctx.plan?.cache;
  if (block !== undefined) return { mode: block.mode, maxAge: block.max_age ?? options.default_max_age };
  if (options.default_mode === 'off') return undefined;
  return { mode: options.default_mode, maxAge: options.default_max_age };
}

/** The cached answer as the upstream would have sent it. */
export function replay(entry: CacheEntry): Reply {
  const body = Buffer.from(entry.body.buffer, entry.body.byteOffset, entry.body.byteLength);
  const headers: Record<string, string> = { 'content-type': entry.content_type };
  if (entry.stream) headers['cache-control'] = 'no-cache';
  return reply(200, body, headers);
}

export function createLookup(deps: LookupDeps): (ctx: GatewayContext, attempt: UpstreamAttempt) => Step | Promise<Step> {
  const { app, options, entries, semantic, flights } = deps;
  const maxWaitMs = options.single_flight_max_wait_ms;
  // Decided once: the LMDB store answers synchronously, the shared one with a promise.
  const source: { sync: true; store: EntryStore } | { sync: false; store: SharedEntries } =
    entries instanceof EntryStore ? { sync: true, store: entries } : { sync: false, store: entries };
  let warned = false;

  /** A config asks for semantic caching but the plugin has no embeddings target: say so once. */
  function warnNoEmbedder(): void {
    if (warned) return;
    warned = true;
    app.log.warn('cache: a config asks for semantic mode but the plugin has no `semantic` options; matching exactly');
  }

  function hit(ctx: GatewayContext, state: CacheState, entry: CacheEntry, status: string): Reply {
    state.hit = true;
    state.recording = false;
    ctx.cacheStatus = status;
    if (state.flight !== undefined) {
      // A retry of a leader found an entry after all (another host stored it): its followers take
      // it too if it is the exact one (a semantic match is for this request's words only).
      flights!.settle(state.flight, status === 'HIT' ? entry : undefined);
      state.flight = undefined;
    }
    // Debug level: a line per hit on stderr costs more than the hit itself at high rates (the
    // bench measured it); the request log record carries the cache status of every request.
    app.log.debug('cache hit', {
      requestId: ctx.id,
      status,
      saved_tokens: entry.usage.total_tokens,
      saved_ms: Math.round(entry.latency_ms),
    });
    return replay(entry);
  }

  /**
   * A miss: lead the key's flight, or follow the one in the air. A forced refresh and `max_age: 0`
   * want an answer of their own, so they neither lead nor follow.
   */
  function missed(ctx: GatewayContext, state: CacheState, status: string): Step | Promise<Step> {
    ctx.cacheStatus = status;
    if (flights === undefined || state.refresh || state.maxAgeMs <= 0 || state.flight !== undefined) return;
    const flight = flights.get(state.key);
    if (flight === undefined) {
      state.flight = flights.lead(state.key);
      return;
    }
    return follow(ctx, state, flights, flight);
  }

  /**
   * Waits for the leader's entry. A leader that failed hands over: the first follower to wake
   * leads, the others follow it; after a second failed leader in a row they stop queueing behind
   * failures and go upstream on their own. A leader that outlasts the wait is stuck: the follower
   * that gives up on it leads a fresh flight, so later requests do not queue behind it either.
   */
  async function follow(ctx: GatewayContext, state: CacheState, all: Flights, first: Flight): Promise<Step> {
    const start = performance.now();
    const deadline = start + maxWaitMs;
    let flight = first;
    for (let followed = 1; ; followed++) {
      const entry = await flight.wait(ctx, deadline - performance.now());
      if (entry !== undefined && entry.stream === state.stream) {
        ctx.set('cacheWaitMs', Math.round((performance.now() - start) * 1000) / 1000);
        return hit(ctx, state, entry, 'HIT');
      }
      if (ctx.aborted) return;
      const next = all.get(state.key);
      if (!flight.settled) {
        // Out of patience with a stuck leader: go upstream, as the leader of later requests.
        if (next === flight) state.flight = all.lead(state.key);
        return;
      }
      if (next === undefined) {
        // The first follower to wake takes over from the failed leader.
        state.flight = all.lead(state.key);
        return;
      }
      if (followed >= MAX_FOLLOWS) return;
      flight = next;
    }
  }

  async function semanticLookup(ctx: GatewayContext, state: CacheState, sem: Semantic, notBefore: number): Promise<Step> {
    // A fallback attempt reuses the vector of the first: the prompt did not change.
    state.vector ??= await sem.embed(state.text!);
    if (state.vector === undefined) return missed(ctx, state, 'SEMANTIC MISS');
    for (let tries = 0; tries < MAX_STALE_CANDIDATES; tries++) {
      const match = sem.index.search(state.partition!, state.vector, sem.threshold, notBefore);
      if (match === undefined) break;
      // Read under the asking workspace: a vector can only name an entry of its own workspace.
      const entry = await entries.fresh(state.workspace, match.key, notBefore);
      // The entry was evicted or replaced since: its vector is stale, forget it and look again.
      if (entry === undefined || entry.created !== match.created) {
        sem.index.drop(state.partition!, match.key, match.created);
        continue;
      }
      if (entry.stream !== state.stream) break; // cannot happen (stream is in the partition); never replay the wrong mode
      return hit(ctx, state, entry, 'SEMANTIC HIT');
    }
    return missed(ctx, state, 'SEMANTIC MISS');
  }

  /** What the exact entry (or its absence) means for this request. */
  function decide(ctx: GatewayContext, state: CacheState, entry: CacheEntry | undefined, notBefore: number, semanticMode: boolean): Step | Promise<Step> {
    if (entry !== undefined && entry.stream === state.stream) return hit(ctx, state, entry, 'HIT');
    if (state.partition !== undefined && semantic !== undefined) return semanticLookup(ctx, state, semantic, notBefore);
    if (semanticMode && semantic === undefined) warnNoEmbedder();
    return missed(ctx, state, 'MISS');
  }

  return function cacheLookup(ctx: GatewayContext, attempt: UpstreamAttempt): Step | Promise<Step> {
    // Nothing to cache for this request (no cache config; not a model call): none of this
    // plugin's later hooks need to run for it. The config is the request's, the same at every attempt.
    if (ctx.route.kind !== 'model' || ctx.body === undefined) return PASS;
    const settings = settingsOf(ctx, options);
    if (settings === undefined) return PASS;
    const target = attempt.target;
    const body = keyBody(ctx.body, target.overrideParams);
    const stream = ctx.wantsStream;
    const parts: KeyParts = {
      workspace: actingWorkspace(app, ctx),
      route: ctx.route.name,
      provider: target.provider,
      host: target.customHost ?? '',
      model: typeof body.model === 'string' ? body.model : '',
      namespace: headerString(ctx.headers, 'x-gateway-cache-namespace') ?? null,
      stream,
    };
    let key: string;
    let input = settings.mode === 'semantic' && semantic !== undefined ? semanticInput(ctx.route.name, body) : undefined;
    let partition: string | undefined;
    try {
      key = cacheKey(parts, body);
      if (input !== undefined) partition = partitionKey(parts, input.blanked);
    } catch (err) {
      // A body the key cannot describe (absurdly deep JSON) is simply not cached.
      ctx.log.debug('cache key failed', { err });
      return;
    }
    if (partition === undefined) input = undefined;
    const previous = ctx.get('cache');
    // A retry of the same call keeps leading its flight; a fallback to another target (another key)
    // gives it up, so the followers do not wait for an answer of another key.
    let flight = previous?.flight;
    if (flight !== undefined && previous!.key !== key) {
      flights!.settle(flight, undefined);
      flight = undefined;
    }
    const state: CacheState = {
      key,
      workspace: parts.workspace,
      maxAgeMs: settings.maxAge * 1000,
      stream,
      refresh: isTrue(headerString(ctx.headers, 'x-gateway-cache-force-refresh')),
      hit: false,
      flight,
      partition,
      text: input?.text,
      vector: previous?.partition === partition ? previous?.vector : undefined,
      recording: false,
      heads: 0,
      contentType: 'application/json',
      events: [],
      bytes: 0,
      usageData: undefined,
      body: undefined,
    };
    ctx.set('cache', state);
    if (state.refresh) {
      ctx.cacheStatus = 'REFRESH';
      return;
    }
    // A plugin checks this request's answer as it streams: a stored stream would go out unseen.
    if (stream && ctx.checksAnswer) {
      ctx.cacheStatus = 'MISS';
      return;
    }
    // Strictly newer than this: max_age 0 never hits, max_age 1 expires an entry after one second.
    const notBefore = Date.now() - settings.maxAge * 1000;
    const semanticMode = settings.mode === 'semantic';
    if (source.sync) return decide(ctx, state, source.store.fresh(parts.workspace, key, notBefore), notBefore, semanticMode);
    return source.store.fresh(parts.workspace, key, notBefore).then((entry) => decide(ctx, state, entry, notBefore, semanticMode));
  };
}
