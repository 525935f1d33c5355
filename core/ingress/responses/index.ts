/**
 * OpenAI's Responses API as an ingress dialect: `POST /v1/responses` works with every provider.
 * OpenAI and Azure OpenAI serve it themselves (their adapters list it in `nativeRoutes`); for
 * everyone else:
 *
 *   Responses request ──request.ts (input.ts)──► OpenAI chat completion request
 *   response object   ◄─response.ts────────────── chat.completion
 *   Responses events  ◄─stream.ts──────────────── chat.completion.chunk … [DONE]
 *   OpenAI error      ◄─errors.ts──────────────── {error:{…}} (status kept)
 *
 * Stored responses and `previous_response_id` across providers: continuation.ts (the ContextVar
 * the `responses-store` plugin sets).
 */
import type { IngressDialect } from '../types.js';
import { responsesError } from './errors.js';
import { buildChatRequest } from './request.js';
import { buildResponse } from './response.js';
import { createStreamTranslator } from './stream.js';

/**
 * @example
 *   const chat = responsesIngress.request(body, { strict: true });     // may throw a 4xx GatewayError
 *   const response = responsesIngress.response(completion, body, { strict: true });
 */
export const responsesIngress: IngressDialect = {
  request: (body) => buildChatRequest(body),
  response: (body, request, options) => buildResponse(body, request, options),
  stream: (request, options) => createStreamTranslator(request, options),
  error: (status, body) => responsesError(status, body),
};

export { buildChatRequest, buildResponse, createStreamTranslator, responsesError };
export { inputItems } from './input.js';
export { randomId as responseId } from './ids.js';
export { withHistory, type ResponsesTurn } from './continuation.js';
export { previousResponseNotFound, streamErrorData } from './errors.js';
export type { IdFactory, ResponsesOptions } from './wire.js';
