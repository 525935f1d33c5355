/**
 * Ingress dialects: client APIs other than OpenAI's that the gateway serves (Anthropic's Messages
 * API first). A call arrives in the client's dialect; when its target speaks that dialect too it
 * goes through unchanged, otherwise it is translated to an OpenAI chat completion, sent through
 * the normal machinery (which may translate it again for the provider), and its answer is
 * translated back:
 *
 *   client dialect ──request()──► OpenAI chat ──► provider (its own translator, if any)
 *   client dialect ◄─response()── OpenAI chat answer
 *   client events  ◄──stream()─── OpenAI chunks
 *   client error   ◄──error()──── OpenAI error body (status kept)
 */
import type { StreamTranslator } from '../providers/types.js';

export type Json = Record<string, unknown>;

export interface AnswerOptions {
  strict: boolean;
  /** Called once with the finished answer in the client's dialect (the Responses store keeps it). */
  onAnswer?: (answer: Json) => void;
}

export interface IngressDialect {
  /** The client's request body → an OpenAI chat completions body. Throws a GatewayError (400) for input it cannot map. */
  request(body: Json, options: { strict: boolean }): Json;
  /** An OpenAI `chat.completion` → the client's answer. `request` is the client's original body. */
  response(body: Json, request: Json, options: AnswerOptions): Json;
  /** OpenAI chunk events (`data: {chunk}` … `data: [DONE]`, or `event: error`) → the client's events. */
  stream(request: Json, options: AnswerOptions): StreamTranslator;
  /** An OpenAI-shaped error body (`{error:{message,type,param,code}}`, or anything else) → the client's error body. */
  error(status: number, body: unknown): Json;
}
