/**
 * The token reservation of a request before it is sent: its prompt plus the most it may answer.
 * After the response, the real usage replaces the estimate (see index.ts, onDone).
 *
 * The prompt is counted by the gateway's token counter when the app has one (a worker pool, so a
 * 100 KB prompt does not stall the event loop), else estimated as a quarter of the JSON body's
 * length (OpenAI's rule of thumb, and an over-estimate for JSON, which is the safe side).
 */
import { outputAllowance, type GatewayApp, type GatewayContext, type ModelRoute } from '../../core/index.js';

/** The part of the token counter this plugin uses; `GatewayApp.tokens` may not exist yet. */
interface PromptCounter {
  countPrompt(route: ModelRoute, body: Record<string, unknown>): Promise<number>;
}

export type TokenEstimator = (ctx: GatewayContext) => number | Promise<number>;

export function createEstimator(app: GatewayApp, defaultMaxTokens: number): TokenEstimator {
  const counter = (app as GatewayApp & { readonly tokens?: PromptCounter }).tokens;

  return function estimateTokens(ctx) {
    const route = ctx.route;
    const body = ctx.body;
    // Pass-through bodies are opaque (files, audio): nothing is reserved; the usage, when the
    // core reports one, is charged afterwards, and a limit already in debt refuses the call.
    if (route.kind !== 'model' || body === undefined) return 0;
    const output = outputAllowance(route.name, body, defaultMaxTokens);
    const rough = Math.ceil((ctx.rawBody?.length ?? 0) / 4);
    if (counter === undefined) return rough + output;
    return counter.countPrompt(route.name, body).then(
      (prompt) => prompt + output,
      // A full counting queue must not turn a rate-limit check into a failure: estimate instead.
      () => rough + output,
    );
  };
}
