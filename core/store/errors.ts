/**
 * Store errors, as gateway errors: a conflict is 409 (a slug taken, a record that already
 * exists), a missing record 404. The `param` names the field at fault when one is known.
 */
import { defineError } from '../errors.js';

const conflict = defineError(409, 'invalid_request_error', 'conflict', 'The resource already exists.');
const notFound = defineError(404, 'not_found_error', 'not_found', 'The resource does not exist.');

export const StoreErrors = {
  conflict: (message: string, param?: string) => conflict(message, { param: param ?? null }),
  notFound: (message: string) => notFound(message),
};
