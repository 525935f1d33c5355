/**
 * Cache keys: a SHA-256 over who asks (workspace), where (route, target) and what (the canonical
 * body). The workspace is always part of it: an entry is never shared across tenants.
 *
 *   key       = sha256( ["k1", workspace, route, provider, host, model, namespace, stream] \n canonical(body) )
 *   partition = sha256( ["p1", …same parts…] \n canonical(body with the embedded text blanked) )
 *
 * `stream` and `stream_options` leave the canonical body (a streamed and a plain call of one
 * request have the same content) and the mode goes into the parts instead: an entry replays
 * only in the mode it was recorded in. Metadata is never part of the key; the
 * `x-gateway-cache-namespace` header is.
 */
import { createHash } from 'node:crypto';
import { CacheErrors } from './errors.js';

/** Deeper JSON than this is not cached (recursion is bounded so a hostile body cannot overflow the stack). */
const MAX_DEPTH = 64;

export interface KeyParts {
  workspace: string;
  route: string;
  provider: string;
  host: string;
  model: string;
  namespace: string | null;
  stream: boolean;
}

type Json = Record<string, unknown>;

/**
 * JSON with object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}` agree.
 *
 * @example
 *   canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }) // '{"a":null,"b":[1,{"c":2,"d":1}]}'
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw CacheErrors.keyFailed(`The request body nests deeper than ${MAX_DEPTH} levels.`);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i], depth + 1);
    return out + ']';
  }
  const obj = value as Json;
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue; // as JSON.stringify does
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + canonicalJson(v, depth + 1);
    first = false;
  }
  return out + '}';
}

/** The body as it goes upstream (target overrides applied), without the transport-only stream fields. */
export function keyBody(body: Json, overrides: Json | undefined): Json {
  const merged: Json = overrides === undefined ? { ...body } : { ...body, ...overrides };
  delete merged.stream;
  delete merged.stream_options;
  return merged;
}

function digest(tag: string, parts: KeyParts, body: Json): string {
  const head = JSON.stringify([tag, parts.workspace, parts.route, parts.provider, parts.host, parts.model, parts.namespace, parts.stream]);
  return createHash('sha256').update(head).update('\n').update(canonicalJson(body)).digest('hex');
}

/** The exact-match key of a request (`body` from {@link keyBody}). */
export function cacheKey(parts: KeyParts, body: Json): string {
  return digest('k1', parts, body);
}

/**
 * The semantic partition: every part of the exact key, and the rest of the body with the
 * embedded text blanked. Only the text may differ between a question and its cached paraphrase;
 * a different system prompt, history, temperature or tool list is a different partition.
 */
export function partitionKey(parts: KeyParts, blankedBody: Json): string {
  return digest('p1', parts, blankedBody);
}
