/**
 * Options of the `auth` plugin.
 *
 *   - auth                                   # API keys only
 *   - auth:
 *       jwt:                                 # also accept JWTs in x-gateway-api-key
 *         jwks_url: https://idp.example.com/.well-known/jwks.json
 *         issuer: https://idp.example.com/
 *         audience: gateway
 *         scopes_claim: scope                # space-separated string or array
 *         user_claim: sub
 *         workspace_claim: workspace         # workspace id or slug; absent = organisation-level
 */
export interface JwtOptions {
  jwks_url: string;
  issuer: string;
  audience: string;
  scopes_claim: string;
  user_claim: string;
  workspace_claim: string;
  role_claim: string;
}

export interface AuthOptions {
  jwt?: JwtOptions;
}

export const authOptionsSchema = {
  type: 'object',
  properties: {
    jwt: {
      type: 'object',
      properties: {
        jwks_url: { type: 'string', format: 'uri', minLength: 1 },
        issuer: { type: 'string', minLength: 1 },
        audience: { type: 'string', minLength: 1 },
        scopes_claim: { type: 'string', default: 'scope' },
        user_claim: { type: 'string', default: 'sub' },
        workspace_claim: { type: 'string', default: 'workspace' },
        role_claim: { type: 'string', default: 'role' },
      },
      required: ['jwks_url', 'issuer', 'audience'],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};
