/**
 * OpenAI chat completions and legacy completions, non-stream and stream.
 *
 * Replies are derived from the request alone (`Mock reply to: <first 40 chars of the last user
 * message>`) and usage is an estimate over the same text, so a request always gets the same
 * content and the same usage whether it streams or not. The stream frames live in
 * `openai-stream.ts`; this file decides what the answer is.
 */

import type { Directives } from './directives.js';
import { mockId, unixNow } from './ids.js';
import { openaiBadRequest, openaiDialect, openaiMissing } from './openai-errors.js';
import { chatStream, completionStream } from './openai-stream.js';
import { ok, type JsonObject, type MockReply, type MockRequest, type Route } from './route.js';
import { clip, contentText, estimateTokens, isRecord, promptText, QUOTE_CHARS } from './text.js';

/** Tokens OpenAI charges per chat message for role and framing, on top of its text. */
const MESSAGE_OVERHEAD_TOKENS = 3;
/** Upper bound on `n`, as OpenAI's own limit, so a typo cannot allocate millions of choices. */
const MAX_CHOICES = 128;

export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** Everything a chat reply needs, shared by the JSON body and the stream frames. */
export interface ChatAnswer {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly n: number;
  /** The reply text, or null when the answer is a tool call. */
  readonly content: string | null;
  readonly toolCall: ToolCall | undefined;
  readonly usage: JsonObject;
}

export interface CompletionAnswer {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  /** One text per choice, in choice-index order. */
  readonly texts: readonly string[];
  readonly usage: JsonObject;
}

export const chatCompletionsRoute: Route = { dialect: openaiDialect, json: true, handle: chatCompletions };
export const completionsRoute: Route = { dialect: openaiDialect, json: true, handle: completions };

function chatCompletions(request: MockRequest): MockReply {
  const body = request.json;
  if (typeof body.model !== 'string') return openaiBadRequest('you must provide a model parameter', null);
  if (!Array.isArray(body.messages)) return openaiMissing('messages');
  const answer = chatAnswer(body, body.messages, request.directives);
  if (body.stream === true) {
    return chatStream(answer, { chunks: request.directives.chunks, includeUsage: includeUsage(body) });
  }
  return ok({
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    system_fingerprint: 'fp_mock',
    choices: Array.from({ length: answer.n }, (_, index) => chatChoice(answer, index)),
    usage: answer.usage,
  });
}

function chatChoice(answer: ChatAnswer, index: number): JsonObject {
  const call = answer.toolCall;
  const message =
    call === undefined
      ? { role: 'assistant', content: answer.content, refusal: null }
      : {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
          refusal: null,
        };
  return { index, message, logprobs: null, finish_reason: call === undefined ? 'stop' : 'tool_calls' };
}

function chatAnswer(body: JsonObject, messages: unknown[], directives: Directives): ChatAnswer {
  let promptTokens = 0;
  let lastUser = '';
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const text = contentText(message.content);
    promptTokens += estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
    if (message.role === 'user') lastUser = text;
  }
  const n = choiceCount(body.n);
  const fn = directives.toolCall ? firstFunction(body.tools) : undefined;
  const toolCall =
    fn === undefined ? undefined : { id: mockId('call_'), name: fn.name, arguments: JSON.stringify(mockArguments(fn.parameters)) };
  const content = toolCall === undefined ? `Mock reply to: ${clip(lastUser, QUOTE_CHARS)}` : null;
  const completionTokens = estimateTokens(content ?? toolCall?.arguments ?? '') * n;
  return {
    id: mockId('chatcmpl-'),
    created: unixNow(),
    model: body.model as string,
    n,
    content,
    toolCall,
    usage: chatUsage(promptTokens, completionTokens),
  };
}

function chatUsage(prompt: number, completion: number): JsonObject {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function completions(request: MockRequest): MockReply {
  const body = request.json;
  if (typeof body.model !== 'string') return openaiBadRequest('you must provide a model parameter', null);
  if (body.prompt === undefined || body.prompt === null) return openaiMissing('prompt');
  const prompts = promptList(body.prompt);
  const n = choiceCount(body.n);
  const texts: string[] = [];
  let promptTokens = 0;
  let completionTokens = 0;
  for (const prompt of prompts) {
    promptTokens += estimateTokens(prompt);
    const text = `Mock completion of: ${clip(prompt, QUOTE_CHARS)}`;
    // OpenAI orders choices prompt-major: all n choices of prompt 0, then prompt 1.
    for (let j = 0; j < n; j++) texts.push(text);
    completionTokens += estimateTokens(text) * n;
  }
  const answer: CompletionAnswer = {
    id: mockId('cmpl-'),
    created: unixNow(),
    model: body.model,
    texts,
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
  if (body.stream === true) {
    return completionStream(answer, { chunks: request.directives.chunks, includeUsage: includeUsage(body) });
  }
  return ok({
    id: answer.id,
    object: 'text_completion',
    created: answer.created,
    model: answer.model,
    system_fingerprint: 'fp_mock',
    choices: texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' })),
    usage: answer.usage,
  });
}

/** `prompt` may be a string, strings, token ids, or arrays of token ids. */
function promptList(prompt: unknown): string[] {
  if (!Array.isArray(prompt)) return [promptText(prompt)];
  if (prompt.length === 0 || prompt.every((item) => typeof item === 'number')) return [promptText(prompt)];
  return prompt.map(promptText);
}

function includeUsage(body: JsonObject): boolean {
  return isRecord(body.stream_options) && body.stream_options.include_usage === true;
}

function choiceCount(n: unknown): number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_CHOICES) : 1;
}

/** The first `{type:"function", function:{name}}` in `tools`, which `tool_call=1` calls. */
function firstFunction(tools: unknown): { name: string; parameters: unknown } | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const tool of tools) {
    if (isRecord(tool) && isRecord(tool.function) && typeof tool.function.name === 'string') {
      return { name: tool.function.name, parameters: tool.function.parameters };
    }
  }
  return undefined;
}

/** Arguments matching the function's JSON schema properties: `{"location":"Paris"}`-like. */
function mockArguments(parameters: unknown): JsonObject {
  const args: JsonObject = {};
  if (!isRecord(parameters) || !isRecord(parameters.properties)) return args;
  for (const [name, schema] of Object.entries(parameters.properties)) args[name] = mockValue(schema);
  return args;
}

function mockValue(schema: unknown): unknown {
  if (!isRecord(schema)) return 'Paris';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return mockArguments(schema);
    default:
      return 'Paris';
  }
}
