/**
 * Answers a request from the gateway itself: a plugin's reply, a route handler's reply, or an
 * error. Response hooks run on these too (in reverse, up to the plugin that answered), so the
 * first plugin, usually logging, sees every outcome, including a 401 or a 429. The order of the
 * hooks is the response sequencer's (core/response/sequencer.ts); this only starts it.
 */
import type { GatewayContext } from './context.js';
import type { Reply } from './reply.js';
import type { GatewayError } from './errors.js';
import type { ResponseWriter } from './response-writer.js';
import type { Runtime } from './runtime.js';
import { ResponseSequencer, errorReply } from './response/sequencer.js';

export { ALL_PLUGINS, eventBody, isStreamBody } from './response/sequencer.js';

export interface SendOptions {
  /** Response hooks run for plugins at or before this index. */
  limit: number;
  /** Add the routing headers (a proxied answer, e.g. a cache hit). */
  proxied: boolean;
}

export function sendReply(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, reply: Reply, options: SendOptions): Promise<void> {
  return new ResponseSequencer(rt, ctx, out, options.limit, options.proxied).reply(reply);
}

/** Answers with a gateway error in the one error shape. */
export function sendError(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, err: GatewayError, limit: number): Promise<void> {
  if (err.status >= 500) ctx.log.warn('request failed', { code: err.code, status: err.status, err: err.cause ?? err });
  return sendReply(rt, ctx, out, errorReply(ctx, err), { limit, proxied: false });
}
