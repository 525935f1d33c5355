/**
 * Who is calling: resolved by the auth plugin from `x-gateway-api-key` (or a JWT) and read by
 * every admin route and by governance plugins. One organisation per deployment; a workspace key
 * is bound to one workspace.
 */
import type { ApiKeyRecord, ApiKeyType, OrgRole, WorkspaceRole } from '../store/records.js';

export interface Principal {
  kind: ApiKeyType | 'jwt';
  organisation_id: string;
  /** null for organisation keys (they may act on any workspace). */
  workspace_id: string | null;
  /** The workspace model calls are attributed to: the key's own, or the default one for organisation keys. */
  acting_workspace_id: string;
  /** The API key's id, or null for a JWT. */
  key_id: string | null;
  user_id: string | null;
  /** The organisation role of the user behind the key (service keys act as `admin`). */
  org_role: OrgRole;
  /** The workspace role for workspace-user keys and JWTs bound to a workspace. */
  workspace_role: WorkspaceRole | null;
  scopes: ReadonlySet<string>;
  /** Key defaults (pinned config, metadata) for the routing plugins. */
  defaults: ApiKeyRecord['defaults'];
}

declare module '../context.js' {
  interface ContextVars {
    principal: Principal;
  }
}

export const isOrgKey = (p: Principal): boolean => p.workspace_id === null;
