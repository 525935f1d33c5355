import type { Flight } from './flights.js';

/**
 * The cache's per-request state (`ctx.get('cache')`), set by the lookup for each upstream attempt
 * and read by the response hooks that record the answer.
 *
 *   onUpstreamRequest   key, partition, vector; HIT → reply (hit = true, nothing is recorded)
 *   onUpstreamResponse  recording = 2xx and the answer's mode matches the request's
 *   onResponseHeaders   a non-2xx, or a second head (a later plugin replaced the answer) → stop
 *   onResponseChunk     collect the events (streams)      onResponseBody  keep the body (plain)
 *   onResponseEnd       store, if the response ended normally; settle the flight this request leads
 *   onDone              settle the flight if nothing did (the request failed before its response ended)
 */

export interface CacheState {
  /** The exact-match key of the current attempt. */
  key: string;
  /** The acting workspace (also hashed into `key`): the shared store keys entries by it. */
  workspace: string;
  /** The request's `max_age` in ms: the TTL of the entry it stores in the shared store. */
  maxAgeMs: number;
  stream: boolean;
  /** `x-gateway-cache-force-refresh: true`: no lookup, the answer replaces the entry. */
  refresh: boolean;
  /** The answer came from the cache: nothing to record. */
  hit: boolean;
  /** The single flight this request leads (its key's first miss); settled when its answer is known. */
  flight: Flight | undefined;
  /** Semantic mode with prompt text: the partition, the text and (once embedded) its vector. */
  partition: string | undefined;
  text: string | undefined;
  vector: Float32Array | undefined;
  /** The current answer is still worth storing. */
  recording: boolean;
  /** onResponseHeaders calls seen for the current answer. */
  heads: number;
  contentType: string;
  /** Serialized SSE events, in order (streams). */
  events: string[];
  bytes: number;
  /** The data of the last event that may carry usage (streams). */
  usageData: string | undefined;
  /** The whole body (plain answers). */
  body: Buffer | undefined;
}

// Augments the module that declares ContextVars (augmenting the re-export in core/index.ts shadows
// other plugins' augmentations).
declare module '../../core/context.js' {
  interface ContextVars {
    cache: CacheState;
  }
}
