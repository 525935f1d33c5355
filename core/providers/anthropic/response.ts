/**
 * Anthropic message → OpenAI `chat.completion`.
 *
 * Text blocks join into `message.content`; `tool_use` blocks become `tool_calls` with their
 * `input` re-serialised as the JSON string OpenAI clients parse. Thinking blocks are Anthropic
 * extras: dropped in strict mode, otherwise surfaced as `reasoning_content` (the field DeepSeek
 * and most OpenAI-compatible servers use). Redacted thinking carries no readable text and is
 * always dropped.
 */
import type { TranslateContext } from '../types.js';
import { finishReason } from './finish-reasons.js';
import { openaiUsage } from './usage.js';
import { EMPTY_USAGE, isRecord, mergeUsage, stringField, type Json } from './wire.js';

import { unixNow } from '../openai-shape.js';
export { unixNow };

/** `now` is injectable so golden tests can compare whole bodies. */
export function buildResponse(ctx: TranslateContext, body: unknown, now = unixNow()): Json {
  const answer = isRecord(body) ? body : {};
  const text: string[] = [];
  const thinking: string[] = [];
  const toolCalls: Json[] = [];
  for (const block of Array.isArray(answer.content) ? answer.content : []) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thinking.push(block.thinking);
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: stringField(block, 'id') ?? '',
        type: 'function',
        function: { name: stringField(block, 'name') ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }

  const message: Json = { role: 'assistant', content: text.length > 0 ? text.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (!ctx.strict && thinking.length > 0) message.reasoning_content = thinking.join('');
  message.refusal = null;

  return {
    id: stringField(answer, 'id') ?? '',
    object: 'chat.completion',
    created: now,
    model: stringField(answer, 'model') ?? ctx.request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer.stop_reason) }],
    usage: openaiUsage(mergeUsage(EMPTY_USAGE, answer.usage)),
  };
}
