/**
 * Where the cache keeps its entries and vectors, chosen once at setup:
 *
 *   embedded     LMDB entries (bounded, oldest first) + a semantic index mirrored in LMDB
 *   distributed  Valkey entries with their TTL (shared by every host) + a semantic index in
 *                memory, fed from a Valkey stream every host appends to
 *
 * The lookup and the recorder see the same two things either way: `entries` and `semantic`.
 */
import { Outage, type Distributed, type GatewayApp } from '../../core/index.js';
import type { CacheOptions, SemanticOptions } from './schema.js';
import { EntryStore } from './entry-store.js';
import { SharedEntries } from './shared-entries.js';
import { SemanticIndex } from './semantic-index.js';
import { VectorFeed } from './shared-vectors.js';
import { createEmbedder } from './embedder.js';
import type { Entries, Semantic } from './lookup.js';

export interface CacheStores {
  entries: Entries;
  semantic: Semantic | undefined;
  /** For the start line. */
  describe(): Record<string, unknown>;
  close(): Promise<void>;
}

function semanticParts(app: GatewayApp, s: SemanticOptions, index: SemanticIndex): Omit<Semantic, 'remember'> {
  return { index, embed: createEmbedder(s, app.log), threshold: s.threshold };
}

export function embeddedStores(app: GatewayApp, options: CacheOptions): CacheStores {
  const root = app.store.root;
  const entries = new EntryStore(root, { max_entries: options.max_entries, max_bytes: options.max_bytes, storeFull: () => app.store.capacity.full() }, app.log);
  const s = options.semantic;
  let semantic: Semantic | undefined;
  if (s !== undefined) {
    const index = new SemanticIndex(root, { max_per_partition: s.max_per_partition, max_vectors: s.max_vectors }, app.log);
    semantic = { ...semanticParts(app, s, index), remember: (pid, key, created, _ttlMs, vector) => index.add(pid, key, created, vector) };
  }
  return {
    entries,
    semantic,
    describe: () => ({ entries: entries.count, bytes: entries.bytes, vectors: semantic?.index.size ?? 0 }),
    async close() {
      await Promise.all([entries.close(), semantic?.index.close()]);
    },
  };
}

export async function sharedStores(app: GatewayApp, options: CacheOptions, distributed: Distributed): Promise<CacheStores> {
  // One outage for entries and vectors alike: a Valkey that is down logs one warning for the cache.
  const outage = new Outage(distributed, 'cache', app.log);
  const entries = new SharedEntries(distributed, { max_entries: options.max_entries, max_bytes: options.max_bytes }, outage);
  const s = options.semantic;
  let semantic: Semantic | undefined;
  let feed: VectorFeed | undefined;
  if (s !== undefined) {
    const index = new SemanticIndex(undefined, { max_per_partition: s.max_per_partition, max_vectors: s.max_vectors }, app.log);
    const vectors = new VectorFeed(distributed, index, s.max_vectors, outage, app.log);
    await vectors.start();
    feed = vectors;
    semantic = {
      ...semanticParts(app, s, index),
      remember(pid, key, created, ttlMs, vector) {
        if (ttlMs <= 0) return; // the entry was not stored either
        const expires = created + ttlMs;
        index.add(pid, key, created, vector, expires);
        vectors.publish(pid, key, created, expires, vector);
      },
    };
  }
  return {
    entries,
    semantic,
    describe: () => ({ shared: 'valkey', vectors: semantic?.index.size ?? 0 }),
    async close() {
      await Promise.all([entries.close(), feed?.close()]);
    },
  };
}
