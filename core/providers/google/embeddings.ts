/**
 * OpenAI embeddings ↔ Gemini `POST /models/<model>:batchEmbedContents`.
 *
 *   {model, input: "a" | ["a","b"], dimensions?}
 *     → {requests: [{model: "models/<model>", content: {parts: [{text}]}, outputDimensionality?}, …]}
 *   {embeddings: [{values: […]}, …]} → {object: "list", data: [{object: "embedding", index, embedding}], model}
 *
 * Gemini embeds text only: token-id inputs get 400. Its answer carries no token counts, so the
 * OpenAI answer has no `usage` and the gateway's meter estimates the prompt tokens.
 */
import { Errors } from '../../errors.js';
import { embeddingList, isRecord } from '../openai-shape.js';
import type { TranslateContext, TranslatedRequest } from '../types.js';
import { modelId } from './request.js';

function inputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input as string[];
  throw Errors.unsupportedParameter('Gemini embeds text: input must be a string or an array of strings, not token ids.', { param: 'input' });
}

export function buildEmbeddingsRequest(ctx: TranslateContext): TranslatedRequest {
  const req = ctx.request;
  const model = modelId(req.model);
  const dimensions = typeof req.dimensions === 'number' ? req.dimensions : undefined;
  const requests = inputs(req.input).map((text) => {
    const one: Record<string, unknown> = { model: `models/${decodeURIComponent(model)}`, content: { parts: [{ text }] } };
    if (dimensions !== undefined) one.outputDimensionality = dimensions;
    return one;
  });
  return { path: `/models/${model}:batchEmbedContents`, body: { requests } };
}

export function buildEmbeddingsResponse(ctx: TranslateContext, body: unknown): Record<string, unknown> {
  const embeddings = isRecord(body) && Array.isArray(body.embeddings) ? body.embeddings : undefined;
  if (embeddings === undefined) throw new Error('Gemini answered without embeddings');
  const vectors = embeddings.map((e) => (isRecord(e) && Array.isArray(e.values) ? (e.values as number[]) : []));
  return embeddingList(vectors, typeof ctx.request.model === 'string' ? ctx.request.model : '', ctx.request.encoding_format);
}
