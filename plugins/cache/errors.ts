/**
 * The cache plugin's errors. None of them ever reaches a client: a cache that fails is a miss
 * (the request goes upstream), so these exist to give logs a stable `code` and keep the `cause`.
 */
import { defineError } from '../../core/index.js';

export const CacheErrors = {
  embeddingFailed: defineError(502, 'upstream_error', 'cache_embedding_failed', 'The embeddings target did not give a usable vector.'),
  writeFailed: defineError(500, 'server_error', 'cache_write_failed', 'A cache entry could not be written.'),
  keyFailed: defineError(400, 'invalid_request_error', 'cache_key_failed', 'The request body cannot be turned into a cache key.'),
};
