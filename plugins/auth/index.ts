/**
 * The `auth` plugin: `x-gateway-api-key` (or a JWT in the same header; on MCP routes also
 * `Authorization: Bearer`) → the request's
 * principal (organisation, workspace, key kind, scopes, user, role), set as `ctx.get('principal')`.
 *
 * A missing, unknown, expired or revoked key is 401. Model routes and pass-through need the
 * `completions.write` scope (403 otherwise); admin routes check their own scope and key kind
 * (core/admin/route.ts). Distributed mode: an unknown key may have just been created through
 * another host, so a miss waits for one coalesced catch-up of the replica and looks again
 * (a hit costs nothing more). Public routes (`/health`, model pricing, the OpenAPI document) need no key.
 *
 * `GET /v1/principal` (principal-route.ts) tells any authenticated caller who it is.
 */
import { adminRoutes, definePlugin, headerString, type GatewayContext, type Principal } from '../../core/index.js';
import { authOptionsSchema, type AuthOptions } from './schema.js';
import { createKeyResolver } from './resolve.js';
import { createJwtVerifier, looksLikeJwt } from './jwt.js';
import { AuthErrors } from './errors.js';
import { principalRoute } from './principal-route.js';

function isPublic(ctx: GatewayContext): boolean {
  const route = ctx.route;
  return route.kind === 'plugin' && (route.route.meta as { public?: boolean } | undefined)?.public === true;
}

/**
 * The credential: `x-gateway-api-key`, or on routes whose clients can only send a bearer token
 * (MCP clients: route meta `bearerAuth`) `Authorization: Bearer <gateway key>`. On model routes
 * `Authorization` is the provider's key in direct mode, so it is never read there.
 */
function credentialOf(ctx: GatewayContext): string | undefined {
  const raw = headerString(ctx.headers, 'x-gateway-api-key');
  if (raw !== undefined && raw.length > 0) return raw;
  const route = ctx.route;
  if (route.kind !== 'plugin' || (route.route.meta as { bearerAuth?: boolean } | undefined)?.bearerAuth !== true) return undefined;
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headerString(ctx.headers, 'authorization') ?? '');
  return bearer?.[1];
}

export default definePlugin<AuthOptions>({
  name: 'auth',
  configSchema: authOptionsSchema,
  setup(app, options) {
    const keys = createKeyResolver(app.store);
    const jwt = options.jwt ? createJwtVerifier(app.store, options.jwt) : undefined;
    const replica = app.store.replica;

    /** Sets the principal and checks the model scope; throws what a request without them gets. */
    function admit(ctx: GatewayContext, principal: Principal): void {
      ctx.set('principal', principal);
      const kind = ctx.route.kind;
      if ((kind === 'model' || kind === 'passthrough') && !principal.scopes.has('completions.write')) {
        throw AuthErrors.insufficientScope('This key lacks the scope "completions.write" needed to call models.');
      }
    }

    return {
      routes: adminRoutes(app, [principalRoute]),
      // Synchronous for a known API key (the hot path): a promise makes every later hook of the
      // request wait a microtask turn. Only a JWT or a key unknown to this host's replica waits.
      onRequest(ctx): void | Promise<void> {
        if (isPublic(ctx)) return;
        const raw = credentialOf(ctx);
        if (raw === undefined) throw AuthErrors.missingKey();
        if (jwt !== undefined && looksLikeJwt(raw)) return jwt.verify(raw).then((principal) => admit(ctx, principal));
        if (replica === undefined) return admit(ctx, keys.resolve(raw, Date.now()));
        const found = keys.find(raw, Date.now());
        if (found !== undefined) return admit(ctx, found);
        return replica.freshen().then(() => admit(ctx, keys.resolve(raw, Date.now())));
      },
    };
  },
});
