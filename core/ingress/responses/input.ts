/**
 * Responses `input` → chat `messages`.
 *
 *   "text"                                  ► user message
 *   {role, content: "text"}  (type message) ► a message of that role (developer → system)
 *   content parts: input_text, output_text  ► text;  input_image ► image_url part (user only)
 *                  refusal (assistant)      ► the assistant's `refusal`
 *   function_call {call_id, name, arguments}► a tool call on the assistant turn before it
 *   function_call_output {call_id, output}  ► tool message
 *   reasoning                               ► dropped (chat takes no reasoning as input; the
 *                                             model reasons again if it must)
 *
 * Anything else (file inputs, item references, built-in tool calls and their outputs) cannot be
 * expressed as a chat message: 400 `unsupported_parameter` naming the item, never dropped.
 *
 * {@link inputItems} is the other direction the store needs: `input` as the list of items
 * OpenAI's `GET /v1/responses/{id}/input_items` shows (each with an id).
 */
import { Errors } from '../../errors.js';
import { isRecord, stringField } from '../../providers/openai-shape.js';
import { randomId } from './ids.js';
import type { IdFactory, Json } from './wire.js';

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

export function fail(message: string, param: string): never {
  throw Errors.badRequest(message, { param });
}

/** Well-formed Responses input that chat completions have no way to express. */
export function inexpressible(message: string, param: string): never {
  throw Errors.unsupportedParameter(message, { param });
}

/** The items of `input`: a string is one user message. */
export function itemsOf(input: unknown): unknown[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (!Array.isArray(input)) fail('`input` must be a string or an array of input items.', 'input');
  return input;
}

/**
 * @example
 *   chatMessages([{ role: 'user', content: 'Hi' }, { type: 'function_call_output', call_id: 'c1', output: '21' }])
 *   // [{ role: 'user', content: 'Hi' }, { role: 'tool', tool_call_id: 'c1', content: '21' }]
 */
export function chatMessages(items: unknown[], param = 'input'): Json[] {
  const out: Json[] = [];
  items.forEach((item, i) => {
    const at = `${param}[${i}]`;
    if (!isRecord(item)) fail(`${at} must be an object.`, at);
    const type = item.type ?? 'message';
    switch (type) {
      case 'message':
        out.push(message(item, at));
        break;
      case 'function_call':
        addToolCall(out, item, at);
        break;
      case 'function_call_output':
        out.push(toolMessage(item, at));
        break;
      case 'reasoning':
        break;
      default:
        inexpressible(`${at} is an input item type that cannot be sent to this provider.`, `${at}.type`);
    }
  });
  return out;
}

function message(item: Json, at: string): Json {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.has(role)) fail(`${at}.role must be "user", "assistant", "system" or "developer".`, `${at}.role`);
  const chatRole = role === 'developer' ? 'system' : role;
  const content = item.content;
  if (typeof content === 'string') return { role: chatRole, content };
  if (!Array.isArray(content)) fail(`${at}.content must be a string or an array of content parts.`, `${at}.content`);
  const parts: Json[] = [];
  let refusal: string | undefined;
  content.forEach((part, j) => {
    const pat = `${at}.content[${j}]`;
    if (!isRecord(part) || typeof part.type !== 'string') fail(`${pat} must be a content part with a type.`, pat);
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text': {
        const text = stringField(part, 'text');
        if (text === undefined) fail(`${pat}.text must be a string.`, `${pat}.text`);
        parts.push({ type: 'text', text });
        break;
      }
      case 'input_image':
        if (role !== 'user') inexpressible(`${pat}: images can only be sent in user messages to this provider.`, pat);
        parts.push(imagePart(part, pat));
        break;
      case 'refusal':
        if (role !== 'assistant') fail(`${pat}: a refusal can only be part of an assistant message.`, pat);
        refusal = stringField(part, 'refusal') ?? '';
        break;
      default:
        inexpressible(`${pat} is a content part type that cannot be sent to this provider.`, `${pat}.type`);
    }
  });
  // Only text: one string, the form every OpenAI-compatible server accepts (and the only one for
  // system and assistant turns on many of them).
  const onlyText = parts.every((p) => p.type === 'text');
  const out: Json = { role: chatRole, content: onlyText ? parts.map((p) => p.text as string).join('') : parts };
  if (refusal !== undefined) {
    out.refusal = refusal;
    if (parts.length === 0) out.content = null;
  }
  return out;
}

function imagePart(part: Json, at: string): Json {
  const url = stringField(part, 'image_url');
  // `file_id` points into OpenAI's Files API, which no other provider can read.
  if (url === undefined || url.length === 0) inexpressible(`${at}: only images given by image_url (a URL or a data URL) can be sent to this provider.`, `${at}.image_url`);
  const image: Json = { url };
  const detail = stringField(part, 'detail');
  if (detail !== undefined && detail !== 'auto') image.detail = detail;
  return { type: 'image_url', image_url: image };
}

/** A function call joins the assistant turn right before it (text and calls of one answer), or starts one. */
function addToolCall(out: Json[], item: Json, at: string): void {
  const callId = stringField(item, 'call_id');
  if (callId === undefined || callId.length === 0) fail(`${at}.call_id must be a non-empty string.`, `${at}.call_id`);
  const name = stringField(item, 'name');
  if (name === undefined || name.length === 0) fail(`${at}.name must be a non-empty string.`, `${at}.name`);
  const args = stringField(item, 'arguments');
  if (args === undefined) fail(`${at}.arguments must be a string.`, `${at}.arguments`);
  const call = { id: callId, type: 'function', function: { name, arguments: args } };
  const last = out.at(-1);
  if (last !== undefined && last.role === 'assistant') {
    last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
    if (last.content === '') last.content = null;
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolMessage(item: Json, at: string): Json {
  const callId = stringField(item, 'call_id');
  if (callId === undefined || callId.length === 0) fail(`${at}.call_id must be a non-empty string.`, `${at}.call_id`);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', tool_call_id: callId, content: output };
  if (!Array.isArray(output)) fail(`${at}.output must be a string or an array of content parts.`, `${at}.output`);
  const texts = output.map((part, j) => {
    const pat = `${at}.output[${j}]`;
    if (isRecord(part) && part.type === 'input_text' && typeof part.text === 'string') return part.text;
    // Chat tool messages hold text only.
    return inexpressible(`${pat}: only text can be sent back as a tool output to this provider.`, pat);
  });
  return { role: 'tool', tool_call_id: callId, content: texts.join('') };
}

/**
 * `input` as stored items: each gets an id (when it has none) and messages get content parts, the
 * way OpenAI lists a response's input items.
 *
 * @example inputItems('Hi', randomId) // [{ id: 'msg_…', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Hi' }] }]
 */
export function inputItems(input: unknown, newId: IdFactory = randomId): Json[] {
  return itemsOf(input).map((item) => {
    if (!isRecord(item)) return { type: 'unknown' };
    const type = item.type ?? 'message';
    if (type === 'message') {
      const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
      return { id: stringField(item, 'id') ?? newId('msg'), type: 'message', role: item.role, status: 'completed', content };
    }
    if (type === 'function_call') return { id: stringField(item, 'id') ?? newId('fc'), ...item, type, status: 'completed' };
    return { ...item, type };
  });
}
