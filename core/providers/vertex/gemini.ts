/**
 * Gemini models on Vertex AI. The request and answer bodies are Gemini's own, so the Gemini API
 * translator (core/providers/google) does the work; only the path differs:
 *
 *   chat        → /publishers/google/models/{model}:generateContent
 *                 /publishers/google/models/{model}:streamGenerateContent?alt=sse
 *   embeddings  → /publishers/google/models/{model}:predict
 *                 {instances:[{content}], parameters:{outputDimensionality?}}
 *                 ← {predictions:[{embeddings:{values, statistics:{token_count}}}]}
 *
 * Vertex's `:predict` reports token counts per input (unlike the Gemini API's batch embedder),
 * so the OpenAI answer carries `usage.prompt_tokens` from the provider.
 */
import { Errors } from '../../errors.js';
import { buildRequest } from '../google/request.js';
import { buildResponse } from '../google/response.js';
import { createStreamTranslator } from '../google/stream.js';
import { openaiError } from '../google/errors.js';
import { embeddingList, isRecord } from '../openai-shape.js';
import type { TranslateContext, TranslatedRequest, Translator } from '../types.js';
import { modelSegment } from './location.js';

function chatRequest(ctx: TranslateContext): TranslatedRequest {
  const built = buildRequest(ctx);
  // The Gemini API's `/models/{model}:method` becomes the publisher's model on Vertex.
  const method = built.path.slice(built.path.indexOf(':'));
  return { ...built, path: `/publishers/google/models/${modelSegment(ctx.request.model)}${method}` };
}

function inputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input as string[];
  throw Errors.unsupportedParameter('Vertex AI embeds text: input must be a string or an array of strings, not token ids.', { param: 'input' });
}

function embeddingsRequest(ctx: TranslateContext): TranslatedRequest {
  const req = ctx.request;
  const body: Record<string, unknown> = { instances: inputs(req.input).map((content) => ({ content })) };
  if (typeof req.dimensions === 'number') body.parameters = { outputDimensionality: req.dimensions };
  return { path: `/publishers/google/models/${modelSegment(req.model)}:predict`, body };
}

function embeddingsResponse(ctx: TranslateContext, body: unknown): Record<string, unknown> {
  const predictions = isRecord(body) && Array.isArray(body.predictions) ? body.predictions : undefined;
  if (predictions === undefined) throw Errors.upstreamInvalidResponse('Vertex AI answered without predictions.');
  let tokens = 0;
  let counted = false;
  const vectors = predictions.map((p) => {
    const embeddings = isRecord(p) && isRecord(p.embeddings) ? p.embeddings : undefined;
    const stats = embeddings !== undefined && isRecord(embeddings.statistics) ? embeddings.statistics : undefined;
    if (stats !== undefined && typeof stats.token_count === 'number') {
      tokens += stats.token_count;
      counted = true;
    }
    return embeddings !== undefined && Array.isArray(embeddings.values) ? (embeddings.values as number[]) : [];
  });
  const model = typeof ctx.request.model === 'string' ? ctx.request.model : '';
  return embeddingList(vectors, model, ctx.request.encoding_format, counted ? tokens : undefined);
}

/** The Gemini half of the Vertex dialect. */
export const geminiOnVertex: Translator = {
  routes: new Set(['chat.completions', 'embeddings']),
  request: (ctx) => (ctx.route === 'embeddings' ? embeddingsRequest(ctx) : chatRequest(ctx)),
  response: (ctx, body) => (ctx.route === 'embeddings' ? embeddingsResponse(ctx, body) : buildResponse(ctx, body)),
  stream: (ctx) => createStreamTranslator(ctx),
  error: (_ctx, status, body) => ({ ...openaiError(status, body) }),
};
