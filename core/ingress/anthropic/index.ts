/**
 * Anthropic's Messages API as an ingress dialect: clients built for `POST /v1/messages` can call
 * any provider. When the target speaks Anthropic the call is passed through untouched; otherwise:
 *
 *   Anthropic request ──request.ts──► OpenAI chat completion request
 *   Anthropic Message ◄─response.ts── chat.completion
 *   Anthropic events  ◄──stream.ts─── chat.completion.chunk … [DONE]
 *   Anthropic error   ◄──errors.ts─── {error:{message,type,param,code}} (status kept)
 *
 * Every function is pure apart from ids for answers that came without one (random, see ids.ts).
 */
import type { IngressDialect } from '../types.js';
import { anthropicError } from './errors.js';
import { buildChatRequest } from './request.js';
import { buildMessage } from './response.js';
import { createStreamTranslator } from './stream.js';

/**
 * @example
 *   const chat = anthropicIngress.request(body, { strict: true });      // may throw a 400 GatewayError
 *   const message = anthropicIngress.response(completion, body, { strict: true });
 */
export const anthropicIngress: IngressDialect = {
  request: (body, options) => buildChatRequest(body, options),
  response: (body, request, options) => buildMessage(body, request, { strict: options.strict }),
  stream: (request, options) => createStreamTranslator(request, { strict: options.strict }),
  error: (status, body) => ({ ...anthropicError(status, body) }),
};

export { buildChatRequest, buildMessage, createStreamTranslator, anthropicError };
export { anthropicStreamError, errorType } from './errors.js';
export type { IngressOptions, IdFactory } from './wire.js';
