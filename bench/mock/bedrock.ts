/**
 * AWS Bedrock Runtime in its exact wire format: Converse, ConverseStream, and InvokeModel for
 * Titan and Cohere embeddings.
 *
 *   POST /model/<model id>/converse           → JSON answer
 *   POST /model/<model id>/converse-stream    → application/vnd.amazon.eventstream
 *   POST /model/<model id>/invoke             → the model's own JSON (embeddings only here)
 *
 * The model id arrives percent-encoded (`amazon.nova-lite-v1%3A0`) and is decoded for messages.
 * Every request must carry a valid SigV4 signature for service `bedrock` made with
 * `MOCK_AWS_ACCESS_KEY_ID` / `MOCK_AWS_SECRET_ACCESS_KEY` (see `sigv4.ts`), or a Bedrock API key
 * (`authorization: Bearer <any>`); the check runs before any directive, as AWS authenticates
 * first.
 *
 * Answers are derived from the request alone, as the Anthropic mock derives them (`Mock reply to:
 * <first 40 chars of the last user text>`, the same token estimate), so an Anthropic request and
 * its Converse translation report the same usage, and a stream reports the plain call's usage.
 *
 * Directives beyond the shared ones:
 * - `tool_call=1` with `toolConfig.tools`: the answer is one `toolUse` block calling the first tool;
 * - `cache_read=N`: usage reports N `cacheReadInputTokens`, excluded from `inputTokens` and
 *   included in `totalTokens`, as Bedrock reports prompt-cache hits.
 *
 * Stream, one event-stream message per event:
 *
 *   messageStart ─ [contentBlockStart (tool use)] ─ contentBlockDelta × chunks ─ contentBlockStop
 *   ─ messageStop ─ metadata
 *
 * Errors are `{"message": …}` with the error's name in `x-amzn-errortype`; `error_event` ends a
 * stream with a `modelStreamErrorException` exception message.
 */

import { randomUUID } from 'node:crypto';
import { embedText } from './embedding.js';
import { eventMessage, exceptionMessage } from './event-stream.js';
import { mockId } from './ids.js';
import type { Dialect, JsonObject, JsonReply, MockReply, MockRequest, Route, SseReply } from './route.js';
import { verifySigV4 } from './sigv4.js';
import { clip, contentText, estimateTokens, isRecord, mockInput, QUOTE_CHARS, splitPieces } from './text.js';

/** `/model/<percent-encoded model id>/<operation>` */
const BEDROCK_PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/;
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
/** Where AWS's own error names live: Bedrock's modelled errors, and the auth layer's. */
const BEDROCK_NAMESPACE = 'http://internal.amazon.com/coral/com.amazon.bedrock/';
const AUTH_NAMESPACE = 'http://internal.amazon.com/coral/com.amazon.coral.service/';

/** Error names and messages per status, from the Bedrock Runtime API reference's error lists. */
const ERRORS: ReadonlyMap<number, { name: string; message: string }> = new Map([
  [400, { name: 'ValidationException', message: 'Malformed input request, please reformat your input and try again.' }],
  [403, { name: 'AccessDeniedException', message: "You don't have access to the model with the specified model ID." }],
  [404, { name: 'ResourceNotFoundException', message: 'Could not resolve the foundation model from the provided model identifier.' }],
  [408, { name: 'ModelTimeoutException', message: 'Model has timed out in processing the request. Try your request again.' }],
  [424, { name: 'ModelErrorException', message: 'The model encountered an error while processing the request. Try your request again.' }],
  [429, { name: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' }],
  [500, { name: 'InternalServerException', message: 'The system encountered an unexpected error during processing. Try your request again.' }],
  [503, { name: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' }],
]);

/** Titan Text Embeddings V2 accepts only these sizes; V1 always answers 1536. */
const TITAN_V2_DIMENSIONS: ReadonlySet<number> = new Set([256, 512, 1024]);
const COHERE_DIMENSIONS = 1024;

function bedrockError(status: number, name: string, message: string, namespace = BEDROCK_NAMESPACE): JsonReply {
  return {
    kind: 'json',
    status,
    body: { message },
    headers: { 'x-amzn-requestid': randomUUID(), 'x-amzn-errortype': `${name}:${namespace}` },
  };
}

function validation(message: string): JsonReply {
  return bedrockError(400, 'ValidationException', message);
}

export const bedrockDialect: Dialect = {
  name: 'bedrock',
  errorReply(status) {
    const shape = ERRORS.get(status) ?? (status >= 500 ? ERRORS.get(500)! : ERRORS.get(400)!);
    return bedrockError(status, shape.name, shape.message);
  },
  invalidJson() {
    return validation(ERRORS.get(400)!.message);
  },
};

export const bedrockRoute: Route = { dialect: bedrockDialect, json: true, authorize: authorizeBedrock, handle: bedrock };

/** Whether a path is a Bedrock Runtime operation (the model varies, so no exact route key). */
export function isBedrockPath(pathname: string): boolean {
  return BEDROCK_PATH.test(pathname);
}

const STREAM_ERROR_FRAME = exceptionMessage('modelStreamErrorException', 'An error occurred while streaming the response. Retry your request.');

interface Answer {
  readonly text: string | undefined;
  readonly toolUse: { readonly toolUseId: string; readonly name: string; readonly input: JsonObject } | undefined;
  readonly usage: JsonObject;
  readonly latencyMs: number;
}

/** A Bedrock API key (`Bearer …`) passes as it is; anything else must be a valid SigV4 signature. */
function authorizeBedrock(request: MockRequest): MockReply | undefined {
  const auth = request.headers.authorization;
  if (auth !== undefined && /^Bearer \S/.test(auth)) return undefined;
  const result = verifySigV4(
    { method: request.method, target: request.url, rawHeaders: request.rawHeaders, body: request.body },
    { service: 'bedrock' },
  );
  return result.ok ? undefined : bedrockError(403, result.error.code, result.error.message, AUTH_NAMESPACE);
}

function bedrock(request: MockRequest): MockReply {
  const [, encodedModel, operation] = BEDROCK_PATH.exec(request.pathname) ?? [];
  if (encodedModel === undefined) return validation('The provided model identifier is invalid.');
  let model: string;
  try {
    model = decodeURIComponent(encodedModel);
  } catch {
    return validation('The provided model identifier is invalid.');
  }
  if (operation === 'invoke') return invoke(model, request);
  const body = request.json;
  if (!Array.isArray(body.messages)) {
    return validation("1 validation error detected: Value null at 'messages' failed to satisfy constraint: Member must not be null");
  }
  const answer = converseAnswer(body, body.messages, request);
  if (operation === 'converse-stream') return converseStream(answer, request.directives.chunks);
  return {
    kind: 'json',
    status: 200,
    body: {
      output: { message: { role: 'assistant', content: [answer.toolUse === undefined ? { text: answer.text } : { toolUse: answer.toolUse }] } },
      stopReason: stopReason(answer),
      usage: answer.usage,
      metrics: { latencyMs: answer.latencyMs },
    },
    headers: { 'x-amzn-requestid': randomUUID() },
  };
}

function converseAnswer(body: JsonObject, turns: unknown[], request: MockRequest): Answer {
  // `system` is a list of `{text}` blocks, so contentText reads it like message content.
  let prompt = estimateTokens(contentText(body.system));
  let lastUser = '';
  for (const turn of turns) {
    if (!isRecord(turn)) continue;
    const text = contentText(turn.content);
    prompt += estimateTokens(text);
    if (turn.role === 'user' && text.length > 0) lastUser = text;
  }
  const { directives } = request;
  const tool = directives.toolCall ? firstTool(body.toolConfig) : undefined;
  const toolUse = tool === undefined ? undefined : { toolUseId: mockId('tooluse_'), name: tool.name, input: mockInput(tool.schema) };
  const text = toolUse === undefined ? `Mock reply to: ${clip(lastUser, QUOTE_CHARS)}` : undefined;
  const output = estimateTokens(text ?? JSON.stringify(toolUse?.input));
  const cacheRead = directives.cacheRead;
  const input = Math.max(0, prompt - cacheRead);
  const usage: JsonObject = { inputTokens: input, outputTokens: output, totalTokens: input + output + cacheRead };
  if (cacheRead > 0) {
    usage.cacheReadInputTokens = cacheRead;
    usage.cacheWriteInputTokens = 0;
  }
  // The wait the directives imposed, so plain and streamed answers agree on it too.
  return { text, toolUse, usage, latencyMs: directives.delay + directives.firstByteDelay };
}

function stopReason(answer: Answer): string {
  return answer.toolUse === undefined ? 'end_turn' : 'tool_use';
}

function converseStream(answer: Answer, chunks: number): SseReply {
  const call = answer.toolUse;
  const frames: Buffer[] = [eventMessage('messageStart', { role: 'assistant' })];
  // Text starts straight with deltas; a tool use announces its id and name first.
  if (call !== undefined) {
    frames.push(eventMessage('contentBlockStart', { start: { toolUse: { toolUseId: call.toolUseId, name: call.name } }, contentBlockIndex: 0 }));
  }
  const firstContent = frames.length;
  const whole = call === undefined ? (answer.text ?? '') : JSON.stringify(call.input);
  for (const piece of splitPieces(whole, chunks)) {
    const delta = call === undefined ? { text: piece } : { toolUse: { input: piece } };
    frames.push(eventMessage('contentBlockDelta', { delta, contentBlockIndex: 0 }));
  }
  frames.push(
    eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
    eventMessage('messageStop', { stopReason: stopReason(answer) }),
    eventMessage('metadata', { usage: answer.usage, metrics: { latencyMs: answer.latencyMs } }),
  );
  return {
    kind: 'sse',
    frames,
    firstContent,
    errorFrame: streamErrorFrame,
    contentType: EVENT_STREAM,
    headers: { 'x-amzn-requestid': randomUUID() },
  };
}

function streamErrorFrame(): Buffer {
  return STREAM_ERROR_FRAME;
}

/** InvokeModel speaks each model's native body; the mock serves the embedding families. */
function invoke(model: string, request: MockRequest): MockReply {
  if (model.startsWith('amazon.titan-embed-text-') || model.startsWith('amazon.titan-embed-g1-text-')) return titanEmbed(model, request.json);
  if (model.startsWith('cohere.embed-')) return cohereEmbed(request.json);
  return validation('The provided model identifier is invalid.');
}

/** Titan Text Embeddings: `{inputText, dimensions?}` → `{embedding, inputTextTokenCount}`. */
function titanEmbed(model: string, body: JsonObject): MockReply {
  if (typeof body.inputText !== 'string') return validation(malformed('#: required key [inputText] not found'));
  const v2 = model.startsWith('amazon.titan-embed-text-v2');
  let dimensions = v2 ? 1024 : 1536;
  if (body.dimensions !== undefined) {
    if (!v2 || typeof body.dimensions !== 'number' || !TITAN_V2_DIMENSIONS.has(body.dimensions)) {
      return validation(malformed(`#/dimensions: ${JSON.stringify(body.dimensions)} is not a valid enum value`));
    }
    dimensions = body.dimensions;
  }
  const tokens = estimateTokens(body.inputText);
  return invokeReply({ embedding: Array.from(embedText(body.inputText, dimensions)), inputTextTokenCount: tokens }, tokens);
}

/** Cohere Embed: `{texts, input_type}` → `{embeddings, id, response_type, texts}`. */
function cohereEmbed(body: JsonObject): MockReply {
  const texts = body.texts;
  if (!Array.isArray(texts) || !texts.every((text): text is string => typeof text === 'string')) {
    return validation(malformed('#: required key [texts] not found'));
  }
  if (typeof body.input_type !== 'string') return validation(malformed('#: required key [input_type] not found'));
  let tokens = 0;
  const embeddings = texts.map(function embedOne(text) {
    tokens += estimateTokens(text);
    return Array.from(embedText(text, COHERE_DIMENSIONS));
  });
  return invokeReply({ embeddings, id: randomUUID(), response_type: 'embeddings_floats', texts }, tokens);
}

/** InvokeModel answers carry the token count and latency as headers too. */
function invokeReply(body: JsonObject, inputTokens: number): JsonReply {
  return {
    kind: 'json',
    status: 200,
    body,
    headers: {
      'x-amzn-requestid': randomUUID(),
      'x-amzn-bedrock-input-token-count': String(inputTokens),
      'x-amzn-bedrock-invocation-latency': '1',
    },
  };
}

function malformed(detail: string): string {
  return `Malformed input request: ${detail}, please reformat your input and try again.`;
}

/** The first `toolSpec` in `toolConfig.tools`, which `tool_call=1` calls. */
function firstTool(toolConfig: unknown): { name: string; schema: unknown } | undefined {
  if (!isRecord(toolConfig) || !Array.isArray(toolConfig.tools)) return undefined;
  for (const tool of toolConfig.tools) {
    const spec = isRecord(tool) ? tool.toolSpec : undefined;
    if (isRecord(spec) && typeof spec.name === 'string') {
      return { name: spec.name, schema: isRecord(spec.inputSchema) ? spec.inputSchema.json : undefined };
    }
  }
  return undefined;
}

