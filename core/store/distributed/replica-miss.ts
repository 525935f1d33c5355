/**
 * "A record created through host A works on host B at once": a hot-path lookup that misses (an
 * unknown virtual key, saved config or @slug) may name a record committed through another host
 * whose change notice has not arrived yet. In distributed mode such a miss waits for one coalesced
 * catch-up of the replica (`replica.freshen()`) and runs the hook again; a hit costs nothing new.
 * On the embedded default the hook is returned as it is.
 */
import type { GatewayApp } from '../../plugin.js';
import type { GatewayContext } from '../../context.js';

/**
 * Wraps a synchronous hook whose misses throw a gateway error with one of `codes`.
 *
 * @example
 *   onRequestBody: retryOnMiss(app, ['invalid_virtual_key'], (ctx) => { … virtualKeyTarget(…) … })
 */
export function retryOnMiss<R>(app: GatewayApp, codes: ReadonlyArray<string>, hook: (ctx: GatewayContext) => R): (ctx: GatewayContext) => R | Promise<R> {
  const replica = app.store.replica;
  if (replica === undefined) return hook;
  return (ctx) => {
    try {
      return hook(ctx);
    } catch (err) {
      if (!codes.includes((err as { code?: unknown }).code as string)) throw err;
      return replica.freshen().then(() => hook(ctx));
    }
  };
}
