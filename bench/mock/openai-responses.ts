/**
 * OpenAI's Responses API (`POST /v1/responses`), non-stream and stream.
 *
 * The stream uses named events in OpenAI's order, each with a `sequence_number`, and no
 * `[DONE]` terminator:
 *
 *   response.created → response.in_progress → response.output_item.added
 *   → response.content_part.added → response.output_text.delta × chunks
 *   → response.output_text.done → response.content_part.done → response.output_item.done
 *   → response.completed (the full response, with usage)
 *
 * Request settings (instructions, temperature, tools, …) are echoed back as the real API does.
 */

import { mockId, unixNow } from './ids.js';
import { openaiDialect, openaiErrorBody, openaiMissing } from './openai-errors.js';
import { ok, type JsonObject, type MockReply, type MockRequest, type Route, type SseReply } from './route.js';
import { clip, contentText, estimateTokens, isRecord, QUOTE_CHARS, splitPieces } from './text.js';

const ITEM_OVERHEAD_TOKENS = 3;
const OUTPUT_INDEX = 0;
const CONTENT_INDEX = 0;

interface ResponseAnswer {
  readonly body: JsonObject;
  readonly id: string;
  readonly itemId: string;
  readonly createdAt: number;
  readonly model: string;
  readonly text: string;
  readonly usage: JsonObject;
}

export const responsesRoute: Route = { dialect: openaiDialect, json: true, handle: responses };

function responses(request: MockRequest): MockReply {
  const body = request.json;
  if (typeof body.model !== 'string') return openaiMissing('model');
  const { lastUser, tokens } = readInput(body.input, body.instructions);
  const text = `Mock reply to: ${clip(lastUser, QUOTE_CHARS)}`;
  const outputTokens = estimateTokens(text);
  const answer: ResponseAnswer = {
    body,
    id: mockId('resp_'),
    itemId: mockId('msg_'),
    createdAt: unixNow(),
    model: body.model,
    text,
    usage: {
      input_tokens: tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: tokens + outputTokens,
    },
  };
  return body.stream === true ? responseStream(answer, request.directives.chunks) : ok(responseObject(answer, true));
}

/** `input` is a string or a list of items; the reply quotes the last user message's text. */
function readInput(input: unknown, instructions: unknown): { lastUser: string; tokens: number } {
  let tokens = typeof instructions === 'string' ? estimateTokens(instructions) + ITEM_OVERHEAD_TOKENS : 0;
  if (typeof input === 'string') return { lastUser: input, tokens: tokens + estimateTokens(input) + ITEM_OVERHEAD_TOKENS };
  let lastUser = '';
  if (Array.isArray(input)) {
    for (const item of input) {
      if (!isRecord(item)) continue;
      // Messages carry `content`; tool results (`function_call_output`) carry `output`.
      const text = item.content !== undefined ? contentText(item.content) : contentText(item.output);
      tokens += estimateTokens(text) + ITEM_OVERHEAD_TOKENS;
      if (item.role === 'user') lastUser = text;
    }
  }
  return { lastUser, tokens };
}

function responseObject(answer: ResponseAnswer, completed: boolean): JsonObject {
  const body = answer.body;
  return {
    id: answer.id,
    object: 'response',
    created_at: answer.createdAt,
    status: completed ? 'completed' : 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: answer.model,
    output: completed ? [messageItem(answer, true)] : [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: completed ? answer.usage : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

function messageItem(answer: ResponseAnswer, completed: boolean): JsonObject {
  return {
    type: 'message',
    id: answer.itemId,
    status: completed ? 'completed' : 'in_progress',
    role: 'assistant',
    content: completed ? [outputText(answer.text)] : [],
  };
}

function outputText(text: string): JsonObject {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function responseStream(answer: ResponseAnswer, chunks: number): SseReply {
  const frames: string[] = [];
  // Every frame is one event, so an event's sequence number is its index in `frames`.
  const push = (type: string, payload: JsonObject): void => {
    const data = JSON.stringify({ type, sequence_number: frames.length, ...payload });
    frames.push(`event: ${type}\ndata: ${data}\n\n`);
  };
  const at = { item_id: answer.itemId, output_index: OUTPUT_INDEX, content_index: CONTENT_INDEX };
  const inProgress = responseObject(answer, false);

  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  push('response.output_item.added', { output_index: OUTPUT_INDEX, item: messageItem(answer, false) });
  push('response.content_part.added', { ...at, part: outputText('') });
  const firstContent = frames.length;
  for (const delta of splitPieces(answer.text, chunks)) push('response.output_text.delta', { ...at, delta, logprobs: [] });
  push('response.output_text.done', { ...at, text: answer.text, logprobs: [] });
  push('response.content_part.done', { ...at, part: outputText(answer.text) });
  push('response.output_item.done', { output_index: OUTPUT_INDEX, item: messageItem(answer, true) });
  push('response.completed', { response: responseObject(answer, true) });
  return { kind: 'sse', frames, firstContent, errorFrame: responseErrorFrame };
}

/** The Responses API's own error event: flat `code`/`message`, not the chat `{"error":{…}}` shape. */
function responseErrorFrame(index: number): string {
  const { error } = openaiErrorBody(500);
  const data = { type: 'error', sequence_number: index, code: 'server_error', message: error.message, param: null };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}
