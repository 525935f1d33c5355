/**
 * Usage when the upstream reported none: the prompt counted from the request, the answer from the
 * text the meter collected. The counts come from the tokenizer pool when the gateway has one
 * (`rt.tokens`), else from a length-based estimate (about 4 characters a token) that never fails.
 */
import type { GatewayContext } from '../context.js';
import type { Runtime } from '../runtime.js';
import type { Usage } from './types.js';
import type { UsageMeter } from './meter.js';
import type { ModelRoute } from '../routes.js';

const roughTokens = (text: string): number => Math.ceil(text.length / 4);

/** The length-based estimate of a request's prompt (its messages, prompt or input), for when no tokenizer can answer. */
export function roughPrompt(body: Record<string, unknown>): number {
  return roughTokens(JSON.stringify(body.messages ?? body.prompt ?? body.input ?? ''));
}

/**
 * The output tokens a request may use: its own cap (times `n` choices) or `defaultMaxTokens`. One
 * definition for every governance estimate (rate-limit token reservations, budget reservations).
 */
export function outputAllowance(route: ModelRoute, body: Record<string, unknown>, defaultMaxTokens: number): number {
  if (route === 'embeddings' || route === 'moderations' || route === 'messages.count_tokens') return 0;
  const cap = count(body.max_completion_tokens) ?? count(body.max_tokens) ?? count(body.max_output_tokens) ?? defaultMaxTokens;
  const n = route === 'responses' ? undefined : count(body.n);
  return cap * (n !== undefined && n > 1 ? n : 1);
}

/** A token count a client wrote, rounded up; undefined when it is not one. */
function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : undefined;
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
