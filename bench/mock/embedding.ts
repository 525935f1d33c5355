/**
 * OpenAI embeddings (`POST /v1/embeddings`) with vectors that mean something.
 *
 * A vector is a hashed bag of words: lower-case words (punctuation stripped, a crude plural
 * stem), minus English stopwords, each hashed with FNV-1a into `dimensions` buckets, counted,
 * then L2-normalised. Two texts that share content words ("What is the capital of France?" and
 * "Tell me France's capital") are cosine-close; unrelated texts are near-orthogonal. That is
 * enough for semantic-cache tests without a model.
 */

import { openaiBadRequest, openaiDialect, openaiMissing } from './openai-errors.js';
import { ok, type JsonObject, type MockReply, type MockRequest, type Route } from './route.js';
import { estimateTokens, promptText } from './text.js';

export const DEFAULT_DIMENSIONS = 256;
/** OpenAI's largest model has 3072; the bound stops `dimensions: 1e9` from exhausting memory. */
const MAX_DIMENSIONS = 8192;

// Compiled once: splitting on anything that is not a letter or digit, in any script.
const NON_WORD = /[^\p{L}\p{N}]+/u;

const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but if then so of to in on at by for with from into onto about as is are was were be been ' +
    'being am do does did have has had i me my you your he him his she her it its we us our they them their ' +
    'this that these those what which who whom how why when where there here can could would should will shall ' +
    'may might must please tell give show just some any s t'
  ).split(' '),
);

export const embeddingsRoute: Route = { dialect: openaiDialect, json: true, handle: embeddings };

function embeddings(request: MockRequest): MockReply {
  const body = request.json;
  if (typeof body.model !== 'string') return openaiBadRequest('you must provide a model parameter', null);
  if (body.input === undefined || body.input === null) return openaiMissing('input');
  const inputs = inputList(body.input);
  if (inputs.length === 0) return openaiBadRequest("'$.input' is invalid. Please check the API reference.", 'input');
  const dimensions = dimensionsOf(body.dimensions);
  const base64 = body.encoding_format === 'base64';
  let tokens = 0;
  const data = inputs.map(function embedOne(text, index): JsonObject {
    tokens += estimateTokens(text);
    const vector = embedText(text, dimensions);
    const embedding = base64 ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64') : Array.from(vector);
    return { object: 'embedding', index, embedding };
  });
  return ok({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

/** A string, strings, token ids, or arrays of token ids (read as the text of the numbers). */
function inputList(input: unknown): string[] {
  if (!Array.isArray(input)) return [promptText(input)];
  if (input.length > 0 && input.every((item) => typeof item === 'number')) return [promptText(input)];
  return input.map(promptText);
}

function dimensionsOf(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1
    ? Math.min(value, MAX_DIMENSIONS)
    : DEFAULT_DIMENSIONS;
}

/**
 * The mock's embedding of `text`: a unit-length float32 vector. Float32 because that is what
 * `encoding_format: "base64"` carries (little-endian, as on every platform Node supports), so
 * the float and base64 forms decode to identical numbers.
 *
 * @example
 * cosine(embedText('capital of France'), embedText("France's capital city")) > 0.5
 */
export function embedText(text: string, dimensions = DEFAULT_DIMENSIONS): Float32Array {
  const counts = new Float64Array(dimensions);
  let any = false;
  for (const raw of text.toLowerCase().split(NON_WORD)) {
    // Stopwords are matched before stemming, or "this" would become "thi" and count.
    if (raw.length === 0 || STOPWORDS.has(raw)) continue;
    // With `dimensions` 0 (a client's outputDimensionality) the slot is NaN: no element, no count.
    const slot = fnv1a(stem(raw)) % dimensions;
    counts[slot] = (counts[slot] ?? 0) + 1;
    any = true;
  }
  // Text with no content words still gets a valid unit vector rather than NaNs.
  if (!any) counts[0] = 1;
  let norm = 0;
  for (const c of counts) norm += c * c;
  norm = Math.sqrt(norm);
  return Float32Array.from(counts, (c) => c / norm);
}

/** Cosine similarity of two equal-length vectors; vectors of different lengths are a caller's bug. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`cosine of vectors of different lengths (${a.length} and ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    // Both exist: i is below a.length, which equals b.length.
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Drops a plural `s` ("capitals" → "capital") but not from "glass" or short words like "is". */
function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** 32-bit FNV-1a over UTF-16 code units; unsigned so `%` gives a bucket index. */
function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    hash ^= word.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
