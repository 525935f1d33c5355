/**
 * Secrets inside guardrails: the header values a check sends (a webhook's `Authorization`, a
 * partner's API key header). Any check whose parameters carry a `headers` object is covered, so a
 * plugin author's own webhook-like check is protected the same way as `default.webhook`.
 *
 *   client checks ──seal──▶ stored checks ──mask──▶ admin reads (detail, versions)
 *                                         └─unseal─▶ unsealGuardrailChecks (the engine)
 *
 * At rest each value is `{"sealed": "v1:…"}` (the store's secret box, AES-256-GCM under the
 * master key); reads show `maskSecret(value)`; the audit trail sees `[masked]` (see
 * {@link hiddenGuardrailHeaders}). Header names stay readable: they say what is sent, not with what.
 */
import { maskSecret, type Store } from '../../core/index.js';

type Json = Record<string, unknown>;

/** A sealed header value in a stored guardrail. */
interface Sealed {
  sealed: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSealed = (v: unknown): v is Sealed => isObject(v) && typeof v.sealed === 'string';

/**
 * Calls `visit` with each check's `headers` object in a list of inline guardrails (strings, the
 * references to saved guardrails, have none), with the guardrail's index and the check id.
 */
function eachHeaders(list: ReadonlyArray<unknown>, visit: (headers: Json, index: number, checkId: string) => void): void {
  list.forEach((guardrail, index) => {
    if (!isObject(guardrail)) return;
    for (const [checkId, params] of Object.entries(guardrail)) {
      if (isObject(params) && isObject(params.headers)) visit(params.headers, index, checkId);
    }
  });
}

/** `headers` of check `checkId` in guardrail `index` of a stored list, if there is one. */
function headersAt(list: ReadonlyArray<unknown> | undefined, index: number, checkId: string): Json | undefined {
  const params = isObject(list?.[index]) ? (list[index] as Json)[checkId] : undefined;
  return isObject(params) && isObject(params.headers) ? params.headers : undefined;
}

/**
 * A copy of a list of inline guardrails with every header value sealed, ready to store.
 *
 * With `previous` (the stored list an update replaces), a value that is exactly the masked form
 * of the value stored at the same place (same guardrail index, check and header name) keeps that
 * value: a client that reads a guardrail and sends it back changed elsewhere must not replace
 * its credentials with their masks.
 *
 * @example
 *   const checks = sealGuardrailChecks(store, body.checks, current.checks);
 */
export function sealGuardrailChecks<T>(store: Store, list: ReadonlyArray<T>, previous?: ReadonlyArray<unknown>): T[] {
  const copy = structuredClone(list) as T[];
  eachHeaders(copy, (headers, index, checkId) => {
    const before = headersAt(previous, index, checkId);
    for (const [name, value] of Object.entries(headers)) {
      // Not a string: the check's parameter schema refuses it; nothing to seal.
      if (typeof value !== 'string') continue;
      const old = before?.[name];
      const unchanged = isSealed(old) && maskSecret(store.secrets.decrypt(old.sealed)) === value;
      headers[name] = unchanged ? old : ({ sealed: store.secrets.encrypt(value) } satisfies Sealed);
    }
  });
  return copy;
}

/** A copy of a stored list for admin reads: header values masked, never in clear. */
export function maskGuardrailChecks<T>(store: Store, stored: ReadonlyArray<T>): T[] {
  const copy = structuredClone(stored) as T[];
  eachHeaders(copy, (headers) => {
    for (const [name, value] of Object.entries(headers)) if (isSealed(value)) headers[name] = maskSecret(store.secrets.decrypt(value.sealed));
  });
  return copy;
}

/**
 * A copy of a stored list with its header values in clear, as the engine runs it (and as the
 * check registry validates it: the checks' parameter schemas expect strings).
 *
 * @example
 *   const checks = unsealGuardrailChecks(store, record.checks);
 */
export function unsealGuardrailChecks<T>(store: Store, stored: ReadonlyArray<T>): T[] {
  const copy = structuredClone(stored) as T[];
  eachHeaders(copy, (headers) => {
    for (const [name, value] of Object.entries(headers)) if (isSealed(value)) headers[name] = store.secrets.decrypt(value.sealed);
  });
  return copy;
}

/**
 * A guardrail list as the audit trail may see it: every header value `[masked]`. Copies only the
 * guardrails and checks it changes and shares the rest (no deep clone: a body is not yet
 * validated, and may nest deeper than a recursive copy survives).
 *
 * The admin framework builds the audit record from the request body once the handler has run,
 * and its secret field names do not include `headers`: a handler puts this list in the body in
 * place of the one it works with.
 */
export function hiddenGuardrailHeaders<T>(list: ReadonlyArray<T>): T[] {
  return list.map((guardrail) => {
    if (!isObject(guardrail)) return guardrail;
    let copy: Json | undefined;
    for (const [checkId, params] of Object.entries(guardrail)) {
      if (!isObject(params) || !isObject(params.headers)) continue;
      const headers = Object.fromEntries(Object.keys(params.headers).map((name) => [name, '[masked]']));
      (copy ??= { ...guardrail })[checkId] = { ...params, headers };
    }
    return (copy ?? guardrail) as T;
  });
}
