/**
 * `GET /v1/principal`: who the caller is, as this plugin resolved it. Any authenticated caller may
 * ask (no scope); without a key it is the usual 401. Not public: the principal is the point.
 *
 * What a console needs to shape itself: the credential's kind and level, its workspace, the roles
 * and scopes it acts with. Never the key itself, its hash or masked form, or its defaults: only
 * fields in the response schema leave (core/admin/route.ts), and none of those is one.
 *
 * @example
 *   GET /v1/principal  (a workspace service key)
 *   {"object":"principal","kind":"api_key","id":"0197…","name":"ci","type":"workspace",
 *    "sub_type":"service","organisation_id":"0197…","workspace_id":"0197…","workspace_slug":"team-a",
 *    "user_id":null,"organisation_role":"admin","workspace_role":null,"scopes":["analytics.view"]}
 */
import { defineAdminRoute, S, type AnyAdminRoute, type Principal, type Records, type Store } from '../../core/index.js';

/** An API key's type as a level and a sub-type. */
const KEY_TYPES: Record<Records.ApiKeyType, { type: 'organisation' | 'workspace'; sub_type: 'service' | 'user' }> = {
  'organisation-service': { type: 'organisation', sub_type: 'service' },
  'workspace-service': { type: 'workspace', sub_type: 'service' },
  'workspace-user': { type: 'workspace', sub_type: 'user' },
};

export interface PrincipalView {
  object: 'principal';
  kind: 'api_key' | 'jwt';
  /** The API key's id; null for a JWT (nothing is stored for one). */
  id: string | null;
  name: string | null;
  type: 'organisation' | 'workspace';
  /** From the key's type; null for a JWT. */
  sub_type: 'service' | 'user' | null;
  organisation_id: string;
  workspace_id: string | null;
  workspace_slug: string | null;
  user_id: string | null;
  organisation_role: Records.OrgRole;
  workspace_role: Records.WorkspaceRole | null;
  scopes: string[];
}

const roles = (values: string[]): S.JsonSchema => ({ type: 'string', enum: values });

const principalSchema: S.JsonSchema = S.record({
  object: { type: 'string', const: 'principal' },
  kind: { type: 'string', enum: ['api_key', 'jwt'] },
  id: { ...S.strOrNull, description: 'The API key id; null for a JWT.' },
  name: { ...S.strOrNull, description: 'The API key name; null for a JWT.' },
  type: { type: 'string', enum: ['organisation', 'workspace'], description: 'organisation: acts on every workspace; workspace: on its own only.' },
  sub_type: { type: 'string', enum: ['service', 'user'], nullable: true, description: 'From the API key type; null for a JWT.' },
  organisation_id: S.str,
  workspace_id: { ...S.strOrNull, description: 'null at organisation level.' },
  workspace_slug: S.strOrNull,
  user_id: { ...S.strOrNull, description: 'The user behind a user key, or the JWT subject.' },
  organisation_role: { ...roles(['owner', 'admin', 'member']), description: 'Service keys act as admin (the bootstrap key as owner).' },
  workspace_role: { ...roles(['admin', 'manager', 'member']), nullable: true, description: 'For workspace user keys and JWTs bound to a workspace.' },
  scopes: { ...S.strings, description: 'Sorted.' },
});

/** The caller as the console may see it. */
export function principalView(store: Store, principal: Principal): PrincipalView {
  const key = principal.key_id === null ? undefined : store.c.apiKeys.get(principal.key_id);
  const level = principal.kind === 'jwt' ? { type: principal.workspace_id === null ? 'organisation' : 'workspace', sub_type: null } as const : KEY_TYPES[principal.kind];
  return {
    object: 'principal',
    kind: principal.kind === 'jwt' ? 'jwt' : 'api_key',
    id: principal.key_id,
    name: key?.name ?? null,
    type: level.type,
    sub_type: level.sub_type,
    organisation_id: principal.organisation_id,
    workspace_id: principal.workspace_id,
    workspace_slug: principal.workspace_id === null ? null : (store.c.workspaces.get(principal.workspace_id)?.slug ?? null),
    user_id: principal.user_id,
    organisation_role: principal.org_role,
    workspace_role: principal.workspace_role,
    scopes: [...principal.scopes].sort(),
  };
}

export const principalRoute: AnyAdminRoute = defineAdminRoute({
  method: 'GET',
  path: '/v1/principal',
  summary: 'Who the caller is: credential kind, level, workspace, roles and scopes (never the key)',
  resource: 'principal',
  action: 'read',
  scope: null,
  level: 'workspace',
  // The caller's own workspace, if any, is read from the principal: no default one is looked up.
  workspaceDefault: 'all',
  response: principalSchema,
  handler: ({ principal, store }) => principalView(store, principal),
});
