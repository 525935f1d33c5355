/**
 * Who may manage which API keys, and which scopes a new or updated key may carry.
 *
 * The spec's role table: organisation owners and admins create every kind of key, for any
 * workspace; a Workspace Manager creates workspace keys for the workspace it manages; a Workspace
 * Member creates none. On top of the role, every operation needs the scope of the *target* key's
 * kind (`organisation_service_api_keys.*`, `workspace_service_api_keys.*`,
 * `workspace_user_api_keys.*`), which is why those checks run in the handlers, once the kind is
 * known, rather than in the route definition.
 */
import { AdminErrors, authorize, Scopes, type Principal, type Records } from '../../core/index.js';

type KeyType = Records.ApiKeyType;

export const KEY_TYPES: ReadonlyArray<KeyType> = ['organisation-service', 'workspace-service', 'workspace-user'];

const SCOPE_GROUP: Record<KeyType, string> = {
  'organisation-service': 'organisation_service_api_keys',
  'workspace-service': 'workspace_service_api_keys',
  'workspace-user': 'workspace_user_api_keys',
};

export type KeyAction = 'create' | 'read' | 'update' | 'delete' | 'list' | 'rotate';

/** The wire scope for `action` on keys of `type`, e.g. `workspace_user_api_keys.rotate`. */
export function keyScope(type: KeyType, action: KeyAction): string {
  return `${SCOPE_GROUP[type]}.${action}`;
}

/** 403 `insufficient_scope` unless the principal holds the scope of this action on this kind. */
export function requireKeyScope(principal: Principal, type: KeyType, action: KeyAction): void {
  authorize(principal, { level: 'workspace', scope: keyScope(type, action) });
}

/**
 * The role half of the spec's table, for every key-management write (create, update, delete,
 * rotate). Reads need only the scope: a member may see the keys of its workspace.
 *
 * A workspace-user key's role is its user's membership role (resolved by the auth plugin); a key
 * bound to no user has no role, so it manages nothing. Service keys carry no user: holding the
 * scope is what an administrator granted them.
 */
export function assertMayManageKeys(principal: Principal): void {
  if (principal.workspace_id === null) {
    if (principal.org_role === 'owner' || principal.org_role === 'admin') return;
    throw AdminErrors.forbidden('Only organisation owners and admins manage API keys.');
  }
  if (principal.kind === 'workspace-service') return;
  if (principal.workspace_role === 'admin' || principal.workspace_role === 'manager') return;
  throw AdminErrors.forbidden("Only a workspace's admins and managers manage its API keys.");
}

/**
 * The scopes a key of `type` gets, deduplicated. Each must be one the kind may hold (400 naming
 * `scopes[i]`), and a workspace-bound caller cannot grant a scope it does not hold itself (403):
 * otherwise a manager key with narrow scopes could mint a broader one. Organisation owners and
 * admins are exempt, as they can already do everything (their bootstrap key lacks the
 * workspace-only scopes, which they must still be able to hand to workspace keys).
 */
export function grantableScopes(principal: Principal, type: KeyType, requested: ReadonlyArray<string>): string[] {
  const allowed = Scopes.allowedScopes(type);
  const known = new Set(Scopes.ALL_SCOPES);
  requested.forEach((scope, i) => {
    const param = `scopes[${i}]`;
    if (!known.has(scope)) throw AdminErrors.invalid(`scopes[${i}] is not a known scope.`, param);
    if (!allowed.has(scope)) throw AdminErrors.invalid(`The scope "${scope}" cannot be given to ${type} keys.`, param);
    if (principal.workspace_id !== null && !principal.scopes.has(scope)) {
      throw AdminErrors.forbidden(`This key cannot grant the scope "${scope}", which it does not hold.`, param);
    }
  });
  return [...new Set(requested)];
}
