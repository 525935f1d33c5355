/**
 * Text → unit vector through an OpenAI-compatible embeddings endpoint (`POST …/v1/embeddings`).
 *
 * Never throws: a timeout, a refused connection, a non-2xx or a malformed answer is `undefined`,
 * which the caller turns into a SEMANTIC MISS. Failures are logged with a stable code, at `warn`
 * at most once per {@link WARN_EVERY_MS} (a down embedder must not flood the log), else `debug`.
 */
import type { Logger } from '../../core/index.js';
import { CacheErrors } from './errors.js';
import type { SemanticOptions } from './schema.js';

const WARN_EVERY_MS = 10_000;
/** An embeddings answer is a few KB to a few tens of KB; a larger one is not what we asked for. */
const MAX_ANSWER_BYTES = 4 << 20;

export type Embed = (text: string) => Promise<Float32Array | undefined>;

/** Scales a vector to length 1 (so cosine similarity is a dot product); undefined for a zero vector. */
export function normalise(values: ArrayLike<number>): Float32Array | undefined {
  let norm = 0;
  for (let i = 0; i < values.length; i++) norm += values[i]! * values[i]!;
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const inv = 1 / Math.sqrt(norm);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * inv;
  return out;
}

/** `data[0].embedding` of an OpenAI embeddings answer, when it is a non-empty array of finite numbers. */
function vectorOf(answer: unknown): number[] | undefined {
  const data = (answer as { data?: unknown } | null)?.data;
  const first: unknown = Array.isArray(data) ? data[0] : undefined;
  const embedding = (first as { embedding?: unknown } | undefined)?.embedding;
  if (!Array.isArray(embedding) || embedding.length === 0) return undefined;
  for (const n of embedding) if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  return embedding as number[];
}

/**
 * Builds the embedding function for the configured target.
 *
 * @example
 *   const embed = createEmbedder({ embeddings_url: 'http://127.0.0.1:9000/v1/embeddings', model: 'm', … }, log);
 *   const v = await embed('What is the capital of France?'); // Float32Array | undefined
 */
export function createEmbedder(options: SemanticOptions, log: Logger): Embed {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.api_key !== undefined) headers.authorization = `Bearer ${options.api_key}`;
  let lastWarn = 0;

  function fail(reason: string, cause?: unknown): undefined {
    const now = Date.now();
    const err = CacheErrors.embeddingFailed(reason, { cause });
    if (now - lastWarn >= WARN_EVERY_MS) {
      lastWarn = now;
      log.warn('cache embedding failed', { code: err.code, reason, err: cause });
    } else {
      log.debug('cache embedding failed', { code: err.code, reason });
    }
    return undefined;
  }

  return async function embed(text: string): Promise<Float32Array | undefined> {
    let status: number;
    let raw: string;
    try {
      // undici's index loads with the first embedding, not at every start (core/upstream/undici.ts).
      const { request } = await import('undici');
      const res = await request(options.embeddings_url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: options.model, input: text }),
        signal: AbortSignal.timeout(options.timeout_ms),
        headersTimeout: options.timeout_ms,
        bodyTimeout: options.timeout_ms,
      });
      status = res.statusCode;
      const length = Number(res.headers['content-length'] ?? 0);
      if (status < 200 || status >= 300 || length > MAX_ANSWER_BYTES) {
        await res.body.dump();
        return fail(status < 200 || status >= 300 ? `status ${status}` : 'answer too large');
      }
      raw = await res.body.text();
    } catch (err) {
      return fail((err as Error).name === 'TimeoutError' ? `no answer within ${options.timeout_ms} ms` : 'request failed', err);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      return fail('answer is not JSON', err);
    }
    const values = vectorOf(parsed);
    if (values === undefined) return fail('answer has no data[0].embedding');
    return normalise(values) ?? fail('embedding is a zero vector');
  };
}
