/**
 * The `virtual-keys` plugin: `x-gateway-virtual-key: <slug>` routes the request with the stored
 * provider credentials of that key (decrypted only here, never shown), its custom host and
 * headers, and its provider fields. An unknown key is a 400, an expired one 403, an exhausted one
 * 429 `usage_limit_exceeded`. Distributed mode: an unknown slug (perhaps created through another
 * host a moment ago) waits for one coalesced catch-up of the replica and is looked up again.
 * A config (`config-strategy`, later in the pipeline) takes precedence.
 */
import { actingWorkspace, definePlugin, retryOnMiss, forwardHeadersHeader, headerString, lazyCredentials, requestTimeoutHeader, virtualKeyTarget } from '../../core/index.js';

export default definePlugin({
  name: 'virtual-keys',
  configSchema: { type: 'object', additionalProperties: false },
  setup(app) {
    const credentials = lazyCredentials(app);
    return {
      onRequestBody: retryOnMiss(app, ['invalid_virtual_key'], (ctx) => {
        const slug = headerString(ctx.headers, 'x-gateway-virtual-key');
        if (slug === undefined || slug.length === 0) return;
        const target = virtualKeyTarget(credentials(), slug, actingWorkspace(app, ctx), 'x-gateway-virtual-key');
        const timeout = requestTimeoutHeader(ctx);
        if (timeout !== undefined) target.requestTimeout = timeout;
        const forward = forwardHeadersHeader(ctx);
        if (forward !== undefined) target.forwardHeaders = forward;
        ctx.plan = { root: { target }, source: `virtual-key:${slug}` };
      }),
    };
  },
});
