/**
 * `count_tokens` for a provider without it: the gateway's tokenizer counts the prompt (the same
 * count rate limits and estimates use), so the answer is close but not the provider's own. The
 * ingress answers it; no upstream is called.
 */
import type { GatewayContext } from '../context.js';
import type { Runtime } from '../runtime.js';
import { reply, type Reply } from '../reply.js';
import { roughPrompt } from '../usage/estimate.js';

export async function countLocally(rt: Runtime, ctx: GatewayContext): Promise<Reply> {
  const body = ctx.body ?? {};
  let tokens: number;
  try {
    tokens = rt.tokens ? await rt.tokens.countPrompt('messages.count_tokens', body) : roughPrompt(body);
  } catch {
    tokens = roughPrompt(body); // a busy tokenizer still gets an answer
  }
  ctx.source = 'gateway';
  return reply(200, Buffer.from(JSON.stringify({ input_tokens: tokens })), { 'content-type': 'application/json', 'x-gateway-token-count': 'estimated' });
}
