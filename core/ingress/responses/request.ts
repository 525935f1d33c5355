/**
 * Responses request → OpenAI chat completions body.
 *
 *   instructions ─────────────────► leading `system` message
 *   input (string | items) ────────► messages (input.ts)
 *   tools: function ───────────────► chat function tools ({name, description, parameters, strict})
 *   tool_choice ───────────────────► 'auto' | 'none' | 'required' | {type:'function', function:{name}}
 *   text.format json_schema ───────► response_format {type:'json_schema', json_schema:{name, schema, strict, description}}
 *              json_object ────────► response_format {type:'json_object'};  text ► nothing
 *   max_output_tokens ► max_tokens;  temperature, top_p, user, parallel_tool_calls ► unchanged
 *   reasoning.effort ► reasoning_effort;  stream ► stream + stream_options.include_usage
 *
 * Not sent upstream because they are the gateway's or only echoed back: `metadata` (in the
 * response object), `store` and `previous_response_id` (the responses store; a held previous
 * response was already expanded into `input`, see continuation.ts), `truncation: "disabled"`
 * (what chat does anyway), `stream_options` (the Responses stream has no options chat needs),
 * `service_tier` "auto"/"default", `prompt_cache_key` and `safety_identifier` (hints).
 *
 * Everything else that would change the answer and has no chat twin (built-in tools, `include`,
 * `truncation: "auto"`, `background`, `conversation`, `top_logprobs`, `max_tool_calls`,
 * reasoning summaries, `text.verbosity`, a `previous_response_id` the gateway does not hold) is a
 * 4xx naming the field.
 */
import { isRecord, stringField } from '../../providers/openai-shape.js';
import { previousResponseNotFound } from './errors.js';
import { chatMessages, fail, inexpressible, itemsOf } from './input.js';
import type { Json } from './wire.js';

/** Fields with no chat twin: present and not null (or false, or empty) is a 400. */
const INEXPRESSIBLE = ['background', 'conversation', 'top_logprobs', 'max_tool_calls', 'prompt'] as const;

/**
 * @example
 *   buildChatRequest({ model: 'claude-x', instructions: 'Be brief.', input: 'Hi' })
 *   // { model: 'claude-x', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] }
 */
export function buildChatRequest(body: Json): Json {
  for (const key of INEXPRESSIBLE) {
    const value = body[key];
    if (value !== undefined && value !== null && value !== false) inexpressible(`\`${key}\` cannot be used with this provider.`, key);
  }
  const previous = stringField(body, 'previous_response_id');
  if (previous !== undefined && previous.length > 0) {
    // Held responses were expanded before this point; this one lives at some other provider.
    throw previousResponseNotFound('previous_response_id names a response this gateway does not hold, and this provider cannot look it up.', { param: 'previous_response_id' });
  }
  if (body.truncation === 'auto') inexpressible('`truncation: "auto"` cannot be used with this provider.', 'truncation');
  if (Array.isArray(body.include) && body.include.length > 0) inexpressible('`include` cannot be used with this provider.', 'include');
  if (body.service_tier !== undefined && body.service_tier !== null && body.service_tier !== 'auto' && body.service_tier !== 'default') {
    inexpressible('`service_tier` cannot be used with this provider.', 'service_tier');
  }

  const messages: Json[] = [];
  const instructions = body.instructions;
  if (typeof instructions === 'string' && instructions.length > 0) messages.push({ role: 'system', content: instructions });
  else if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') fail('`instructions` must be a string.', 'instructions');
  messages.push(...chatMessages(itemsOf(body.input)));
  if (messages.length === 0) fail('`input` must hold at least one item.', 'input');

  const out: Json = { model: body.model, messages };
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) out.max_tokens = body.max_output_tokens;
  for (const key of ['temperature', 'top_p', 'user', 'parallel_tool_calls'] as const) {
    if (body[key] !== undefined && body[key] !== null) out[key] = body[key];
  }
  if (body.stream === true) {
    out.stream = true;
    // The Responses stream always ends with usage; chat sends it only when asked.
    out.stream_options = { include_usage: true };
  }
  const format = responseFormat(body.text);
  if (format !== undefined) out.response_format = format;
  const effort = reasoningEffort(body.reasoning);
  if (effort !== undefined) out.reasoning_effort = effort;

  const tools = chatTools(body.tools);
  // Chat servers reject an empty `tools` array and a tool_choice without tools.
  if (tools.length > 0) {
    out.tools = tools;
    const choice = chatToolChoice(body.tool_choice);
    if (choice !== undefined) out.tool_choice = choice;
  } else if (body.tool_choice === 'required' || isRecord(body.tool_choice)) {
    fail('`tool_choice` requires a tool to choose from.', 'tool_choice');
  }
  return out;
}

function chatTools(tools: unknown): Json[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) fail('`tools` must be an array.', 'tools');
  return tools.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) fail(`${at} must be an object.`, at);
    // Built-in tools (web_search, file_search, computer_use, code_interpreter, mcp, …) run on
    // OpenAI's servers; no other provider can run them.
    if (tool.type !== 'function') inexpressible(`${at} is a built-in tool type that cannot be used with this provider; only function tools can.`, `${at}.type`);
    const name = stringField(tool, 'name');
    if (name === undefined || name.length === 0) fail(`${at}.name must be a non-empty string.`, `${at}.name`);
    const fn: Json = { name };
    const description = stringField(tool, 'description');
    if (description !== undefined) fn.description = description;
    if (tool.parameters !== undefined && tool.parameters !== null) {
      if (!isRecord(tool.parameters)) fail(`${at}.parameters must be a JSON Schema object.`, `${at}.parameters`);
      fn.parameters = tool.parameters;
    }
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (!isRecord(choice)) fail('`tool_choice` must be "auto", "none", "required" or an object.', 'tool_choice');
  if (choice.type === 'function') {
    const name = stringField(choice, 'name');
    if (name === undefined || name.length === 0) fail('tool_choice.name must name a function.', 'tool_choice.name');
    return { type: 'function', function: { name } };
  }
  return inexpressible('`tool_choice` can only choose a function tool with this provider.', 'tool_choice');
}

function responseFormat(text: unknown): Json | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isRecord(text)) fail('`text` must be an object.', 'text');
  if (text.verbosity !== undefined && text.verbosity !== null) inexpressible('`text.verbosity` cannot be used with this provider.', 'text.verbosity');
  const format = text.format;
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format)) fail('`text.format` must be an object.', 'text.format');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const name = stringField(format, 'name');
      if (name === undefined || name.length === 0) fail('text.format.name must be a non-empty string.', 'text.format.name');
      if (!isRecord(format.schema)) fail('text.format.schema must be a JSON Schema object.', 'text.format.schema');
      const schema: Json = { name, schema: format.schema };
      const description = stringField(format, 'description');
      if (description !== undefined) schema.description = description;
      if (typeof format.strict === 'boolean') schema.strict = format.strict;
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      return fail('text.format.type must be "text", "json_object" or "json_schema".', 'text.format.type');
  }
}

function reasoningEffort(reasoning: unknown): string | undefined {
  if (reasoning === undefined || reasoning === null) return undefined;
  if (!isRecord(reasoning)) fail('`reasoning` must be an object.', 'reasoning');
  for (const key of ['summary', 'generate_summary'] as const) {
    if (reasoning[key] !== undefined && reasoning[key] !== null) inexpressible(`\`reasoning.${key}\` cannot be used with this provider.`, `reasoning.${key}`);
  }
  const effort = reasoning.effort;
  if (effort === undefined || effort === null) return undefined;
  if (typeof effort !== 'string') fail('reasoning.effort must be a string.', 'reasoning.effort');
  return effort;
}
