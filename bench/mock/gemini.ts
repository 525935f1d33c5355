/**
 * Gemini's API (`POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`), in its exact wire format.
 *
 * Like the other mocks, the answer is derived from the request alone (`Mock reply to: <first 40
 * chars of the last user text>`), so streamed and non-streamed calls agree on content and usage.
 *
 * - The key must come in `x-goog-api-key` (403 PERMISSION_DENIED otherwise); a `key` query
 *   parameter is refused with 400, so tests catch a gateway that leaks keys into URLs.
 * - `tool_call=1` with function declarations in the body: the answer is one `functionCall` part.
 * - Streams are `data: {GenerateContentResponse}\r\n\r\n` frames (Gemini ends lines with CRLF) and
 *   simply close; every frame carries `usageMetadata`, the last one with the output count.
 */

import type { Dialect, JsonObject, JsonReply, MockReply, MockRequest, Route, SseReply } from './route.js';
import { embedText } from './embedding.js';
import { mockId } from './ids.js';
import { clip, contentText, estimateTokens, isRecord, mockInput, QUOTE_CHARS, splitPieces } from './text.js';

/** `/v1beta/models/<model>:<method>` */
const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/;

/** Canonical statuses and messages per HTTP code, as Google phrases them. */
const ERRORS: ReadonlyMap<number, { status: string; message: string }> = new Map([
  [400, { status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' }],
  [401, { status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' }],
  [403, { status: 'PERMISSION_DENIED', message: 'The caller does not have permission' }],
  [404, { status: 'NOT_FOUND', message: 'Requested entity was not found.' }],
  [429, { status: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted (e.g. check quota).' }],
  [500, { status: 'INTERNAL', message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting' }],
  [503, { status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' }],
  [504, { status: 'DEADLINE_EXCEEDED', message: 'Deadline expired before operation could complete.' }],
]);

export function geminiErrorBody(code: number, status: string, message: string): JsonObject {
  return { error: { code, message, status } };
}

function geminiError(code: number, status: string, message: string): JsonReply {
  return { kind: 'json', status: code, body: geminiErrorBody(code, status, message) };
}

export const geminiDialect: Dialect = {
  name: 'gemini',
  errorReply(status) {
    const shape = ERRORS.get(status) ?? (status >= 500 ? ERRORS.get(500)! : ERRORS.get(400)!);
    return geminiError(status, shape.status, shape.message);
  },
  invalidJson() {
    return geminiError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  },
};

export const generateContentRoute: Route = { dialect: geminiDialect, json: true, handle: generateContent };

/** Whether a path is one of Gemini's generate methods (the model varies, so no exact route key). */
export function isGeminiPath(pathname: string): boolean {
  return GEMINI_PATH.test(pathname);
}

const STREAM_ERROR_FRAME = sseFrame(geminiErrorBody(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'));

interface Answer {
  readonly responseId: string;
  readonly model: string;
  readonly text: string | undefined;
  readonly call: { name: string; args: JsonObject } | undefined;
  readonly prompt: number;
  readonly output: number;
}

function generateContent(request: MockRequest): MockReply {
  if (new URLSearchParams(request.query).has('key')) {
    return geminiError(400, 'INVALID_ARGUMENT', 'API keys in the URL are refused by this mock; send x-goog-api-key.');
  }
  const key = request.headers['x-goog-api-key'];
  if (typeof key !== 'string' || key.length === 0) {
    return geminiError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
  }
  const [, encodedModel, method] = GEMINI_PATH.exec(request.pathname) ?? [];
  if (encodedModel === undefined) return geminiError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.model: unexpected model name format');
  const body = request.json;
  if (method === 'batchEmbedContents') return batchEmbed(decodeURIComponent(encodedModel), body);
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return geminiError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
  }
  const answer = buildAnswer(decodeURIComponent(encodedModel), body, request);
  // Without alt=sse Gemini streams one JSON array; the gateway always asks for SSE, so that is all this serves.
  if (method === 'streamGenerateContent') return stream(answer, request.directives.chunks);
  return {
    kind: 'json',
    status: 200,
    body: {
      candidates: [{ content: { parts: [answerPart(answer)], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(answer, true),
      modelVersion: answer.model,
      responseId: answer.responseId,
    },
  };
}

/**
 * `batchEmbedContents`: `{requests:[{model, content:{parts:[{text}]}, outputDimensionality?}]}` →
 * `{embeddings:[{values}]}`, the same deterministic vectors as the OpenAI embeddings mock. Every
 * request must name the model of the URL, as Gemini insists.
 */
function batchEmbed(model: string, body: JsonObject): MockReply {
  if (!Array.isArray(body.requests) || body.requests.length === 0) {
    return geminiError(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified');
  }
  const embeddings: JsonObject[] = [];
  for (const [i, item] of (body.requests as unknown[]).entries()) {
    if (!isRecord(item) || item.model !== `models/${model}` || !isRecord(item.content)) {
      return geminiError(400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: the model must be models/${model}`);
    }
    const dimensions = typeof item.outputDimensionality === 'number' ? item.outputDimensionality : 768;
    embeddings.push({ values: Array.from(embedText(contentText(item.content.parts), dimensions)) });
  }
  return { kind: 'json', status: 200, body: { embeddings } };
}

function buildAnswer(model: string, body: JsonObject, request: MockRequest): Answer {
  let prompt = isRecord(body.systemInstruction) ? estimateTokens(contentText(body.systemInstruction.parts)) : 0;
  let lastUser = '';
  for (const turn of body.contents as unknown[]) {
    if (!isRecord(turn)) continue;
    const text = contentText(turn.parts);
    prompt += estimateTokens(text);
    if (turn.role === 'user' && text.length > 0) lastUser = text;
  }
  const tool = request.directives.toolCall ? firstDeclaration(body.tools) : undefined;
  const call = tool === undefined ? undefined : { name: tool.name, args: mockInput(tool.parameters) };
  const text = call === undefined ? `Mock reply to: ${clip(lastUser, QUOTE_CHARS)}` : undefined;
  const output = estimateTokens(text ?? JSON.stringify(call?.args));
  return { responseId: mockId(''), model, text, call, prompt, output };
}

function answerPart(answer: Answer): JsonObject {
  return answer.call === undefined ? { text: answer.text } : { functionCall: answer.call };
}

/** Gemini reports prompt and total on every slice; the output count only once it is known. */
function usageMetadata(answer: Answer, final: boolean): JsonObject {
  const output = final ? answer.output : 0;
  const usage: JsonObject = { promptTokenCount: answer.prompt, totalTokenCount: answer.prompt + output };
  if (final) usage.candidatesTokenCount = output;
  usage.promptTokensDetails = [{ modality: 'TEXT', tokenCount: answer.prompt }];
  return usage;
}

function stream(answer: Answer, chunks: number): SseReply {
  // A function call arrives whole in one slice; text is split across `chunks` slices.
  const pieces: JsonObject[] = answer.call === undefined ? splitPieces(answer.text ?? '', chunks).map((text) => ({ text })) : [answerPart(answer)];
  const frames = pieces.map((part, i) => {
    const last = i === pieces.length - 1;
    const candidate: JsonObject = { content: { parts: [part], role: 'model' }, index: 0 };
    if (last) candidate.finishReason = 'STOP';
    return sseFrame({ candidates: [candidate], usageMetadata: usageMetadata(answer, last), modelVersion: answer.model, responseId: answer.responseId });
  });
  return { kind: 'sse', frames, firstContent: 0, errorFrame: streamErrorFrame };
}

function sseFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

function streamErrorFrame(): string {
  return STREAM_ERROR_FRAME;
}

/** The first `functionDeclarations` entry of the first tool, which `tool_call=1` calls. */
function firstDeclaration(tools: unknown): { name: string; parameters: unknown } | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const tool of tools) {
    if (!isRecord(tool) || !Array.isArray(tool.functionDeclarations)) continue;
    const declaration: unknown = tool.functionDeclarations[0];
    if (isRecord(declaration) && typeof declaration.name === 'string') return { name: declaration.name, parameters: declaration.parameters };
  }
  return undefined;
}

