/**
 * JWTs as credentials: sent in `x-gateway-api-key` like a key, validated against the configured
 * JWKS (signature, issuer, audience, expiry: jose does all four), then mapped to a principal
 * from the claims named in the YAML. A JWT is temporary and carries its own scopes, so nothing
 * is stored for it.
 */
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { findWorkspace, type Principal, type Records, type Store } from '../../core/index.js';

type OrgRole = Records.OrgRole;
type WorkspaceRole = Records.WorkspaceRole;
import type { JwtOptions } from './schema.js';
import { AuthErrors } from './errors.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const looksLikeJwt = (value: string): boolean => JWT_SHAPE.test(value);

export interface JwtVerifier {
  verify(token: string): Promise<Principal>;
}

function claimScopes(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

export function createJwtVerifier(store: Store, options: JwtOptions): JwtVerifier {
  const url = new URL(options.jwks_url);
  // jose is loaded with the first token (not with every start); it caches the key set and
  // refetches it on an unknown `kid` (key rotation at the IdP).
  let jose: Promise<{ jwks: JWTVerifyGetKey; jwtVerify: typeof import('jose').jwtVerify }> | undefined;
  const load = (): NonNullable<typeof jose> =>
    (jose ??= import('jose').then(({ createRemoteJWKSet, jwtVerify }) => ({ jwks: createRemoteJWKSet(url), jwtVerify })));
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        const { jwks, jwtVerify } = await load();
        ({ payload } = await jwtVerify(token, jwks, { issuer: options.issuer, audience: options.audience }));
      } catch (err) {
        // jose's messages say which check failed (expired, audience, signature) and echo no secret.
        throw AuthErrors.invalidToken(`The token is not valid: ${(err as Error).message}`, { cause: err });
      }
      const user = payload[options.user_claim];
      const wsClaim = payload[options.workspace_claim];
      const workspace = typeof wsClaim === 'string' ? findWorkspace(store, wsClaim) : undefined;
      if (typeof wsClaim === 'string' && workspace === undefined) throw AuthErrors.invalidToken('The token names a workspace that does not exist.');
      const role = payload[options.role_claim];
      const defaultWs = (store.meta.get('default_workspace_id') as string | undefined) ?? '';
      return {
        kind: 'jwt',
        organisation_id: (store.meta.get('organisation_id') as string | undefined) ?? '',
        workspace_id: workspace?.id ?? null,
        acting_workspace_id: workspace?.id ?? defaultWs,
        key_id: null,
        user_id: typeof user === 'string' ? user : null,
        org_role: workspace === undefined && (role === 'admin' || role === 'owner') ? (role as OrgRole) : 'member',
        workspace_role: workspace !== undefined && (role === 'admin' || role === 'manager' || role === 'member') ? (role as WorkspaceRole) : null,
        scopes: new Set(claimScopes(payload[options.scopes_claim])),
        defaults: null,
      };
    },
  };
}
