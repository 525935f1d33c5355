/**
 * Store errors, as gateway errors: a conflict is 409 (a slug taken, a record that already
 * exists), a missing record 404, a store with no room left 503 `store_full` (the size limit
 * `store.map_size` reached or the disk full; the write is not made, retry once space is freed).
 * The `param` names the field at fault when one is known.
 */
import { defineError } from '../errors.js';

const conflict = defineError(409, 'invalid_request_error', 'conflict', 'The resource already exists.');
const notFound = defineError(404, 'not_found_error', 'not_found', 'The resource does not exist.');
const full = defineError(503, 'server_error', 'store_full', 'The gateway store is full; the change was not saved. Retry once space is freed.');

export const StoreErrors = {
  conflict: (message: string, param?: string) => conflict(message, { param: param ?? null }),
  notFound: (message: string) => notFound(message),
  /** The original failure (a disk error), when there is one, is the `cause` and goes to the log only. */
  full: (cause?: unknown) => full(undefined, cause === undefined ? {} : { cause }),
};
