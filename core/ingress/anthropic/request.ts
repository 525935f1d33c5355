/**
 * Anthropic Messages request → OpenAI chat completions body.
 *
 *   system (string | text blocks) ──► one leading `system` message (blocks joined with "\n\n")
 *   user:  text, image ─────────────► `user` message (a plain string when it is only text)
 *          tool_result ─────────────► `tool` messages, before the rest of that user turn
 *   assistant: text, tool_use ──────► `assistant` message with `content` and `tool_calls`
 *              thinking, redacted_thinking ► dropped (OpenAI takes no reasoning as input)
 *   tools, tool_choice ─────────────► function tools, 'auto' | 'required' | 'none' | {function}
 *   max_tokens, temperature, top_p ► unchanged;  stop_sequences ► stop
 *   top_k ► unchanged only without strict compliance (OpenAI's API has no top_k: under strict
 *           compliance it is a 400 `unsupported_parameter`, not a field the upstream rejects or ignores)
 *   metadata.user_id ► user;  stream ► stream + stream_options.include_usage
 *   thinking.budget_tokens ► reasoning_effort (only without strict compliance)
 *
 * Anything that would change the answer and has no OpenAI twin (documents, images inside tool
 * results, server tools, unknown block types) is a 400 naming the field, never silently dropped.
 *
 * Dropped because they only mean something to Anthropic's own servers or are pure hints:
 * `service_tier` (Anthropic's tiers are not OpenAI's), `container`, `mcp_servers`,
 * `context_management`, `cache_control` (here and on blocks and tools), `citations` on blocks,
 * `metadata` fields other than `user_id`, and `thinking` under strict compliance.
 *
 * Not expressible and passed as is: a final assistant message (Anthropic "prefill"); OpenAI reads
 * it as an earlier turn rather than text to continue.
 */
import { Errors } from '../../errors.js';
import { isRecord, stringField } from '../../providers/openai-shape.js';
import type { Json } from './wire.js';

/** Budget ceilings for `reasoning_effort`: ≤ 4096 is low, ≤ 16384 medium, above that high. */
const LOW_BUDGET = 4096;
const MEDIUM_BUDGET = 16384;

/**
 * @example
 *   buildChatRequest({ model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }, { strict: true })
 *   // { model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 64 }
 */
export function buildChatRequest(body: Json, options: { strict: boolean }): Json {
  if (!Array.isArray(body.messages)) fail('`messages` must be an array of messages.', 'messages');
  const out: Json = { model: body.model, messages: [...systemMessage(body.system), ...chatMessages(body.messages)] };

  for (const key of ['max_tokens', 'temperature', 'top_p'] as const) {
    if (body[key] !== undefined) out[key] = body[key];
  }
  if (body.top_k !== undefined && body.top_k !== null) {
    if (options.strict) {
      inexpressible('top_k has no equivalent in the OpenAI chat API; send x-gateway-strict-provider-compliance: false to forward it as is.', 'top_k');
    }
    out.top_k = body.top_k;
  }
  const stop = stopSequences(body.stop_sequences);
  if (stop !== undefined) out.stop = stop;
  if (body.stream === true) {
    out.stream = true;
    // Anthropic's stream always ends with usage; OpenAI sends it only when asked.
    out.stream_options = { include_usage: true };
  }
  const user = isRecord(body.metadata) ? stringField(body.metadata, 'user_id') : undefined;
  if (user !== undefined) out.user = user;

  const tools = chatTools(body.tools);
  // OpenAI rejects an empty `tools` array and any tool_choice without tools; with no tool to
  // call, neither can change the answer.
  if (tools.length > 0) {
    out.tools = tools;
    Object.assign(out, chatToolChoice(body.tool_choice));
  }

  const effort = reasoningEffort(body.thinking, options.strict);
  if (effort !== undefined) out.reasoning_effort = effort;
  return out;
}

function fail(message: string, param: string): never {
  throw Errors.badRequest(message, { param });
}

/** Well-formed Anthropic input that OpenAI's chat API has no way to express. */
function inexpressible(message: string, param: string): never {
  throw Errors.unsupportedParameter(message, { param });
}

function systemMessage(system: unknown): Json[] {
  if (system === undefined || system === null) return [];
  let text: string;
  if (typeof system === 'string') text = system;
  else if (Array.isArray(system)) text = joinTexts(system.map((block, i) => textOf(block, `system[${i}]`)));
  else fail('`system` must be a string or an array of text blocks.', 'system');
  return text.length > 0 ? [{ role: 'system', content: text }] : [];
}

/** User-written pieces are separate paragraphs; empty ones add nothing. */
function joinTexts(pieces: string[]): string {
  return pieces.filter((text) => text.length > 0).join('\n\n');
}

function chatMessages(messages: unknown[]): Json[] {
  const out: Json[] = [];
  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(message)) fail(`${param} must be an object.`, param);
    if (message.role === 'user') out.push(...userMessages(message.content, param));
    else if (message.role === 'assistant') out.push(assistantMessage(message.content, param));
    else fail(`${param}.role must be "user" or "assistant".`, `${param}.role`);
  });
  return out;
}

/** A content array with every element an object that names its `type`. */
function blocksOf(content: unknown, param: string): (Json & { type: string })[] {
  if (!Array.isArray(content)) fail(`${param}.content must be a string or an array of content blocks.`, `${param}.content`);
  return content.map((block, j) => {
    const at = `${param}.content[${j}]`;
    if (!isRecord(block) || typeof block.type !== 'string') fail(`${at} must be a content block with a type.`, at);
    return block as Json & { type: string };
  });
}

function textOf(block: unknown, param: string): string {
  if (!isRecord(block) || block.type !== 'text') fail(`${param} must be a text block.`, param);
  if (typeof block.text !== 'string') fail(`${param}.text must be a string.`, `${param}.text`);
  return block.text;
}

function unsupported(type: string, role: string, param: string): never {
  // The type is the caller's: named by the param, not echoed.
  inexpressible(`${param} is a content block type that cannot be sent to this provider in ${role === 'user' || role === 'assistant' ? role : 'these'} messages.`, param);
}

/**
 * One Anthropic user turn → zero or more `tool` messages, then the user message. OpenAI wants each
 * tool answer right after the assistant turn that called it, so tool results go first, in order.
 */
function userMessages(content: unknown, param: string): Json[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const toolMessages: Json[] = [];
  const parts: Json[] = [];
  blocksOf(content, param).forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    switch (block.type) {
      case 'text': {
        const text = textOf(block, at);
        if (text.length > 0) parts.push({ type: 'text', text });
        break;
      }
      case 'image':
        parts.push(imagePart(block, at));
        break;
      case 'tool_result':
        toolMessages.push(toolMessage(block, at));
        break;
      default:
        unsupported(block.type, 'user', at);
    }
  });
  if (parts.length === 0 && toolMessages.length > 0) return toolMessages;
  return [...toolMessages, { role: 'user', content: userContent(parts) }];
}

/** Only text: one string, the form every OpenAI-compatible server accepts. Otherwise parts. */
function userContent(parts: Json[]): string | Json[] {
  if (!parts.every((part) => part.type === 'text')) return parts;
  return joinTexts(parts.map((part) => part.text as string));
}

function imagePart(block: Json, param: string): Json {
  const source = block.source;
  if (isRecord(source)) {
    const mediaType = stringField(source, 'media_type');
    const data = stringField(source, 'data');
    if (source.type === 'base64' && mediaType !== undefined && data !== undefined) {
      return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
    }
    const url = stringField(source, 'url');
    if (source.type === 'url' && url !== undefined) return { type: 'image_url', image_url: { url } };
  }
  // `file` sources point into Anthropic's Files API, which no other provider can read.
  return fail(`${param}.source must be a base64 or url image source.`, `${param}.source`);
}

/**
 * `is_error` has no OpenAI field; the content is kept as is, since it is what tells the model
 * what went wrong.
 */
function toolMessage(block: Json, param: string): Json {
  const id = stringField(block, 'tool_use_id');
  if (id === undefined || id.length === 0) fail(`${param}.tool_use_id must be a non-empty string.`, `${param}.tool_use_id`);
  return { role: 'tool', tool_call_id: id, content: toolResultText(block.content, param) };
}

function toolResultText(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) fail(`${param}.content must be a string or an array of text blocks.`, `${param}.content`);
  const pieces = content.map((block, k) => {
    const at = `${param}.content[${k}]`;
    if (isRecord(block) && block.type === 'image') {
      inexpressible(`${at}: images inside a tool_result cannot be sent to this provider (OpenAI tool messages hold text only).`, at);
    }
    return textOf(block, at);
  });
  return joinTexts(pieces);
}

function assistantMessage(content: unknown, param: string): Json {
  if (typeof content === 'string') return { role: 'assistant', content };
  const text: string[] = [];
  const calls: Json[] = [];
  blocksOf(content, param).forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    switch (block.type) {
      case 'text':
        text.push(textOf(block, at));
        break;
      case 'tool_use':
        calls.push(toolCall(block, at));
        break;
      case 'thinking':
      case 'redacted_thinking':
        break; // OpenAI has no way to feed reasoning back; the model re-reasons if it must.
      default:
        unsupported(block.type, 'assistant', at);
    }
  });
  // The model wrote these pieces as one answer (citations split it into blocks): no separator.
  const joined = text.join('');
  // OpenAI allows null content only beside tool calls.
  const message: Json = { role: 'assistant', content: joined.length > 0 ? joined : calls.length > 0 ? null : '' };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function toolCall(block: Json, param: string): Json {
  const id = stringField(block, 'id');
  if (id === undefined || id.length === 0) fail(`${param}.id must be a non-empty string.`, `${param}.id`);
  const name = stringField(block, 'name');
  if (name === undefined || name.length === 0) fail(`${param}.name must be a non-empty string.`, `${param}.name`);
  const input = block.input ?? {};
  if (!isRecord(input)) fail(`${param}.input must be an object.`, `${param}.input`);
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

function stopSequences(stop: unknown): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  if (!Array.isArray(stop)) fail('`stop_sequences` must be an array of strings.', 'stop_sequences');
  stop.forEach((s, i) => {
    if (typeof s !== 'string') fail(`stop_sequences[${i}] must be a string.`, `stop_sequences[${i}]`);
  });
  // OpenAI itself takes at most 4; the limit is the upstream's to enforce, not ours to truncate.
  return stop.length > 0 ? (stop as string[]) : undefined;
}

function chatTools(tools: unknown): Json[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) fail('`tools` must be an array.', 'tools');
  return tools.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) fail(`${at} must be an object.`, at);
    const type = tool.type;
    if (type !== undefined && type !== null && type !== 'custom' && tool.input_schema === undefined) {
      inexpressible(`${at} is a server tool: it runs on Anthropic's servers and cannot be used with this provider.`, at);
    }
    const name = stringField(tool, 'name');
    if (name === undefined || name.length === 0) fail(`${at}.name must be a non-empty string.`, `${at}.name`);
    if (!isRecord(tool.input_schema)) fail(`${at}.input_schema must be a JSON Schema object.`, `${at}.input_schema`);
    const fn: Json = { name };
    const description = stringField(tool, 'description');
    if (description !== undefined) fn.description = description;
    fn.parameters = tool.input_schema;
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown): Json {
  if (choice === undefined || choice === null) return {};
  if (!isRecord(choice)) fail('`tool_choice` must be an object.', 'tool_choice');
  const out: Json = {};
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool': {
      const name = stringField(choice, 'name');
      if (name === undefined || name.length === 0) fail('tool_choice.name must name a tool.', 'tool_choice.name');
      out.tool_choice = { type: 'function', function: { name } };
      break;
    }
    default:
      fail('tool_choice.type must be "auto", "any", "tool" or "none".', 'tool_choice.type');
  }
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}

/** Anthropic budgets thinking in tokens; OpenAI-compatible reasoning models take an effort level. */
function reasoningEffort(thinking: unknown, strict: boolean): string | undefined {
  if (strict || !isRecord(thinking) || thinking.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || !Number.isFinite(budget)) {
    fail('thinking.budget_tokens must be a number.', 'thinking.budget_tokens');
  }
  if (budget <= LOW_BUDGET) return 'low';
  return budget <= MEDIUM_BUDGET ? 'medium' : 'high';
}
