/**
 * Chat completion usage → Responses usage. Both count the whole prompt (cached share inside it),
 * so the numbers carry over; only the names change:
 *
 *   prompt_tokens (+ prompt_tokens_details.cached_tokens)         ► input_tokens (+ input_tokens_details)
 *   completion_tokens (+ completion_tokens_details.reasoning_tokens) ► output_tokens (+ output_tokens_details)
 */
import { isRecord } from '../../providers/openai-shape.js';
import type { ResponsesUsage } from './wire.js';

/** @example responsesUsage({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }).total_tokens // 17 */
export function responsesUsage(raw: unknown): ResponsesUsage {
  const u = isRecord(raw) ? raw : {};
  const input = count(u.prompt_tokens);
  const output = count(u.completion_tokens);
  const cached = isRecord(u.prompt_tokens_details) ? Math.min(count(u.prompt_tokens_details.cached_tokens), input) : 0;
  const reasoning = isRecord(u.completion_tokens_details) ? count(u.completion_tokens_details.reasoning_tokens) : 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: count(u.total_tokens) || input + output,
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
