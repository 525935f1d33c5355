/**
 * `GET /v1/api-keys/grantable-scopes`: for each kind of key the caller may create, the scopes it
 * may give one (what a create would accept). A console builds its scope picker from it instead of
 * copying the rules: a kind's allowed scopes, narrowed to the caller's own for a workspace-bound
 * caller (see {@link grantableScopes}).
 *
 * @example
 *   GET /v1/api-keys/grantable-scopes   (a workspace service key with three scopes)
 *   {"object":"list","data":[{"type":"workspace-service","scopes":["completions.write","configs.read","logs.list"]}]}
 */
import { defineAdminRoute, Scopes, S, type AnyAdminRoute, type Principal, type Records } from '../../core/index.js';
import { KEY_TYPES, keyScope } from './permissions.js';

/** The kinds `principal` may create, each with the scopes a create would let it grant. */
export function grantableByKind(principal: Principal): Array<{ type: Records.ApiKeyType; scopes: string[] }> {
  const kinds: Array<{ type: Records.ApiKeyType; scopes: string[] }> = [];
  for (const type of KEY_TYPES) {
    // Organisation keys are made at organisation level only.
    if (type === 'organisation-service' && principal.workspace_id !== null) continue;
    if (!principal.scopes.has(keyScope(type, 'create'))) continue;
    const allowed = [...Scopes.allowedScopes(type)];
    const scopes = principal.workspace_id === null ? allowed : allowed.filter((s) => principal.scopes.has(s));
    kinds.push({ type, scopes: scopes.sort() });
  }
  return kinds;
}

export const grantableRoute: AnyAdminRoute = defineAdminRoute({
  method: 'GET',
  path: '/v1/api-keys/grantable-scopes',
  summary: 'For each kind of key the caller may create, the scopes it may give one',
  resource: 'api_key',
  action: 'read',
  // Any caller may ask what it could grant: the answer is empty without a create scope.
  scope: null,
  level: 'workspace',
  workspaceDefault: 'all',
  response: S.record({
    object: S.str,
    data: { type: 'array', items: S.record({ type: { type: 'string', enum: [...KEY_TYPES] }, scopes: S.strings }) },
  }),
  handler: ({ principal }) => ({ object: 'list', data: grantableByKind(principal) }),
});
