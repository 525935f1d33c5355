/**
 * `POST /v1/api-keys/:id/rotate`: a new secret for the same key (same id, scopes, limits), shown
 * once in the response. The old secret keeps working for `key_transition_period_ms` (at least and
 * by default 30 minutes) so clients can switch without an outage:
 *
 *   before     hash = H(old)
 *   rotate     hash = H(new), previous_hash = H(old), previous_expires_at = now + transition
 *   after      H(old) still resolves to the key (the unique `hash` index holds both), and the auth
 *              plugin answers it 401 `expired_api_key` once previous_expires_at has passed
 *
 * At most two live secrets: rotating again during a transition is a 409.
 */
import { AdminErrors, defineAdminRoute, generateApiKey, hashApiKey, maskApiKey, S, type AnyAdminRoute } from '../../core/index.js';
import { findKey } from './manage.js';
import { nextStamp } from './fields.js';
import { assertMayManageKeys } from './permissions.js';

/** The reference's minimum and default transition. */
const MIN_TRANSITION_MS = 1_800_000;
/** A bound so a "transition" cannot keep an old secret alive indefinitely: 30 days. */
const MAX_TRANSITION_MS = 30 * 24 * 3_600_000;

export const rotateRoutes: AnyAdminRoute[] = [
  defineAdminRoute<{ key_transition_period_ms: number }>({
    method: 'POST',
    path: '/v1/api-keys/:id/rotate',
    summary: 'Rotate an API key (the old secret works until the transition ends)',
    resource: 'api_key',
    action: 'rotate',
    // `<kind>_api_keys.rotate`, checked once the key's kind is known.
    scope: null,
    level: 'workspace',
    workspaceDefault: 'all',
    body: {
      type: 'object',
      properties: {
        key_transition_period_ms: { type: 'integer', minimum: MIN_TRANSITION_MS, maximum: MAX_TRANSITION_MS, default: MIN_TRANSITION_MS },
      },
      additionalProperties: false,
    },
    response: S.record({ id: S.str, key: S.str, key_transition_expires_at: S.str }),
    handler({ params, body, principal, store }) {
      const key = findKey(store, principal, params.id!, 'rotate');
      assertMayManageKeys(principal);
      const raw = generateApiKey();
      const updated = store.c.apiKeys.update(key.id, function rotate(current) {
        const now = Date.now();
        // Checked inside the transaction: two concurrent rotations cannot both pass.
        if (current.deleted_at !== null) throw AdminErrors.notFound('API key does not exist.');
        if (current.previous_hash !== null && current.previous_expires_at !== null && Date.parse(current.previous_expires_at) > now) {
          throw AdminErrors.conflict(`This key is already in a rotation transition until ${current.previous_expires_at}.`);
        }
        return {
          ...current,
          hash: hashApiKey(raw),
          previous_hash: current.hash,
          previous_expires_at: new Date(now + body.key_transition_period_ms).toISOString(),
          masked_key: maskApiKey(raw),
          last_updated_at: nextStamp(current.last_updated_at),
        };
      });
      return { id: updated.id, key: raw, key_transition_expires_at: updated.previous_expires_at };
    },
  }),
];
