/**
 * OpenAI chat completion request → Gemini `POST /models/<model>:generateContent` body
 * (`:streamGenerateContent?alt=sse` when streaming; the SSE form is what the gateway's parser reads).
 *
 * The body is built from an allow-list: Gemini rejects unknown fields with a 400, so OpenAI
 * parameters it has no twin for (`user`, …) are left out. Those that change the answer map:
 * `n` ► candidateCount, `response_format` ► responseMimeType + responseJsonSchema (JSON Schema
 * as OpenAI takes it, `additionalProperties` and nullable type lists included), `logprobs` /
 * `top_logprobs` ► responseLogprobs / logprobs, and `top_k` ► topK without strict compliance.
 *
 * Shape rules Gemini has and OpenAI does not:
 * - `system`/`developer` messages are one top-level `systemInstruction`, not turns;
 * - roles are `user` and `model`; a `tool` message is a `functionResponse` part in a user turn,
 *   named by the function (Gemini has no call ids), so names are looked up from earlier calls;
 * - consecutive same-role turns merge, and no turn may be empty.
 */
import { Errors } from '../../errors.js';
import type { TranslateContext, TranslatedRequest } from '../types.js';
import { isRecord, stringField, type Content, type Json, type Part } from './wire.js';
import { maxTokens, parseArguments, stopSequences, texts } from '../openai-shape.js';

export function buildRequest(ctx: TranslateContext): TranslatedRequest {
  const req = ctx.request;
  const { system, contents } = splitMessages(Array.isArray(req.messages) ? req.messages : []);
  const body: Json = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };

  const tools = functionDeclarations(req.tools);
  if (tools.length > 0) {
    body.tools = [{ functionDeclarations: tools }];
    const config = functionCallingConfig(req.tool_choice);
    // Gemini rejects a toolConfig without tools; OpenAI ignores tool_choice then.
    if (config !== undefined) body.toolConfig = { functionCallingConfig: config };
  }

  const generation = generationConfig(req, ctx.strict);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;

  const model = modelId(req.model);
  const path = req.stream === true ? `/models/${model}:streamGenerateContent?alt=sse` : `/models/${model}:generateContent`;
  return { path, body };
}

/** Gemini model names may arrive as `models/gemini-…`; the path wants the bare id, escaped. */
export function modelId(model: unknown): string {
  const name = typeof model === 'string' ? model.replace(/^models\//, '') : '';
  return encodeURIComponent(name);
}

function generationConfig(req: Json, strict: boolean): Json {
  const config: Json = {};
  if (typeof req.temperature === 'number') config.temperature = req.temperature;
  if (typeof req.top_p === 'number') config.topP = req.top_p;
  const max = maxTokens(req);
  if (max !== undefined) config.maxOutputTokens = max;
  const stop = stopSequences(req.stop);
  if (stop.length > 0) config.stopSequences = stop;
  if (typeof req.n === 'number' && Number.isInteger(req.n) && req.n > 1) config.candidateCount = req.n;
  if (typeof req.seed === 'number' && Number.isInteger(req.seed)) config.seed = req.seed;
  const format = req.response_format;
  if (isRecord(format) && (format.type === 'json_object' || format.type === 'json_schema')) {
    config.responseMimeType = 'application/json';
    const schema = isRecord(format.json_schema) ? format.json_schema.schema : undefined;
    if (isRecord(schema)) config.responseJsonSchema = schema;
  }
  if (req.logprobs === true) {
    config.responseLogprobs = true;
    if (typeof req.top_logprobs === 'number' && req.top_logprobs > 0) config.logprobs = req.top_logprobs;
  }
  if (!strict && typeof req.top_k === 'number') config.topK = req.top_k;
  return config;
}

function splitMessages(input: unknown[]): { system: Part[]; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  /** OpenAI tool-call id → function name, filled as assistant turns go by. */
  const callNames = new Map<string, string>();
  for (const message of input) {
    if (!isRecord(message)) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of texts(message.content)) system.push({ text });
        break;
      case 'user':
        push(contents, 'user', userParts(message.content));
        break;
      case 'assistant':
        push(contents, 'model', modelParts(message, callNames));
        break;
      case 'tool':
        push(contents, 'user', [functionResponse(message, callNames)]);
        break;
      default:
        break;
    }
  }
  return { system, contents };
}

/** Appends a turn, merging it into the previous one when the role repeats. */
function push(contents: Content[], role: Content['role'], parts: Part[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last !== undefined && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}


const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function userParts(content: unknown): Part[] {
  if (!Array.isArray(content)) return texts(content).map((text) => ({ text }));
  const parts: Part[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string' && part.text.length > 0) parts.push({ text: part.text });
    else if (part.type === 'image_url') {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isRecord(image) ? stringField(image, 'url') : undefined;
      // Gemini fetches no web URLs in `generateContent`; only inline (data URL) images translate.
      const [, mimeType, data] = (url === undefined ? null : DATA_URL.exec(url)) ?? [];
      if (mimeType !== undefined && data !== undefined) parts.push({ inlineData: { mimeType, data } });
    }
  }
  return parts;
}

function modelParts(message: Json, callNames: Map<string, string>): Part[] {
  const parts: Part[] = texts(message.content).map((text) => ({ text }));
  if (!Array.isArray(message.tool_calls)) return parts;
  for (const call of message.tool_calls) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    const name = stringField(call.function, 'name') ?? '';
    const id = stringField(call, 'id');
    if (id !== undefined) callNames.set(id, name);
    parts.push({ functionCall: { name, args: parseArguments(call.function.arguments) } });
  }
  return parts;
}


function functionResponse(message: Json, callNames: Map<string, string>): Part {
  const id = stringField(message, 'tool_call_id') ?? '';
  const content = typeof message.content === 'string' ? message.content : texts(message.content).join('');
  return { functionResponse: { name: callNames.get(id) ?? '', response: { content } } };
}

function functionDeclarations(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  const out: Json[] = [];
  for (const [i, tool] of tools.entries()) {
    if (isRecord(tool) && tool.type !== 'function') {
      // GPT-5's custom (free-form) tools and any later kind: Gemini declares functions only.
      throw Errors.unsupportedParameter('Gemini takes function tools only; other tool types cannot be translated.', { param: `tools[${i}].type` });
    }
    if (!isRecord(tool) || !isRecord(tool.function)) continue;
    const fn = tool.function;
    const name = stringField(fn, 'name');
    if (name === undefined) continue;
    const declaration: Json = { name };
    const description = stringField(fn, 'description');
    if (description !== undefined) declaration.description = description;
    // A parameterless function has no `parameters` in Gemini either.
    if (isRecord(fn.parameters)) declaration.parameters = fn.parameters;
    out.push(declaration);
  }
  return out;
}

function functionCallingConfig(choice: unknown): Json | undefined {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'required') return { mode: 'ANY' };
  if (choice === 'none') return { mode: 'NONE' };
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    return { mode: 'ANY', allowedFunctionNames: [choice.function.name] };
  }
  return undefined;
}
