/**
 * Bedrock answers → OpenAI bodies, per route.
 *
 * Converse → `chat.completion`. Converse answers carry no id, so one is made (`chatcmpl-…`, as
 * OpenAI's look); `model` is the id the caller asked for. Text blocks join into `message.content`;
 * `toolUse` blocks become `tool_calls` with their `input` re-serialised as the JSON string OpenAI
 * clients parse (the answer tool of a `response_format` call is the message text instead). Reasoning blocks are model extras: dropped in strict mode, otherwise surfaced as
 * `reasoning_content` (the field DeepSeek and most OpenAI-compatible servers use); redacted
 * reasoning carries no readable text and is always dropped.
 *
 * InvokeModel embeddings → `list` of `embedding`:
 *   Titan  {embedding:[…], inputTextTokenCount}           → one item, usage from the count
 *   Cohere {embeddings:[[…],…]} or {embeddings:{float:[[…],…]}} → one item per text, no usage
 *          (Cohere's body has no token count; the gateway estimates it)
 * `encoding_format: 'base64'` packs each vector as little-endian float32 bytes, as OpenAI does.
 */
import { randomUUID } from 'node:crypto';
import { Errors } from '../../errors.js';
import { embeddingList, unixNow } from '../openai-shape.js';
import type { TranslateContext } from '../types.js';
import { finishReason } from './finish-reasons.js';
import { openaiUsage } from './usage.js';
import { isRecord, numberField, stringField, type Json } from './wire.js';
import { answerTool } from '../anthropic/json-output.js';
import { answerFinish } from '../anthropic/response.js';

export { unixNow };

/** A fresh OpenAI-style completion id; Bedrock gives none. */
export function completionId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '')}`;
}

/**
 * The OpenAI body for a 2xx Bedrock answer. `now` is injectable so golden tests can compare bodies.
 *
 * @example buildResponse(ctx, { output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } }, stopReason: 'end_turn' })
 */
export function buildResponse(ctx: TranslateContext, body: unknown, now = unixNow()): Json {
  return ctx.route === 'embeddings' ? embeddingsResponse(ctx, body) : chatResponse(ctx, body, now);
}

function chatResponse(ctx: TranslateContext, body: unknown, now: number): Json {
  const answer = isRecord(body) ? body : {};
  const output = isRecord(answer.output) ? answer.output : {};
  const reply = isRecord(output.message) ? output.message : {};
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Json[] = [];
  // A `response_format` answer arrives as the input of its tool: it is the text.
  const answerName = answerTool(ctx.request)?.name;
  let answered = false;
  for (const block of Array.isArray(reply.content) ? reply.content : []) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') text.push(block.text);
    else if (isRecord(block.toolUse) && answerName !== undefined && block.toolUse.name === answerName) {
      answered = true;
      text.push(JSON.stringify(block.toolUse.input ?? {}));
    }
    else if (isRecord(block.toolUse)) {
      const use = block.toolUse;
      toolCalls.push({
        id: stringField(use, 'toolUseId') ?? '',
        type: 'function',
        function: { name: stringField(use, 'name') ?? '', arguments: JSON.stringify(use.input ?? {}) },
      });
    } else if (isRecord(block.reasoningContent) && isRecord(block.reasoningContent.reasoningText)) {
      const thought = stringField(block.reasoningContent.reasoningText, 'text');
      if (thought !== undefined) reasoning.push(thought);
    }
  }

  const message: Json = { role: 'assistant', content: text.length > 0 ? text.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (!ctx.strict && reasoning.length > 0) message.reasoning_content = reasoning.join('');
  message.refusal = null;

  return {
    id: completionId(),
    object: 'chat.completion',
    created: now,
    model: ctx.request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answerFinish(finishReason(answer.stopReason), toolCalls.length, answered) }],
    usage: openaiUsage(answer.usage),
  };
}

function embeddingsResponse(ctx: TranslateContext, body: unknown): Json {
  const answer = isRecord(body) ? body : {};
  const model = typeof ctx.request.model === 'string' ? ctx.request.model : '';
  if (Array.isArray(answer.embedding)) {
    return embeddingList([answer.embedding as number[]], model, ctx.request.encoding_format, numberField(answer, 'inputTextTokenCount'));
  }
  const vectors = cohereVectors(answer.embeddings);
  if (vectors === undefined) {
    throw Errors.upstreamInvalidResponse('Bedrock answered an embeddings call without an embedding or embeddings field.');
  }
  return embeddingList(vectors as number[][], model, ctx.request.encoding_format);
}

/** Cohere's plain `[[…]]`, or `{float:[[…]]}` when the answer is typed (`embedding_types`, Embed v4). */
function cohereVectors(embeddings: unknown): unknown[][] | undefined {
  const list = isRecord(embeddings) ? embeddings.float : embeddings;
  if (!Array.isArray(list) || !list.every(Array.isArray)) return undefined;
  return list as unknown[][];
}
