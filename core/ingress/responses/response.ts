/**
 * `chat.completion` → a Responses `response` object, as the official SDKs read it.
 *
 *   choices[0].message.content ──► output message item {type:'message', content:[output_text]}
 *                     .refusal ──► the same item's `refusal` part
 *                  .tool_calls ──► function_call items {call_id, name, arguments}, after the message
 *   finish_reason length ────────► status 'incomplete', incomplete_details {reason:'max_output_tokens'}
 *                 content_filter ► status 'incomplete', incomplete_details {reason:'content_filter'}
 *   usage ───────────────────────► input_tokens / output_tokens / total_tokens (+ details)
 *
 * The request's settings are echoed the way OpenAI echoes them (instructions, tools, tool_choice,
 * temperature, metadata, …), with OpenAI's defaults where the client sent nothing. Reasoning text
 * some compatible servers add (`reasoning_content`) is not an output item: Responses reasoning
 * items carry encrypted state no other provider produces.
 */
import { isRecord, stringField } from '../../providers/openai-shape.js';
import { randomId } from './ids.js';
import { responsesUsage } from './usage.js';
import type { IdFactory, Json, ResponsesOptions, ResponsesUsage } from './wire.js';

export type Status = 'completed' | 'incomplete' | 'in_progress' | 'failed';

/** What ended the answer, from the chat `finish_reason`. */
export function outcome(finishReason: unknown): { status: 'completed' | 'incomplete'; incomplete: Json | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

/** The response object's fields that echo the request (OpenAI's defaults where it sent none). */
export function responseShell(request: Json, fields: { id: string; created: number; model: unknown; status: Status }): Json {
  const reasoning = isRecord(request.reasoning) ? request.reasoning : {};
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.created,
    status: fields.status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: fields.model ?? request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: null },
    store: request.store !== false,
    temperature: request.temperature ?? 1,
    text: isRecord(request.text) && request.text.format !== undefined ? request.text : { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: null,
    user: request.user ?? null,
    metadata: isRecord(request.metadata) ? request.metadata : {},
  };
}

/** An output message item; `status` follows the response's. */
export function messageItem(id: string, parts: Json[], status: Status): Json {
  return { id, type: 'message', status, role: 'assistant', content: parts };
}

export function textPart(text: string): Json {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(fields: { id: string; callId: string; name: string; args: string; status: Status }): Json {
  return { id: fields.id, type: 'function_call', status: fields.status, call_id: fields.callId, name: fields.name, arguments: fields.args };
}

export function seconds(options: ResponsesOptions): number {
  return options.now?.() ?? Math.floor(Date.now() / 1000);
}

/**
 * @example
 *   buildResponse({ id: 'chatcmpl-1', model: 'm', choices: [{ message: { content: 'Hi' }, finish_reason: 'stop' }] }, { model: 'm', input: 'Hello' }, { strict: true })
 *   // { id: 'resp_…', object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi', … }], … }], … }
 */
export function buildResponse(body: Json, request: Json, options: ResponsesOptions): Json {
  const newId: IdFactory = options.newId ?? randomId;
  const choice = Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const { status, incomplete } = outcome(choice.finish_reason);
  const output: Json[] = [];

  const parts: Json[] = [];
  const text = stringField(message, 'content');
  if (text !== undefined && text.length > 0) parts.push(textPart(text));
  const refusal = stringField(message, 'refusal');
  if (refusal !== undefined && refusal.length > 0) parts.push({ type: 'refusal', refusal });
  if (parts.length > 0) output.push(messageItem(newId('msg'), parts, status));
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isRecord(call)) continue;
    const fn = isRecord(call.function) ? call.function : {};
    output.push(functionCallItem({ id: newId('fc'), callId: stringField(call, 'id') || newId('call'), name: stringField(fn, 'name') ?? '', args: stringField(fn, 'arguments') ?? '', status: 'completed' }));
  }

  const response = responseShell(request, { id: newId('resp'), created: seconds(options), model: body.model, status });
  response.incomplete_details = incomplete;
  response.output = output;
  response.usage = responsesUsage(body.usage) satisfies ResponsesUsage;
  options.onAnswer?.(response);
  return response;
}
