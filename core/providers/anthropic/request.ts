/**
 * OpenAI chat completion request → Anthropic `POST /messages` body.
 *
 * The body is built from an allow-list: Anthropic rejects unknown fields with a 400, so OpenAI
 * parameters it has no twin for (`seed`, `presence_penalty`, …) are left out. What would change the
 * answer is not dropped in silence (json-output.ts): `response_format` becomes a forced answer
 * tool, and `n > 1` or `logprobs` are a 400 `unsupported_parameter`. `top_k` (an extra some
 * OpenAI-compatible servers take) is sent only without strict compliance.
 *
 * Message shape rules that Anthropic enforces and OpenAI does not:
 * - `system`/`developer` messages are a top-level `system` field, not turns;
 * - turns alternate user/assistant, so consecutive same-role turns merge (a `tool` message is a
 *   user turn holding a `tool_result` block);
 * - in a user turn, `tool_result` blocks come before any other block;
 * - text blocks must not be empty.
 */
import { Errors } from '../../errors.js';
import type { TranslateContext, TranslatedRequest } from '../types.js';
import { isRecord, stringField, type ImageSource, type Json, type RequestBlock, type RequestMessage } from './wire.js';
import { maxTokens, parseArguments, pushTurn, stopSequences, texts } from '../openai-shape.js';
import { answerTool, hasOwnTools, refuseUnanswerable, type AnswerTool } from './json-output.js';

/** Anthropic requires `max_tokens`; OpenAI callers usually omit it. */
export const DEFAULT_MAX_TOKENS = 4096;

export function buildRequest(ctx: TranslateContext): TranslatedRequest {
  const req = ctx.request;
  refuseUnanswerable(req, 'Anthropic');
  const { system, messages } = splitMessages(Array.isArray(req.messages) ? req.messages : []);
  const body: Json = { model: req.model, messages };
  if (system.length > 0) body.system = system;
  body.max_tokens = maxTokens(req) ?? DEFAULT_MAX_TOKENS;

  const stop = stopSequences(req.stop);
  if (stop.length > 0) body.stop_sequences = stop;
  if (typeof req.temperature === 'number') body.temperature = req.temperature;
  if (typeof req.top_p === 'number') body.top_p = req.top_p;
  if (req.stream === true) body.stream = true;
  if (typeof req.user === 'string' && req.user.length > 0) body.metadata = { user_id: req.user };

  if (!ctx.strict && typeof req.top_k === 'number') body.top_k = req.top_k;

  const tools = toolList(req.tools);
  const answer = answerTool(req);
  let choice = toolChoice(req.tool_choice, req.parallel_tool_calls);
  if (answer !== undefined) {
    tools.push({ name: answer.name, description: answer.description, input_schema: answer.schema });
    choice = answerChoice(answer, choice, hasOwnTools(req));
  }
  if (tools.length > 0) body.tools = tools;
  // Anthropic rejects tool_choice without tools; OpenAI ignores it.
  if (choice !== undefined && tools.length > 0) body.tool_choice = choice;

  // Extended thinking is an Anthropic extra; strict OpenAI compliance means the client did not opt in.
  if (!ctx.strict && isRecord(req.thinking)) body.thinking = req.thinking;
  return { path: '/messages', body };
}

function splitMessages(input: unknown[]): { system: { type: 'text'; text: string }[]; messages: RequestMessage[] } {
  const system: { type: 'text'; text: string }[] = [];
  const messages: RequestMessage[] = [];
  for (const message of input) {
    if (!isRecord(message)) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of texts(message.content)) system.push({ type: 'text', text });
        break;
      case 'user':
        pushTurn(messages, 'user', userBlocks(message.content), isToolResult);
        break;
      case 'assistant':
        pushTurn(messages, 'assistant', assistantBlocks(message));
        break;
      case 'tool':
        pushTurn(messages, 'user', [toolResult(message)], isToolResult);
        break;
      default:
        break;
    }
  }
  return { system, messages };
}

/** Anthropic wants tool results first in a merged user turn. */
function isToolResult(block: RequestBlock): boolean {
  return block.type === 'tool_result';
}

function userBlocks(content: unknown): RequestBlock[] {
  if (!Array.isArray(content)) return texts(content).map((text) => ({ type: 'text', text }));
  const blocks: RequestBlock[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string' && part.text.length > 0) {
      blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'image_url') {
      const block = imageBlock(part.image_url);
      if (block !== undefined) blocks.push(block);
    }
  }
  return blocks;
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** `image_url` (`{url}` or a bare string): a data URL becomes a base64 source, anything else a url source. */
function imageBlock(imageUrl: unknown): RequestBlock | undefined {
  const url = typeof imageUrl === 'string' ? imageUrl : isRecord(imageUrl) ? stringField(imageUrl, 'url') : undefined;
  if (url === undefined || url.length === 0) return undefined;
  const [, mediaType, data] = DATA_URL.exec(url) ?? [];
  if (mediaType === undefined || data === undefined) return { type: 'image', source: { type: 'url', url } };
  const source: ImageSource = { type: 'base64', media_type: mediaType, data };
  // PDFs ride in image_url in some OpenAI clients; Anthropic takes them only as documents.
  return mediaType === 'application/pdf' ? { type: 'document', source } : { type: 'image', source };
}

function assistantBlocks(message: Json): RequestBlock[] {
  const blocks: RequestBlock[] = texts(message.content).map((text) => ({ type: 'text', text }));
  if (!Array.isArray(message.tool_calls)) return blocks;
  for (const call of message.tool_calls) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    blocks.push({
      type: 'tool_use',
      id: stringField(call, 'id') ?? '',
      name: stringField(call.function, 'name') ?? '',
      input: parseArguments(call.function.arguments),
    });
  }
  return blocks;
}


function toolResult(message: Json): RequestBlock {
  const id = stringField(message, 'tool_call_id') ?? '';
  const content = message.content;
  if (typeof content === 'string' || !Array.isArray(content)) {
    return { type: 'tool_result', tool_use_id: id, content: typeof content === 'string' ? content : '' };
  }
  return { type: 'tool_result', tool_use_id: id, content: texts(content).map((text) => ({ type: 'text', text })) };
}

function toolList(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  const out: Json[] = [];
  for (const [i, tool] of tools.entries()) {
    if (isRecord(tool) && tool.type !== 'function') {
      // GPT-5's custom (free-form) tools and any later kind: Anthropic runs function tools only.
      throw Errors.unsupportedParameter('Anthropic takes function tools only; other tool types cannot be translated.', { param: `tools[${i}].type` });
    }
    if (!isRecord(tool) || !isRecord(tool.function)) continue;
    const fn = tool.function;
    const name = stringField(fn, 'name');
    if (name === undefined) continue;
    const mapped: Json = { name };
    const description = stringField(fn, 'description');
    if (description !== undefined) mapped.description = description;
    // Anthropic requires a schema; a parameterless OpenAI function means "no arguments".
    mapped.input_schema = isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
    out.push(mapped);
  }
  return out;
}

function toolChoice(choice: unknown, parallel: unknown): Json | undefined {
  let mapped: Json | undefined;
  if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (choice === 'none') mapped = { type: 'none' };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    mapped = { type: 'tool', name: choice.function.name };
  }
  // Anthropic puts the parallel switch inside tool_choice; `none` calls no tool, so it has none.
  if (parallel === false && mapped?.type !== 'none') mapped = { ...(mapped ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return mapped;
}

/**
 * tool_choice with an answer tool: alone, it is forced; beside the caller's tools, the model must
 * call one of them or answer (`any`), unless the caller named a function, which stays forced.
 */
function answerChoice(answer: AnswerTool, choice: Json | undefined, ownTools: boolean): Json {
  if (ownTools && choice?.type === 'tool') return choice;
  if (ownTools && choice?.type !== 'none') return { type: 'any', ...(choice?.disable_parallel_tool_use === true ? { disable_parallel_tool_use: true } : {}) };
  return { type: 'tool', name: answer.name, disable_parallel_tool_use: true };
}
