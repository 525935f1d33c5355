/**
 * The audit trail: every admin write (create, update, delete, rotate, reset, …) becomes a record
 * with who (user or key), what (method, uri, resource, action, a bounded summary of the body and
 * query with secrets masked), where from (client ip), and the outcome (status). Failed attempts
 * are recorded too: a 403 is exactly what an auditor looks for.
 *
 *   successful write ─▶ record committed in the SAME transaction as the change (see route.ts and
 *                       store/companion.ts): an acknowledged write always has its record
 *   refused / failed ─▶ record appended asynchronously (batched by LMDB), flushed on a graceful stop
 *
 * A record is bounded: the body and the query are each kept as at most `audit.summary_bytes` of
 * JSON, so a caller cannot make the trail store megabytes per call (retention: audit-retention.ts).
 */
import type { GatewayContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import type { Store } from '../store/store.js';
import type { AuditRecord } from '../store/records.js';
import { uuidv7 } from '../store/ids.js';
import { quietWrite } from '../store/write-failures.js';

/** Field names whose values are secrets, at any depth of a request body. */
const SECRET_FIELD = /^(api_key|apikey|secret|password|token|authorization|.*_secret|.*_api_key|.*secret_access_key|.*_access_key|.*session_token|client_secret|.*service_account_json|custom_headers|headers)$/i;
const KEEP = new Set(['virtual_key', 'secret_reference_id']);

/**
 * Replaces secret values with `[masked]`, keeping the structure. A bare `key` is a secret only at
 * the top of a body (a virtual key's or integration's `key`); deeper down it is a name, as in a
 * policy's `conditions[].key`, and stays readable for the auditor.
 */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Past the depth we inspect, nothing is kept: an unread level could hold a key.
  if (depth > 8) return '[masked: too deep]';
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const secret = (SECRET_FIELD.test(k) && !KEEP.has(k)) || (depth === 0 && k === 'key');
    out[k] = secret && v !== null && v !== undefined ? '[masked]' : maskSecrets(v, depth + 1);
  }
  return out;
}

/** The smallest summary bound honoured: room for the truncation marker and a few fields. */
export const MIN_SUMMARY_BYTES = 256;
/** The longest `uri` kept (a path is bounded by the header limit, which may be far larger). */
const MAX_URI = 2048;
/** Cut limits tried in turn (string length, items per array or object) until the JSON fits. */
const SHRINK_STEPS: ReadonlyArray<readonly [number, number]> = [
  [1024, 64],
  [256, 16],
  [64, 6],
  [16, 2],
];
/** The top-level key that marks a cut summary; its value is the size of the full JSON in bytes. */
export const TRUNCATED_KEY = '[truncated]';

/**
 * A value as JSON of at most `maxBytes` UTF-8 bytes. Small values are kept whole; larger ones are
 * cut where it keeps the most meaning: long strings end in `…[+N chars]`, long arrays and objects
 * keep their first entries and say how many were left out, and a cut object gets a first key
 * `[truncated]` with the full size. The result is always valid JSON.
 *
 * Mask first ({@link maskSecrets}): a secret is then a short `[masked]` and no cut can leave part
 * of one behind.
 *
 * @example
 *   boundedJson({ name: 'x'.repeat(100_000) }, 8192) // '{"[truncated]":100013,"name":"xxxx…[+98976 chars]"}'
 */
export function boundedJson(value: unknown, maxBytes: number): string {
  const bound = Math.max(MIN_SUMMARY_BYTES, maxBytes);
  const full = JSON.stringify(value) ?? 'null';
  // Most bodies are small: a string's length is a lower bound of its byte length, and at most a third of it.
  if (full.length * 3 <= bound || Buffer.byteLength(full) <= bound) return full;
  const size = Buffer.byteLength(full);
  for (const [chars, items] of SHRINK_STEPS) {
    let cut = shrink(value, chars, items);
    if (cut !== null && typeof cut === 'object' && !Array.isArray(cut)) cut = { [TRUNCATED_KEY]: size, ...cut };
    const out = JSON.stringify(cut);
    if (Buffer.byteLength(out) <= bound) return out;
  }
  return JSON.stringify({ [TRUNCATED_KEY]: size });
}

function cutString(s: string, chars: number): string {
  return s.length <= chars ? s : `${s.slice(0, chars)}…[+${s.length - chars} chars]`;
}

function shrink(value: unknown, chars: number, items: number): unknown {
  if (typeof value === 'string') return cutString(value, chars);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = value.slice(0, items).map((v) => shrink(v, chars, items));
    if (value.length > items) out.push(`[+${value.length - items} items]`);
    return out;
  }
  const entries = Object.entries(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, items)) out[cutString(k, chars)] = shrink(v, chars, items);
  if (entries.length > items) out['[more]'] = `[+${entries.length - items} keys]`;
  return out;
}

export interface AuditInput {
  ctx: GatewayContext;
  principal: Principal;
  resource: string;
  action: string;
  status: number;
  workspaceId: string | null;
  body: unknown;
  query: Record<string, unknown>;
  /** Bound of the body and of the query summaries (`audit.summary_bytes`). */
  summaryBytes: number;
  /** Reuse an id (the record written with the change is overwritten by the final outcome). */
  id?: string;
}

/** The record of one admin call, secrets masked and the request summarised within its bound. */
export function buildAuditRecord(a: AuditInput): AuditRecord {
  return {
    id: a.id ?? uuidv7(),
    timestamp: new Date().toISOString(),
    method: a.ctx.method,
    uri: a.ctx.path.length > MAX_URI ? `${a.ctx.path.slice(0, MAX_URI)}…[+${a.ctx.path.length - MAX_URI} chars]` : a.ctx.path,
    request_id: a.ctx.id,
    request_body: boundedJson(maskSecrets(a.body) ?? {}, a.summaryBytes),
    query_params: boundedJson(maskSecrets(a.query) ?? {}, a.summaryBytes),
    user_id: a.principal.user_id,
    api_key_id: a.principal.key_id,
    user_type: a.principal.key_id === null ? 'user' : 'api_key',
    organisation_id: a.principal.organisation_id,
    workspace_id: a.workspaceId,
    response_status_code: a.status,
    resource_type: a.resource,
    action: a.action,
    client_ip: a.ctx.remoteAddress,
  };
}

/**
 * Appends a record asynchronously (refused and failed calls): the answer does not wait on it. A
 * failed write (a full disk) is logged by the caller's logger, never thrown.
 */
export function recordAudit(store: Store, record: AuditRecord, onError?: (err: unknown) => void): void {
  void quietWrite(store.c.audit.append(record), onError);
}
