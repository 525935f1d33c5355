/**
 * The `admin-org` plugin's own errors. Everything else is the admin catalog (`AdminErrors`): 400
 * naming the field, 403, 404, 409 `conflict`.
 */
import { defineError } from '../../core/index.js';

const invalidInvite = defineError(400, 'invalid_request_error', 'invalid_invite', 'The invite token is not valid.');

export const OrgErrors = {
  /**
   * One answer for an unknown, expired, cancelled or used token: telling them apart would let a
   * caller probe which tokens once existed.
   */
  invalidInvite: () => invalidInvite('The invite is unknown, expired, cancelled or already accepted.', { param: 'token' }),
};
