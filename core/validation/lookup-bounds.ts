/**
 * Bounds on the values the gateway looks things up by: path ids, `workspace_id`, and the request
 * headers that name a stored record or a credential. An oversized one is a 400 `string_too_long`
 * naming the field, before any store sees it (LMDB keys are limited to about 1978 bytes, and an
 * oversized key used to surface as a 500). The value itself is never echoed.
 *
 *   request ─▶ checkLookupHeaders (before any plugin) ─▶ … ─▶ admin route: checkLookup(path ids,
 *   workspace_id) ─▶ store (Collection refuses oversized keys as "not found", the last line)
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors.js';
import { MAX_ID_LENGTH, MAX_RAW_KEY_LENGTH } from '../store/ids.js';
import { ValidationErrors } from './errors.js';

/**
 * The headers whose values become store lookups or stored fields, with their bound.
 * `x-gateway-config` is bounded only in its slug form: an inline JSON config is checked by the
 * routing config validator, and the whole header block by `server.max_header_size`.
 */
const HEADER_BOUNDS: ReadonlyArray<readonly [name: string, max: number]> = [
  ['x-gateway-api-key', MAX_RAW_KEY_LENGTH],
  ['x-gateway-virtual-key', MAX_ID_LENGTH],
  ['x-gateway-provider', MAX_ID_LENGTH],
  ['x-gateway-cache-namespace', MAX_ID_LENGTH],
  ['x-gateway-span-id', MAX_ID_LENGTH],
  ['x-gateway-parent-span-id', MAX_ID_LENGTH],
  ['x-gateway-span-name', MAX_ID_LENGTH],
];

/**
 * A 400 when a lookup value is not a string or is longer than `max`, else null.
 *
 * @example
 *   const err = checkLookup(params.id, 'id'); if (err) throw err;
 */
export function checkLookup(value: unknown, param: string, max = MAX_ID_LENGTH): GatewayError | null {
  if (typeof value !== 'string') return ValidationErrors.invalidType(`${param} must be a string.`, { param });
  if (value.length > max) return ValidationErrors.stringTooLong(`${param} must be at most ${max} characters.`, { param });
  return null;
}

/** The first oversized lookup header, as a 400 naming it; null when all are within bounds. */
export function checkLookupHeaders(headers: IncomingHttpHeaders): GatewayError | null {
  for (const [name, max] of HEADER_BOUNDS) {
    const value = headers[name];
    if (value === undefined) continue;
    const err = checkLookup(Array.isArray(value) ? value.join(',') : value, name, max);
    if (err !== null) return err;
  }
  const config = headers['x-gateway-config'];
  if (typeof config === 'string') {
    const text = config.trim();
    if (!text.startsWith('{') && text.length > MAX_ID_LENGTH) {
      return ValidationErrors.stringTooLong(`x-gateway-config (a saved config's id or slug) must be at most ${MAX_ID_LENGTH} characters.`, { param: 'x-gateway-config' });
    }
  }
  return null;
}
