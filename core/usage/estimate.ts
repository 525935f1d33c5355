/**
 * Usage when the upstream reported none: the prompt counted from the request, the answer from the
 * text the meter collected. The counts come from the tokenizer pool when the gateway has one
 * (`rt.tokens`), else from a length-based estimate (about 4 characters a token) that never fails.
 */
import type { GatewayContext } from '../context.js';
import type { Runtime } from '../runtime.js';
import type { Usage } from './types.js';
import type { UsageMeter } from './meter.js';

const roughTokens = (text: string): number => Math.ceil(text.length / 4);

/** The length-based estimate of a request's prompt (its messages, prompt or input), for when no tokenizer can answer. */
export function roughPrompt(body: Record<string, unknown>): number {
  return roughTokens(JSON.stringify(body.messages ?? body.prompt ?? body.input ?? ''));
}

export async function settleUsage(rt: Runtime, ctx: GatewayContext, meter: UsageMeter): Promise<Usage> {
  if (meter.usage !== undefined) return meter.usage;
  const route = ctx.route.kind === 'model' ? ctx.route.name : undefined;
  const body = ctx.body ?? {};
  const model = meter.model ?? (typeof body.model === 'string' ? body.model : '');
  let prompt: number;
  let completion: number;
  try {
    prompt = rt.tokens && route ? await rt.tokens.countPrompt(route, body) : roughPrompt(body);
    completion = rt.tokens ? await rt.tokens.countText(meter.text, model) : roughTokens(meter.text);
  } catch {
    // A busy tokenizer must not lose the request's usage: fall back to the estimate.
    prompt = roughPrompt(body);
    completion = roughTokens(meter.text);
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cached_tokens: 0, reasoning_tokens: 0, source: 'estimated' };
}
