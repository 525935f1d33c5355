/**
 * The `auth` plugin: `x-gateway-api-key` (or a JWT in the same header) → the request's
 * principal (organisation, workspace, key kind, scopes, user, role), set as `ctx.get('principal')`.
 *
 * A missing, unknown, expired or revoked key is 401. Model routes and pass-through need the
 * `completions.write` scope (403 otherwise); admin routes check their own scope and key kind
 * (core/admin/route.ts). Distributed mode: an unknown key may have just been created through
 * another host, so a miss waits for one coalesced catch-up of the replica and looks again
 * (a hit costs nothing more). Public routes (`/health`, model pricing, the OpenAPI document) need no key.
 */
import { definePlugin, headerString, type GatewayContext } from '../../core/index.js';
import { authOptionsSchema, type AuthOptions } from './schema.js';
import { createKeyResolver } from './resolve.js';
import { createJwtVerifier, looksLikeJwt } from './jwt.js';
import { AuthErrors } from './errors.js';

function isPublic(ctx: GatewayContext): boolean {
  const route = ctx.route;
  return route.kind === 'plugin' && (route.route.meta as { public?: boolean } | undefined)?.public === true;
}

export default definePlugin<AuthOptions>({
  name: 'auth',
  configSchema: authOptionsSchema,
  setup(app, options) {
    const keys = createKeyResolver(app.store);
    const jwt = options.jwt ? createJwtVerifier(app.store, options.jwt) : undefined;
    const replica = app.store.replica;
    const resolveFresh = async (raw: string): Promise<ReturnType<typeof keys.resolve>> => {
      const found = keys.find(raw, Date.now());
      if (found !== undefined) return found;
      await replica!.freshen();
      return keys.resolve(raw, Date.now());
    };

    return {
      async onRequest(ctx) {
        if (isPublic(ctx)) return;
        const raw = headerString(ctx.headers, 'x-gateway-api-key');
        if (raw === undefined || raw.length === 0) throw AuthErrors.missingKey();
        const principal =
          jwt !== undefined && looksLikeJwt(raw) ? await jwt.verify(raw) : replica === undefined ? keys.resolve(raw, Date.now()) : await resolveFresh(raw);
        ctx.set('principal', principal);
        const kind = ctx.route.kind;
        if ((kind === 'model' || kind === 'passthrough') && !principal.scopes.has('completions.write')) {
          throw AuthErrors.insufficientScope('This key lacks the scope "completions.write" needed to call models.');
        }
      },
    };
  },
});
