/**
 * Who is signed in: the principal `GET /v1/principal` describes, and what its scopes allow.
 * Pages ask `can(scope)` to hide what the key may not do instead of showing a broken page.
 */
import { request } from './api';

export interface Principal {
  object: 'principal';
  kind: 'api_key' | 'jwt';
  /** The API key id; null for a JWT. */
  id: string | null;
  name: string | null;
  type: 'organisation' | 'workspace';
  sub_type: 'service' | 'user' | null;
  organisation_id: string;
  workspace_id: string | null;
  workspace_slug: string | null;
  user_id: string | null;
  organisation_role: string;
  workspace_role: string | null;
  scopes: string[];
}

export type KeyType = 'organisation-service' | 'workspace-service' | 'workspace-user';

/** The principal of the stored credential, or of `token` (a sign-in being tried). */
export function fetchPrincipal(token?: string): Promise<Principal> {
  return request<Principal>('GET', '/v1/principal', undefined, token === undefined ? {} : { token });
}

export class Session {
  private readonly scopes: ReadonlySet<string>;
  constructor(readonly principal: Principal) {
    this.scopes = new Set(principal.scopes);
  }
  /** Whether the key holds `scope`. */
  can(scope: string): boolean {
    return this.scopes.has(scope);
  }
  /** Whether the key holds any of `scopes`. */
  canAny(...scopes: string[]): boolean {
    return scopes.some((s) => this.scopes.has(s));
  }
  /** An organisation-level principal (sees every workspace). */
  get isOrganisation(): boolean {
    return this.principal.workspace_id === null;
  }
  /** The label shown in the header. */
  get label(): string {
    const p = this.principal;
    return p.name ?? (p.kind === 'jwt' ? `JWT ${p.user_id ?? ''}`.trim() : p.id ?? 'API key');
  }
}
