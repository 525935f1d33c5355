/**
 * One upstream attempt, start to end: build the call (build.ts), run `onUpstreamRequest`, sign,
 * dispatch it (call.ts), and let the response handling (answer.ts) either commit the answer to
 * the client through the response sequencer or hand it back to the router.
 *
 * A call in a client dialect the gateway answers itself (`count_tokens` for a provider without
 * it) is the ingress's (core/ingress), not an upstream call.
 */
import type { GatewayContext } from '../context.js';
import type { Target } from '../router/types.js';
import type { ResponseWriter } from '../response-writer.js';
import type { Runtime } from '../runtime.js';
import { Errors, isGatewayError } from '../errors.js';
import { isPromise, runHooks } from '../pipeline.js';
import { ALL_PLUGINS, ResponseSequencer } from '../response/sequencer.js';
import { UsageMeter } from '../usage/meter.js';
import { answeredLocally, countLocally } from '../ingress/index.js';
import { buildCall, isNative, modelRoute, signCall } from './build.js';
import { UpstreamCall } from './call.js';
import { UpstreamAnswer, type AttemptResult } from './answer.js';

export type { AttemptResult } from './answer.js';

export interface AttemptOptions {
  /** 0 for the first call; retries and fallbacks count up. */
  number: number;
  /** The last option: whatever comes back is committed to the client. */
  final: boolean;
}

const SENT: AttemptResult = Object.freeze({ kind: 'sent' });

/** Builds and runs one attempt. Never throws: failures come back as results. */
export async function runAttempt(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, target: Target, options: AttemptOptions): Promise<AttemptResult> {
  const adapter = rt.providers.get(target.provider);
  if (adapter === undefined) {
    return { kind: 'failed', error: Errors.unknownProvider('The provider named for this target is not a known provider.', { param: 'x-gateway-provider' }) };
  }
  const route = modelRoute(ctx);
  if (!isNative(adapter, route) && answeredLocally(route)) {
    await new ResponseSequencer(rt, ctx, out, ALL_PLUGINS, true).reply(await countLocally(rt, ctx));
    return SENT;
  }
  const built = buildCall(rt, ctx, adapter, target, options.number);
  if (isGatewayError(built)) return { kind: 'failed', error: built };
  ctx.target = target;
  ctx.provider = target.provider;
  ctx.optionPath = target.path ?? 'config';

  if (rt.pipeline.onUpstreamRequest !== null) {
    const attempt = built.attempt;
    const ran = runHooks(rt.pipeline.onUpstreamRequest, ctx, (fn) => fn(ctx, attempt));
    const stop = isPromise(ran) ? await ran : ran;
    if (stop?.error) return { kind: 'failed', error: stop.error };
    if (stop?.reply) {
      // A plugin answered for the upstream (e.g. a cache hit): it is this attempt's committed answer.
      ctx.source = 'plugin';
      await new ResponseSequencer(rt, ctx, out, ALL_PLUGINS, true).reply(stop.reply);
      return SENT;
    }
  }
  if (ctx.aborted) return SENT;
  // Signed last: the signature covers the call exactly as it goes out.
  if (built.adapter.sign !== undefined) {
    const unsigned = await signCall(built, ctx);
    if (unsigned !== undefined) return { kind: 'failed', error: unsigned };
  }

  const timeout = target.requestTimeout ?? rt.config.upstream.request_timeout;
  return new Promise<AttemptResult>((resolve) => {
    const meter = (rt.pipeline.metering || ctx.meterUsage) && route !== undefined && route !== 'messages.count_tokens' ? new UsageMeter(built.inject) : undefined;
    const call = new UpstreamCall(ctx);
    call.dispatch(rt, built, timeout, new UpstreamAnswer(rt, ctx, out, built, call, options.final, resolve, meter));
  });
}
