/**
 * Anthropic's Claude models on Vertex AI. The bodies are Anthropic's Messages API, so the Anthropic
 * translator (core/providers/anthropic) does the work; Vertex differs in three places:
 *
 *   path     /publishers/anthropic/models/{model}:rawPredict   (:streamRawPredict when streaming)
 *   body     no `model` (the path names it), `anthropic_version: "vertex-2023-10-16"` instead of
 *            the `anthropic-version` header
 *   errors   Anthropic's error shape from the model, Google's from Vertex's front door (401, 403,
 *            429 quota, 404 model not enabled), so the error mapper picks by shape
 */
import { buildRequest } from '../anthropic/request.js';
import { buildResponse } from '../anthropic/response.js';
import { createStreamTranslator } from '../anthropic/stream.js';
import { openaiError as anthropicError } from '../anthropic/errors.js';
import { openaiError as googleError } from '../google/errors.js';
import { isRecord } from '../openai-shape.js';
import type { NativeCall, TranslateContext, TranslatedRequest, Translator } from '../types.js';
import { modelSegment } from './location.js';

/** The Messages API version Vertex serves, sent in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** True for a model Vertex serves through Anthropic's publisher (`claude-…`). */
export function isClaudeModel(model: unknown): boolean {
  return typeof model === 'string' && /^(?:publishers\/anthropic\/models\/)?claude-/.test(model);
}

/**
 * An Anthropic Messages body as Vertex wants it.
 *
 * @example
 *   toVertexBody({ model: 'claude-sonnet-4@20250514', messages, max_tokens: 64 })
 *   // → { messages, max_tokens: 64, anthropic_version: 'vertex-2023-10-16' }
 */
export function toVertexBody(body: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, ...rest } = body;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

/**
 * An Anthropic Messages call for a Claude model, sent natively: the client's own body, as Vertex
 * wants it, to the streaming or plain method. Undefined for other models (translated instead).
 */
export function nativeMessages(body: Record<string, unknown> | undefined): NativeCall | undefined {
  if (body === undefined || !isClaudeModel(body.model)) return undefined;
  const method = body.stream === true ? 'streamRawPredict' : 'rawPredict';
  return { path: `/publishers/anthropic/models/${modelSegment(body.model)}:${method}`, body: toVertexBody(body) };
}

function request(ctx: TranslateContext): TranslatedRequest {
  const built = buildRequest(ctx);
  const method = ctx.request.stream === true ? 'streamRawPredict' : 'rawPredict';
  return { ...built, path: `/publishers/anthropic/models/${modelSegment(ctx.request.model)}:${method}`, body: toVertexBody(built.body) };
}

/** Google's `{error:{code, message, status}}` (Vertex's own refusals) or Anthropic's `{type:"error", error:{type, message}}`. */
function isGoogleShaped(body: unknown): boolean {
  const one = Array.isArray(body) && body.length === 1 ? body[0] : body;
  return isRecord(one) && isRecord(one.error) && typeof one.error.status === 'string';
}

/** The Claude half of the Vertex dialect (chat only, as Anthropic's API). */
export const claudeOnVertex: Translator = {
  routes: new Set(['chat.completions']),
  request,
  response: (ctx, body) => buildResponse(ctx, body),
  stream: (ctx) => createStreamTranslator(ctx),
  error: (_ctx, status, body) => ({ ...(isGoogleShaped(body) ? googleError(status, body) : anthropicError(status, body)) }),
};
