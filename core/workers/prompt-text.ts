/**
 * What of a request body the model reads as input, per route: the texts to encode and the tokens
 * known without encoding. Runs on the main thread (a walk over references, no copies), so only
 * plain strings cross to a worker, never the whole body with its images and audio.
 *
 * Bodies are validated loosely upstream of this, so every shape is narrowed here: an unknown
 * part or item contributes the text it has (`text`, `refusal`, …) or nothing, and nothing throws.
 * Images, audio and files are not counted: their cost depends on size and detail, not on text.
 */
import type { ModelRoute } from '../routes.js';

export interface PromptParts {
  texts: string[];
  fixed: number;
}

/**
 * OpenAI's cookbook formula for chat models since gpt-3.5-turbo-0613: every message costs 3
 * tokens of framing (`<|start|>{role}<|message|>…<|end|>`), a `name` costs 1 more, and the reply
 * is primed with 3 (`<|start|>assistant<|message|>`).
 */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING = 3;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pushString(out: PromptParts, value: unknown): void {
  if (typeof value === 'string' && value.length > 0) out.texts.push(value);
}

/** A content part of any route: `{type:'text'|'input_text'|'output_text', text}`, `{type:'refusal', refusal}`. */
function pushPart(out: PromptParts, part: unknown): void {
  if (typeof part === 'string') return pushString(out, part);
  if (!isObject(part)) return;
  pushString(out, part.text);
  pushString(out, part.refusal);
}

/** String content or an array of parts. */
function pushContent(out: PromptParts, content: unknown): void {
  if (typeof content === 'string') return pushString(out, content);
  if (Array.isArray(content)) for (const part of content) pushPart(out, part);
}

/** `{name, arguments}` of a tool or function call. */
function pushCall(out: PromptParts, call: unknown): void {
  if (!isObject(call)) return;
  pushString(out, call.name);
  pushString(out, call.arguments);
}

function chatMessages(out: PromptParts, body: Json): void {
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const message of messages) {
      out.fixed += TOKENS_PER_MESSAGE;
      if (!isObject(message)) continue;
      pushString(out, message.role);
      pushContent(out, message.content);
      pushString(out, message.refusal);
      if (typeof message.name === 'string') {
        pushString(out, message.name);
        out.fixed += TOKENS_PER_NAME;
      }
      if (Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls) if (isObject(call)) pushCall(out, call.function);
      }
      pushCall(out, message.function_call);
    }
  }
  out.fixed += REPLY_PRIMING;
}

/**
 * `prompt` of completions, `input` of embeddings and moderations: a string, an array of strings,
 * a token array (its length is its count), an array of token arrays, or (moderations) an array of
 * content parts.
 */
function textOrTokens(out: PromptParts, value: unknown): void {
  if (typeof value === 'string') return pushString(out, value);
  if (!Array.isArray(value)) return;
  for (const item of value) {
    if (typeof item === 'number') out.fixed += 1;
    else if (Array.isArray(item)) out.fixed += item.length;
    else pushPart(out, item);
  }
}

/** One item of a Responses `input`: a message, a function call or its output, a reasoning item. */
function responsesItem(out: PromptParts, item: unknown): void {
  if (typeof item === 'string') return pushString(out, item);
  if (!isObject(item)) return;
  pushContent(out, item.content);
  pushString(out, item.text);
  if (item.type === 'function_call' || item.type === 'custom_tool_call') {
    pushString(out, item.name);
    pushString(out, item.arguments);
    pushString(out, item.input);
  }
  if (typeof item.output === 'string') pushString(out, item.output);
  else if (Array.isArray(item.output)) for (const part of item.output) pushPart(out, part);
  if (Array.isArray(item.summary)) for (const part of item.summary) pushPart(out, part);
}

function responsesInput(out: PromptParts, body: Json): void {
  pushString(out, body.instructions);
  const input = body.input;
  if (typeof input === 'string') return pushString(out, input);
  if (Array.isArray(input)) for (const item of input) responsesItem(out, item);
}

/**
 * An Anthropic Messages body: `system` (a string or text blocks), each message's content (text,
 * `tool_use` input, `tool_result` content), and the tool definitions the model also reads.
 */
function anthropicMessages(out: PromptParts, body: Json): void {
  pushContent(out, body.system);
  const block = (b: unknown): void => {
    if (!isObject(b)) return pushString(out, b);
    pushString(out, b.text);
    pushString(out, b.thinking);
    if (b.type === 'tool_use') {
      pushString(out, b.name);
      if (b.input !== undefined) out.texts.push(JSON.stringify(b.input));
    }
    if (b.type === 'tool_result') {
      if (Array.isArray(b.content)) for (const inner of b.content) block(inner);
      else pushString(out, b.content);
    }
  };
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      out.fixed += TOKENS_PER_MESSAGE;
      if (!isObject(message)) continue;
      if (Array.isArray(message.content)) for (const b of message.content) block(b);
      else pushString(out, message.content);
    }
  }
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (!isObject(tool)) continue;
      pushString(out, tool.name);
      pushString(out, tool.description);
      if (tool.input_schema !== undefined) out.texts.push(JSON.stringify(tool.input_schema));
    }
  }
  out.fixed += REPLY_PRIMING;
}

/** The input texts and fixed tokens of a request body on a model route. */
export function promptParts(route: ModelRoute, body: Json): PromptParts {
  const out: PromptParts = { texts: [], fixed: 0 };
  switch (route) {
    case 'chat.completions':
      chatMessages(out, body);
      break;
    case 'completions':
      textOrTokens(out, body.prompt);
      break;
    case 'embeddings':
    case 'moderations':
      textOrTokens(out, body.input);
      break;
    case 'responses':
      responsesInput(out, body);
      break;
    case 'messages':
    case 'messages.count_tokens':
      anthropicMessages(out, body);
      break;
  }
  return out;
}
