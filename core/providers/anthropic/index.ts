/**
 * Anthropic's Messages API as an OpenAI chat completions dialect.
 *
 *   OpenAI chat request ─► request.ts ─► POST {base}/messages
 *   Anthropic message   ─► response.ts ─► chat.completion
 *   Anthropic SSE       ─► stream.ts   ─► chat.completion.chunk … [DONE]
 *   Anthropic error     ─► errors.ts   ─► {error:{message,type,param,code}}
 *
 * Only `chat.completions` translates; other model routes get 400 `unsupported_route`.
 */
import type { Target } from '../../router/types.js';
import type { ProviderAdapter, Translator } from '../types.js';
import { openaiError } from './errors.js';
import { buildRequest } from './request.js';
import { buildResponse } from './response.js';
import { createStreamTranslator } from './stream.js';

/** The API version whose wire format this translator speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** `anthropic-version` is sent even without a key: Anthropic 400s any call that lacks it. */
function authHeaders(target: Target): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  return headers;
}

const translate: Translator = {
  routes: new Set(['chat.completions']),
  request: buildRequest,
  response: (ctx, body) => buildResponse(ctx, body),
  stream: (ctx) => createStreamTranslator(ctx),
  error: (_ctx, status, body) => ({ ...openaiError(status, body) }),
};

/**
 * @example
 *   app.registerProvider(anthropic);
 *   // targets: [{ provider: anthropic, api_key: sk-ant-… }]
 */
export const anthropic: ProviderAdapter = {
  id: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  routes: translate.routes,
  nativeRoutes: new Set(['messages', 'messages.count_tokens']),
  authHeaders,
  translate,
};
