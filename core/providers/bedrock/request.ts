/**
 * OpenAI request → Bedrock Runtime call, per route:
 *
 *   chat.completions ─► POST /model/{id}/converse          (Converse)
 *                       POST /model/{id}/converse-stream   (ConverseStream, when `stream: true`)
 *   embeddings ───────► POST /model/{id}/invoke            (InvokeModel, Titan or Cohere body)
 *
 * `{id}` is the request's `model` as the caller wrote it (a model id, an inference profile such as
 * `us.anthropic.claude-3-5-sonnet-20241022-v2:0`, or an ARN), escaped as one path segment.
 *
 * The Converse body is built from an allow-list: Bedrock rejects unknown fields, so OpenAI
 * parameters it has no twin for (`seed`, `user`, `reasoning_effort`, …) are left out.
 * `response_format` becomes a forced answer tool (../anthropic/json-output.ts: its input is the
 * message text). Model-specific extras:
 * - `top_k` and `thinking` go into `additionalModelRequestFields` only when strict compliance is
 *   off (`x-gateway-strict-provider-compliance: false`): their meaning depends on the model behind
 *   Converse (Anthropic reads `top_k`/`thinking` there, others ignore or reject them), so a strict
 *   call, whose client expects OpenAI semantics, does not send them;
 * - Bedrock's own fields (`additionalModelRequestFields`, `additionalModelResponseFieldPaths`,
 *   `guardrailConfig`, `performanceConfig`, `promptVariables`, `requestMetadata`) are sent as the
 *   caller wrote them, in any mode: nobody writes those names by accident. An explicit
 *   `additionalModelRequestFields` object wins over the `top_k`/`thinking` it is merged with.
 *
 * Message shape rules Converse enforces and OpenAI does not:
 * - `system`/`developer` messages are a top-level `system` list, not turns;
 * - turns alternate user/assistant and start with a user turn, so consecutive same-role turns
 *   merge (a `tool` message is a user turn holding a `toolResult` block, tool results first);
 * - images travel inline (Bedrock fetches no URLs) in one of four formats;
 * - text blocks must not be empty.
 *
 * What cannot be mapped is a 400 naming the parameter, never a silent drop: `n > 1`, `logprobs`, image URLs,
 * unknown content parts or tool types, token-array embedding input.
 */
import { Errors } from '../../errors.js';
import { maxTokens, parseArguments, pushTurn, stopSequences, texts } from '../openai-shape.js';
import { answerTool, hasOwnTools, refuseUnanswerable } from '../anthropic/json-output.js';
import type { TranslateContext, TranslatedRequest } from '../types.js';
import {
  isRecord,
  modelPath,
  stringField,
  type ContentBlock,
  type ImageFormat,
  type InferenceConfig,
  type Json,
  type Message,
  type ToolChoice,
  type ToolSpec,
} from './wire.js';

/** Bedrock fields a caller may set on purpose; sent unchanged. */
const BEDROCK_FIELDS = [
  'additionalModelResponseFieldPaths',
  'guardrailConfig',
  'performanceConfig',
  'promptVariables',
  'requestMetadata',
] as const;

/**
 * The Bedrock call for an OpenAI request; throws a 400 GatewayError for what cannot be mapped.
 *
 * @example
 *   buildRequest({ route: 'chat.completions', request: { model: 'amazon.nova-lite-v1:0', messages }, … }).path
 *   // '/model/amazon.nova-lite-v1%3A0/converse'
 */
export function buildRequest(ctx: TranslateContext): TranslatedRequest {
  switch (ctx.route) {
    case 'chat.completions':
      return converseRequest(ctx);
    case 'embeddings':
      return embeddingsRequest(ctx.request);
    default:
      throw Errors.unsupportedRoute(`Bedrock translates chat.completions and embeddings, not ${ctx.route}.`);
  }
}

function modelId(req: Json): string {
  const model = stringField(req, 'model');
  if (model === undefined || model.length === 0) throw Errors.badRequest('model must name a Bedrock model id or ARN.', { param: 'model' });
  return model;
}

// ── Converse ────────────────────────────────────────────────────────────────────────────────────

function converseRequest(ctx: TranslateContext): TranslatedRequest {
  const req = ctx.request;
  const model = modelId(req);
  refuseUnanswerable(req, 'Bedrock Converse');
  const { system, messages } = splitMessages(Array.isArray(req.messages) ? req.messages : []);
  const body: Json = { messages };
  if (system.length > 0) body.system = system;
  const inference = inferenceConfig(req);
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  const tools = toolSpecs(req.tools);
  let choice = toolChoice(req.tool_choice);
  const answer = answerTool(req);
  if (answer !== undefined) {
    tools.push({ toolSpec: { name: answer.name, description: answer.description, inputSchema: { json: answer.schema } } });
    // Alone it is forced; beside the caller's tools the model calls one of them or answers,
    // unless the caller named a function.
    const own = hasOwnTools(req) && req.tool_choice !== 'none';
    if (!own) choice = { tool: { name: answer.name } };
    else if (choice === undefined || !('tool' in choice)) choice = { any: {} };
  }
  if (tools.length > 0) {
    // `none` still sends the tools: Bedrock rejects a history with toolUse blocks but no toolConfig.
    body.toolConfig = choice === undefined ? { tools } : { tools, toolChoice: choice };
  }

  const additional = additionalFields(ctx);
  if (additional !== undefined) body.additionalModelRequestFields = additional;
  for (const key of BEDROCK_FIELDS) if (req[key] !== undefined) body[key] = req[key];

  const action = req.stream === true ? 'converse-stream' : 'converse';
  return { path: `${modelPath(model)}/${action}`, body };
}

function inferenceConfig(req: Json): InferenceConfig {
  const config: InferenceConfig = {};
  const max = maxTokens(req);
  if (max !== undefined) config.maxTokens = max;
  if (typeof req.temperature === 'number') config.temperature = req.temperature;
  if (typeof req.top_p === 'number') config.topP = req.top_p;
  const stop = stopSequences(req.stop);
  if (stop.length > 0) config.stopSequences = stop;
  return config;
}

function additionalFields(ctx: TranslateContext): unknown {
  const req = ctx.request;
  const derived: Json = {};
  if (!ctx.strict) {
    if (typeof req.top_k === 'number') derived.top_k = req.top_k;
    if (isRecord(req.thinking)) derived.thinking = req.thinking;
  }
  const explicit = req.additionalModelRequestFields;
  // Not an object: the caller's value as written, for Bedrock to judge.
  if (explicit !== undefined && !isRecord(explicit)) return explicit;
  const merged = { ...derived, ...explicit };
  return Object.keys(merged).length > 0 ? merged : undefined;
}

function splitMessages(input: unknown[]): { system: { text: string }[]; messages: Message[] } {
  const system: { text: string }[] = [];
  const messages: Message[] = [];
  input.forEach((message, i) => {
    if (!isRecord(message)) return;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of texts(message.content)) system.push({ text });
        break;
      case 'user':
        pushTurn(messages, 'user', userBlocks(message.content, i), isToolResult);
        break;
      case 'assistant': {
        const blocks = assistantBlocks(message);
        if (messages.length === 0 && blocks.length > 0) {
          throw Errors.badRequest('Bedrock Converse requires the conversation to start with a user message.', {
            param: `messages[${i}]`,
          });
        }
        pushTurn(messages, 'assistant', blocks);
        break;
      }
      case 'tool':
        pushTurn(messages, 'user', [toolResult(message)], isToolResult);
        break;
      default:
        break;
    }
  });
  return { system, messages };
}

/** Claude behind Converse wants tool results first in a merged user turn. */
function isToolResult(block: ContentBlock): boolean {
  return 'toolResult' in block;
}

function userBlocks(content: unknown, i: number): ContentBlock[] {
  if (!Array.isArray(content)) return texts(content).map((text) => ({ text }));
  const blocks: ContentBlock[] = [];
  content.forEach((part, j) => {
    if (!isRecord(part)) return;
    if (part.type === 'text') {
      if (typeof part.text === 'string' && part.text.length > 0) blocks.push({ text: part.text });
    } else if (part.type === 'image_url') {
      blocks.push(imageBlock(part.image_url, `messages[${i}].content[${j}].image_url`));
    } else {
      throw Errors.unsupportedParameter('Bedrock Converse takes text and image_url content parts; other types cannot be translated.', {
        param: `messages[${i}].content[${j}].type`,
      });
    }
  });
  return blocks;
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

const IMAGE_FORMATS: ReadonlyMap<string, ImageFormat> = new Map([
  ['image/png', 'png'],
  ['image/jpeg', 'jpeg'],
  ['image/jpg', 'jpeg'],
  ['image/gif', 'gif'],
  ['image/webp', 'webp'],
]);

/** `image_url` (`{url}` or a bare string) → an inline image block; Bedrock cannot fetch URLs. */
function imageBlock(imageUrl: unknown, param: string): ContentBlock {
  const url = typeof imageUrl === 'string' ? imageUrl : isRecord(imageUrl) ? stringField(imageUrl, 'url') : undefined;
  const data = url === undefined ? null : DATA_URL.exec(url);
  if (data === null) {
    throw Errors.unsupportedParameter(
      'Bedrock cannot fetch image URLs: send the image inline as a base64 data URL (data:image/png;base64,…).',
      { param },
    );
  }
  const format = IMAGE_FORMATS.get(data[1]!.toLowerCase());
  if (format === undefined) {
    throw Errors.unsupportedParameter('Bedrock Converse takes png, jpeg, gif or webp images only.', { param });
  }
  return { image: { format, source: { bytes: data[2]! } } };
}

function assistantBlocks(message: Json): ContentBlock[] {
  const blocks: ContentBlock[] = texts(message.content).map((text) => ({ text }));
  if (!Array.isArray(message.tool_calls)) return blocks;
  for (const call of message.tool_calls) {
    if (!isRecord(call) || !isRecord(call.function)) continue;
    blocks.push({
      toolUse: {
        toolUseId: stringField(call, 'id') ?? '',
        name: stringField(call.function, 'name') ?? '',
        input: parseArguments(call.function.arguments),
      },
    });
  }
  return blocks;
}

/** A `tool` message's text, as sent (an empty result stays empty: that is what the tool said). */
function toolResult(message: Json): ContentBlock {
  const content = message.content;
  const pieces = typeof content === 'string' ? [content] : texts(content);
  return {
    toolResult: {
      toolUseId: stringField(message, 'tool_call_id') ?? '',
      content: (pieces.length > 0 ? pieces : ['']).map((text) => ({ text })),
    },
  };
}

function toolSpecs(tools: unknown): ToolSpec[] {
  if (!Array.isArray(tools)) return [];
  const out: ToolSpec[] = [];
  tools.forEach((tool, i) => {
    if (!isRecord(tool)) return;
    if (tool.type !== 'function' || !isRecord(tool.function)) {
      throw Errors.unsupportedParameter('Bedrock Converse takes function tools only; other tool types cannot be translated.', {
        param: `tools[${i}].type`,
      });
    }
    const fn = tool.function;
    const name = stringField(fn, 'name');
    if (name === undefined) return;
    const spec: ToolSpec['toolSpec'] = { name, inputSchema: { json: {} } };
    const description = stringField(fn, 'description');
    if (description !== undefined) spec.description = description;
    // Converse requires a schema; a parameterless OpenAI function means "no arguments".
    spec.inputSchema = { json: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    out.push({ toolSpec: spec });
  });
  return out;
}

function toolChoice(choice: unknown): ToolChoice | undefined {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    return { tool: { name: choice.function.name } };
  }
  // `none` and absent: Converse has no "none"; leaving toolChoice out lets the model decide.
  return undefined;
}

// ── Embeddings (InvokeModel) ────────────────────────────────────────────────────────────────────

const TITAN_TEXT = /(?:^|[./])amazon\.titan-embed-text-v(\d+)/;
const COHERE_EMBED = /(?:^|[./])cohere\.embed-/;
const COHERE_V4 = /(?:^|[./])cohere\.embed-v4/;

/**
 * The InvokeModel body for an embedding model. The family is read from the model id (also inside
 * an ARN or an inference profile id); a provisioned-throughput ARN names no family and is refused.
 */
function embeddingsRequest(req: Json): TranslatedRequest {
  const model = modelId(req);
  const inputs = embeddingTexts(req.input);
  const path = `${modelPath(model)}/invoke`;
  const titan = TITAN_TEXT.exec(model);
  if (titan !== null) return { path, body: titanBody(req, inputs, Number(titan[1])) };
  if (COHERE_EMBED.test(model)) return { path, body: cohereBody(req, inputs, COHERE_V4.test(model)) };
  throw Errors.unsupportedParameter(
    `Bedrock embeddings translate for Amazon Titan Text Embeddings (amazon.titan-embed-text-*) and Cohere Embed (cohere.embed-*) models only.`,
    { param: 'model' },
  );
}

/** OpenAI `input` → texts; token arrays have no Bedrock twin (its models tokenize themselves). */
function embeddingTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string')) return input as string[];
  throw Errors.unsupportedParameter('Bedrock embedding models take text: input must be a string or an array of strings, not tokens.', {
    param: 'input',
  });
}

function titanBody(req: Json, inputs: string[], version: number): Json {
  if (inputs.length > 1) {
    throw Errors.unsupportedParameter(
      `Titan text embedding models embed one text per call; input has ${inputs.length}. Send one string, or use a cohere.embed-* model for batches.`,
      { param: 'input' },
    );
  }
  const body: Json = { inputText: inputs[0] };
  // G1 (v1) takes `inputText` alone and has a fixed size.
  if (version < 2) {
    if (typeof req.dimensions === 'number') {
      throw Errors.unsupportedParameter('amazon.titan-embed-text-v1 has a fixed size; dimensions needs amazon.titan-embed-text-v2.', {
        param: 'dimensions',
      });
    }
    return body;
  }
  if (typeof req.dimensions === 'number') body.dimensions = req.dimensions;
  // OpenAI embeddings are unit vectors; Titan v2 normalizes by default, said explicitly here.
  body.normalize = typeof req.normalize === 'boolean' ? req.normalize : true;
  return body;
}

function cohereBody(req: Json, inputs: string[], v4: boolean): Json {
  // Cohere requires `input_type`; OpenAI has none, and documents are what most callers embed.
  const body: Json = { texts: inputs, input_type: stringField(req, 'input_type') ?? 'search_document' };
  const truncate = stringField(req, 'truncate');
  if (truncate !== undefined) body.truncate = truncate;
  if (typeof req.dimensions === 'number') {
    if (!v4) {
      throw Errors.unsupportedParameter('Cohere Embed v3 models have a fixed size; dimensions needs cohere.embed-v4.', { param: 'dimensions' });
    }
    body.output_dimension = req.dimensions;
  }
  return body;
}
