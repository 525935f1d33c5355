/**
 * The slice of Amazon Bedrock Runtime's wire format the translator reads and writes
 * (API version 2023-09-30):
 *
 * - Converse / ConverseStream (`POST /model/{modelId}/converse[-stream]`), the model-neutral chat
 *   API: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * - InvokeModel (`POST /model/{modelId}/invoke`) with the Titan and Cohere embedding bodies from
 *   the Bedrock user guide's "Inference request parameters" pages.
 *
 * Upstream bodies arrive as `unknown`; the guards narrow them field by field instead of trusting a
 * cast, because a provider that adds or renames a field must not crash the gateway.
 */

import { isRecord, stringField, type Json } from '../openai-shape.js';
export { isRecord, stringField, type Json };

/** The image formats Converse accepts in an `ImageBlock`. */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** One content block of a request message (the kinds this translator produces; a union on the wire). */
export type ContentBlock =
  | { text: string }
  | { image: { format: ImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: Json } }
  | { toolResult: { toolUseId: string; content: { text: string }[] } };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/** `inferenceConfig`: the sampling settings every Converse model shares. */
export interface InferenceConfig {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

/** `toolConfig.toolChoice`, a union: exactly one member is set (the "any tool" one is keyed `any` on the wire). */
export type ToolChoice = { auto: Json } | Record<'any', Json> | { tool: { name: string } };

export interface ToolSpec {
  toolSpec: { name: string; description?: string; inputSchema: { json: Json } };
}

/**
 * `TokenUsage` of a Converse answer and of the stream's `metadata` event. `inputTokens` excludes
 * the cached share: cache reads and writes are counted beside it (as Anthropic does).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheWriteInputTokens: number;
}

/** Event types of a ConverseStream answer (the `:event-type` header of each event-stream message). */
export const StreamEvents = {
  messageStart: 'messageStart',
  contentBlockStart: 'contentBlockStart',
  contentBlockDelta: 'contentBlockDelta',
  contentBlockStop: 'contentBlockStop',
  messageStop: 'messageStop',
  metadata: 'metadata',
  /** A modelled exception (`:message-type: exception`); the decoder puts `:exception-type` in `type`. */
  exception: 'exception',
} as const;

export function numberField(value: Json, key: string): number | undefined {
  const field = value[key];
  return typeof field === 'number' && Number.isFinite(field) ? field : undefined;
}

/** `TokenUsage` from a raw `usage` object; absent or malformed counts are 0. */
export function tokenUsage(raw: unknown): TokenUsage {
  const usage = isRecord(raw) ? raw : {};
  return {
    inputTokens: numberField(usage, 'inputTokens') ?? 0,
    outputTokens: numberField(usage, 'outputTokens') ?? 0,
    cacheReadInputTokens: numberField(usage, 'cacheReadInputTokens') ?? 0,
    cacheWriteInputTokens: numberField(usage, 'cacheWriteInputTokens') ?? 0,
  };
}

/**
 * The model id a path names: the caller's id, ARN or inference profile, escaped as one segment
 * (`arn:aws:bedrock:…/x` keeps its `:` and `/` inside the segment as `%3A` and `%2F`).
 *
 * @example modelPath('us.anthropic.claude-3-5-sonnet-20241022-v2:0') // '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0'
 */
export function modelPath(model: string): string {
  return `/model/${encodeURIComponent(model)}`;
}
