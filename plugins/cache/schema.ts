/**
 * Options of the `cache` plugin.
 *
 *   - cache:
 *       default_mode: off            # off | simple | semantic: used when the routing config has no `cache` block
 *       default_max_age: 3600        # seconds, when neither the config nor this names one
 *       max_entries: 10000           # bounds of the shared store; the oldest entries go first
 *       max_bytes: 268435456         # 256 MiB
 *       max_entry_bytes: 4194304     # an answer larger than this is never stored
 *       single_flight: true          # concurrent identical misses make one upstream call; the others wait for it
 *       single_flight_max_wait_ms: 60000  # past it a waiting request goes upstream itself
 *       semantic:                    # needed for `mode: semantic`; without it semantic means exact
 *         embeddings_url: http://127.0.0.1:9000/v1/embeddings
 *         api_key: sk-…
 *         model: text-embedding-3-small
 *         threshold: 0.95            # cosine similarity a hit needs
 *         timeout_ms: 2000           # past it the lookup is a SEMANTIC MISS
 *         max_per_partition: 2000    # vectors kept per workspace/route/model/namespace
 *         max_vectors: 20000         # vectors kept in memory over all partitions
 */

export interface SemanticOptions {
  embeddings_url: string;
  api_key?: string;
  model: string;
  threshold: number;
  timeout_ms: number;
  max_per_partition: number;
  max_vectors: number;
}

export interface CacheOptions {
  default_mode: 'off' | 'simple' | 'semantic';
  default_max_age: number;
  max_entries: number;
  max_bytes: number;
  max_entry_bytes: number;
  single_flight: boolean;
  single_flight_max_wait_ms: number;
  semantic?: SemanticOptions;
}

export const cacheOptionsSchema = {
  type: 'object',
  properties: {
    default_mode: { type: 'string', enum: ['off', 'simple', 'semantic'], default: 'off' },
    default_max_age: { type: 'integer', minimum: 0, default: 3600 },
    max_entries: { type: 'integer', minimum: 1, default: 10_000 },
    max_bytes: { type: 'integer', minimum: 1024, default: 256 * 1024 * 1024 },
    max_entry_bytes: { type: 'integer', minimum: 1, default: 4 * 1024 * 1024 },
    single_flight: { type: 'boolean', default: true },
    single_flight_max_wait_ms: { type: 'integer', minimum: 1, default: 60_000 },
    semantic: {
      type: 'object',
      properties: {
        embeddings_url: { type: 'string', format: 'uri', minLength: 1 },
        api_key: { type: 'string' },
        model: { type: 'string', minLength: 1 },
        threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.95 },
        timeout_ms: { type: 'integer', minimum: 1, default: 2000 },
        max_per_partition: { type: 'integer', minimum: 1, default: 2000 },
        // Namespaces are caller-chosen, so partitions are unbounded in number: this bounds memory.
        max_vectors: { type: 'integer', minimum: 1, default: 20_000 },
      },
      required: ['embeddings_url', 'model'],
      additionalProperties: false,
    },
  },
  // A semantic default without an embeddings target cannot work: refuse it at boot.
  if: { properties: { default_mode: { const: 'semantic' } }, required: ['default_mode'] },
  then: { required: ['semantic'] },
  additionalProperties: false,
};
