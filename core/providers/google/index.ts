/**
 * Google's Gemini API (AI Studio, `v1beta`) as an OpenAI chat completions dialect.
 *
 *   OpenAI chat request ─► request.ts  ─► POST {base}/models/<model>:generateContent
 *                                          (or :streamGenerateContent?alt=sse)
 *   GenerateContentResponse ─► response.ts ─► chat.completion
 *   SSE of responses ─────► stream.ts   ─► chat.completion.chunk … [DONE]
 *   OpenAI embeddings ────► embeddings.ts ─► POST {base}/models/<model>:batchEmbedContents
 *   Google error ─────────► errors.ts   ─► {error:{message,type,param,code}}
 *
 * `chat.completions` and `embeddings` translate; other model routes get 400 `unsupported_route`.
 */
import type { Target } from '../../router/types.js';
import type { ProviderAdapter, Translator } from '../types.js';
import { openaiError } from './errors.js';
import { buildEmbeddingsRequest, buildEmbeddingsResponse } from './embeddings.js';
import { buildRequest } from './request.js';
import { buildResponse } from './response.js';
import { createStreamTranslator } from './stream.js';

/**
 * The key travels in `x-goog-api-key`, never as `?key=`: a URL ends up in access logs, traces and
 * error messages, a header does not.
 */
function authHeaders(target: Target): Record<string, string> {
  return target.apiKey ? { 'x-goog-api-key': target.apiKey } : {};
}

const translate: Translator = {
  routes: new Set(['chat.completions', 'embeddings']),
  request: (ctx) => (ctx.route === 'embeddings' ? buildEmbeddingsRequest(ctx) : buildRequest(ctx)),
  response: (ctx, body) => (ctx.route === 'embeddings' ? buildEmbeddingsResponse(ctx, body) : buildResponse(ctx, body)),
  stream: (ctx) => createStreamTranslator(ctx),
  error: (_ctx, status, body) => ({ ...openaiError(status, body) }),
};

/**
 * @example
 *   // targets: [{ provider: google, api_key: AIza… }]
 *   // x-gateway-provider: google
 */
export const google: ProviderAdapter = {
  id: 'google',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  routes: translate.routes,
  authHeaders,
  translate,
};
