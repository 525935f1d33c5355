/**
 * Anthropic's Messages API (`POST /v1/messages`, non-stream and stream, and
 * `POST /v1/messages/count_tokens`), in its exact wire format.
 *
 * Like the OpenAI mock, the answer is derived from the request alone (`Mock reply to: <first 40
 * chars of the last user text>`), so streamed and non-streamed calls agree on content and usage.
 *
 * Directives beyond the shared ones:
 * - `tool_call=1` with `tools` in the body: the answer is one `tool_use` block;
 * - `cache_read=N` (or `x-mock-cache-read: N`): usage reports N `cache_read_input_tokens`, taken
 *   out of `input_tokens` as Anthropic does.
 *
 * Stream, as Anthropic sends it:
 *
 *   message_start ─ content_block_start ─ ping ─ content_block_delta × chunks ─ content_block_stop
 *   ─ message_delta ─ message_stop
 */

import type { IncomingHttpHeaders } from 'node:http';
import { mockId } from './ids.js';
import type { Dialect, JsonObject, JsonReply, MockReply, MockRequest, Route, SseReply } from './route.js';
import { clip, contentText, estimateTokens, isRecord, mockInput, QUOTE_CHARS, splitPieces } from './text.js';

/** Error types and messages per status, from https://docs.anthropic.com/en/api/errors. */
const ERRORS: ReadonlyMap<number, { type: string; message: string }> = new Map([
  [400, { type: 'invalid_request_error', message: 'There was an issue with the format or content of your request.' }],
  [401, { type: 'authentication_error', message: 'invalid x-api-key' }],
  [403, { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' }],
  [404, { type: 'not_found_error', message: 'The requested resource could not be found.' }],
  [413, { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' }],
  [429, { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' }],
  [500, { type: 'api_error', message: 'Internal server error' }],
  [529, { type: 'overloaded_error', message: 'Overloaded' }],
]);

export function anthropicErrorBody(type: string, message: string): JsonObject {
  return { type: 'error', error: { type, message } };
}

function anthropicError(status: number, type: string, message: string): JsonReply {
  return { kind: 'json', status, body: anthropicErrorBody(type, message) };
}

export const anthropicDialect: Dialect = {
  name: 'anthropic',
  errorReply(status) {
    const shape =
      ERRORS.get(status) ?? (status >= 500 ? ERRORS.get(500)! : { type: 'invalid_request_error', message: 'Invalid request.' });
    return anthropicError(status, shape.type, shape.message);
  },
  invalidJson() {
    return anthropicError(400, 'invalid_request_error', 'There was an issue with the format or content of your request.');
  },
};

export const messagesRoute: Route = { dialect: anthropicDialect, json: true, handle: messages };
export const countTokensRoute: Route = { dialect: anthropicDialect, json: true, handle: countTokens };

const STREAM_ERROR_FRAME = sseFrame('error', anthropicErrorBody('overloaded_error', 'Overloaded'));

interface ToolUse {
  readonly id: string;
  readonly name: string;
  readonly input: JsonObject;
}

interface MessageAnswer {
  readonly id: string;
  readonly model: string;
  readonly text: string | undefined;
  readonly toolUse: ToolUse | undefined;
  readonly usage: JsonObject;
}

function messages(request: MockRequest): MockReply {
  // Anthropic checks the key before the body.
  if (!header(request.headers, 'x-api-key')) {
    return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  }
  if (!header(request.headers, 'anthropic-version')) {
    return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
  }
  const body = request.json;
  if (typeof body.model !== 'string') return anthropicError(400, 'invalid_request_error', 'model: Field required');
  if (!Array.isArray(body.messages)) return anthropicError(400, 'invalid_request_error', 'messages: Field required');
  if (typeof body.max_tokens !== 'number') return anthropicError(400, 'invalid_request_error', 'max_tokens: Field required');

  const answer = messageAnswer(body, body.messages, request);
  if (body.stream === true) return messageStream(answer, request.directives.chunks);
  return {
    kind: 'json',
    status: 200,
    body: {
      id: answer.id,
      type: 'message',
      role: 'assistant',
      model: answer.model,
      content: answer.toolUse === undefined ? [{ type: 'text', text: answer.text }] : [{ type: 'tool_use', ...answer.toolUse }],
      stop_reason: stopReason(answer),
      stop_sequence: null,
      usage: answer.usage,
    },
  };
}

/** `POST /v1/messages/count_tokens`: `{input_tokens}`, the same count a message's usage reports. */
function countTokens(request: MockRequest): MockReply {
  if (!header(request.headers, 'x-api-key')) return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  const body = request.json;
  if (typeof body.model !== 'string') return anthropicError(400, 'invalid_request_error', 'model: Field required');
  if (!Array.isArray(body.messages)) return anthropicError(400, 'invalid_request_error', 'messages: Field required');
  let tokens = estimateTokens(systemText(body.system));
  for (const turn of body.messages) if (isRecord(turn)) tokens += estimateTokens(contentText(turn.content));
  return { kind: 'json', status: 200, body: { input_tokens: tokens } };
}

function messageAnswer(body: JsonObject, turns: unknown[], request: MockRequest): MessageAnswer {
  let prompt = estimateTokens(systemText(body.system));
  let lastUser = '';
  for (const turn of turns) {
    if (!isRecord(turn)) continue;
    const text = contentText(turn.content);
    prompt += estimateTokens(text);
    if (turn.role === 'user' && text.length > 0) lastUser = text;
  }
  const tool = request.directives.toolCall ? firstTool(body.tools) : undefined;
  const toolUse = tool === undefined ? undefined : { id: mockId('toolu_'), name: tool.name, input: mockInput(tool.schema) };
  const text = toolUse === undefined ? `Mock reply to: ${clip(lastUser, QUOTE_CHARS)}` : undefined;
  const output = estimateTokens(text ?? JSON.stringify(toolUse?.input));
  const cacheRead = request.directives.cacheRead;
  const usage: JsonObject = { input_tokens: Math.max(0, prompt - cacheRead), output_tokens: output };
  if (cacheRead > 0) usage.cache_read_input_tokens = cacheRead;
  return { id: mockId('msg_'), model: body.model as string, text, toolUse, usage };
}

function stopReason(answer: MessageAnswer): string {
  return answer.toolUse === undefined ? 'end_turn' : 'tool_use';
}

function messageStream(answer: MessageAnswer, chunks: number): SseReply {
  const call = answer.toolUse;
  const frames = [
    sseFrame('message_start', {
      type: 'message_start',
      message: {
        id: answer.id,
        type: 'message',
        role: 'assistant',
        model: answer.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Anthropic reports a provisional output count of 1 here; the final count is in message_delta.
        usage: { ...answer.usage, output_tokens: 1 },
      },
    }),
    sseFrame('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: call === undefined ? { type: 'text', text: '' } : { type: 'tool_use', id: call.id, name: call.name, input: {} },
    }),
    sseFrame('ping', { type: 'ping' }),
  ];
  const firstContent = frames.length;
  const whole = call === undefined ? (answer.text ?? '') : JSON.stringify(call.input);
  for (const piece of splitPieces(whole, chunks)) {
    const delta = call === undefined ? { type: 'text_delta', text: piece } : { type: 'input_json_delta', partial_json: piece };
    frames.push(sseFrame('content_block_delta', { type: 'content_block_delta', index: 0, delta }));
  }
  frames.push(
    sseFrame('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sseFrame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason(answer), stop_sequence: null },
      usage: { output_tokens: answer.usage.output_tokens },
    }),
    sseFrame('message_stop', { type: 'message_stop' }),
  );
  return { kind: 'sse', frames, firstContent, errorFrame: streamErrorFrame };
}

function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function streamErrorFrame(): string {
  return STREAM_ERROR_FRAME;
}

/** `system` is a string or text blocks. */
function systemText(system: unknown): string {
  return typeof system === 'string' ? system : contentText(system);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first !== undefined && first.length > 0 ? first : undefined;
}

/** The first Anthropic custom tool, `{name, input_schema}`, which `tool_call=1` calls. */
function firstTool(tools: unknown): { name: string; schema: unknown } | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const tool of tools) {
    if (isRecord(tool) && typeof tool.name === 'string') return { name: tool.name, schema: tool.input_schema };
  }
  return undefined;
}

