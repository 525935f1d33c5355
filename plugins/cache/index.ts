/**
 * The `cache` plugin: answers repeated model calls from LMDB (or, in distributed mode, from
 * Valkey, shared by every host), exactly or by meaning.
 *
 * It applies when the routing config has `cache: {mode: simple|semantic, max_age}` (or the
 * plugin's `default_mode` is not `off`), on model routes only. The answer says what happened in
 * `x-gateway-cache-status`: HIT, MISS, REFRESH, SEMANTIC HIT, SEMANTIC MISS, or DISABLED.
 *
 *   client ─▶ … ─▶ router ─▶ onUpstreamRequest ── fresh entry ──▶ reply (stands in for the upstream)
 *                                  │ miss
 *                                  ▼
 *                               upstream ─▶ 2xx answer ─▶ client
 *                                               └─ recorded ─▶ onResponseEnd ─▶ LMDB or Valkey (async, bounded)
 *
 * Concurrent identical misses make one upstream call (single-flight, flights.ts): the others wait
 * for its answer and replay it as a HIT (`cache_wait_ms` in their log record).
 *
 * Request headers: `x-gateway-cache-namespace` (part of the key: separates entries of one
 * workspace), `x-gateway-cache-force-refresh: true` (skip the lookup, store the new answer).
 * Entries are keyed by workspace, route, target, model and canonical body, and never shared
 * across workspaces. A streamed request replays only a streamed entry, a plain one only a plain
 * one (`stream` is part of the key). Hits are logged with the tokens and time they saved.
 *
 * @example
 *   pipeline:
 *     - auth
 *     - config-strategy
 *     - cache:
 *         semantic: {embeddings_url: http://127.0.0.1:9000/v1/embeddings, model: text-embedding-3-small, threshold: 0.9}
 */
import { checkUpstreamUrl, definePlugin, OPERATOR_URL_POLICY } from '../../core/index.js';
import { cacheOptionsSchema, type CacheOptions } from './schema.js';
import { embeddedStores, sharedStores } from './stores.js';
import { createLookup } from './lookup.js';
import { createRecorder } from './recorder.js';
import { Flights } from './flights.js';

export default definePlugin<CacheOptions>({
  name: 'cache',
  configSchema: cacheOptionsSchema,
  async setup(app, options) {
    if (options.semantic !== undefined) {
      // The operator's embeddings server may sit on loopback or a private network; a link-local or
      // metadata address never makes sense and refuses to boot.
      const refused = checkUpstreamUrl(options.semantic.embeddings_url, OPERATOR_URL_POLICY, 'semantic.embeddings_url');
      if (refused !== null) throw refused;
    }
    const distributed = app.store.distributed;
    const stores = distributed === undefined ? embeddedStores(app, options) : await sharedStores(app, options, distributed);
    const { entries, semantic } = stores;
    app.log.info('cache ready', stores.describe());

    const flights = options.single_flight ? new Flights() : undefined;
    const recorder = createRecorder({ entries, semantic, maxEntryBytes: options.max_entry_bytes, flights });
    return {
      onUpstreamRequest: createLookup({ app, options, entries, semantic, flights }),
      onUpstreamResponse: recorder.onUpstreamResponse,
      onResponseHeaders: recorder.onResponseHeaders,
      onResponseChunk: recorder.onResponseChunk,
      onResponseBody: recorder.onResponseBody,
      onResponseEnd: recorder.onResponseEnd,
      onDone: recorder.onDone,
      close: () => stores.close(),
    };
  },
});
