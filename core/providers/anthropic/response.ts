/**
 * Anthropic message → OpenAI `chat.completion`.
 *
 * Text blocks join into `message.content`; `tool_use` blocks become `tool_calls` with their
 * `input` re-serialised as the JSON string OpenAI clients parse, except the answer tool of a
 * `response_format` call (json-output.ts), whose input is the message text. Thinking blocks are Anthropic
 * extras: dropped in strict mode, otherwise surfaced as `reasoning_content` (the field DeepSeek
 * and most OpenAI-compatible servers use). Redacted thinking carries no readable text and is
 * always dropped.
 */
import type { TranslateContext } from '../types.js';
import { finishReason } from './finish-reasons.js';
import { openaiUsage } from './usage.js';
import { EMPTY_USAGE, isRecord, mergeUsage, stringField, type Json } from './wire.js';
import { answerTool } from './json-output.js';

import { unixNow } from '../openai-shape.js';
export { unixNow };

/** `now` is injectable so golden tests can compare whole bodies. */
export function buildResponse(ctx: TranslateContext, body: unknown, now = unixNow()): Json {
  const answer = isRecord(body) ? body : {};
  const text: string[] = [];
  const thinking: string[] = [];
  const toolCalls: Json[] = [];
  // A `response_format` answer arrives as the input of its tool (json-output.ts): it is the text.
  const answerName = answerTool(ctx.request)?.name;
  let answered = false;
  for (const block of Array.isArray(answer.content) ? answer.content : []) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thinking.push(block.thinking);
    else if (block.type === 'tool_use' && answerName !== undefined && block.name === answerName) {
      answered = true;
      text.push(JSON.stringify(block.input ?? {}));
    }
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
    choices: [{ index: 0, message, logprobs: null, finish_reason: answerFinish(finishReason(answer.stop_reason), toolCalls.length, answered) }],
    usage: openaiUsage(mergeUsage(EMPTY_USAGE, answer.usage)),
  };
}

/** A turn that ended on the answer tool alone ended with the answer: `stop`, not `tool_calls`. */
export function answerFinish(finish: string, toolCalls: number, answered: boolean): string {
  return answered && finish === 'tool_calls' && toolCalls === 0 ? 'stop' : finish;
}
