/**
 * What OpenAI callers ask for that a tool-based provider (Anthropic's Messages, Bedrock Converse)
 * has no field for, said out loud instead of dropped.
 *
 * `response_format` (`json_object`, `json_schema`): these providers have no JSON mode, so it goes
 * the way the official SDKs' helpers do it: one extra tool whose input schema is the wanted schema,
 * forced with tool_choice. The model's input to that tool is the answer: it comes back as the
 * message's text (plain and streamed), not as a tool call, and the turn ends with
 * `finish_reason: "stop"`.
 *
 * `n > 1` and `logprobs`/`top_logprobs`: neither provider can return them; a 400
 * `unsupported_parameter` naming the field, never a silently different answer.
 */
import { Errors } from '../../errors.js';
import { isRecord, type Json } from '../openai-shape.js';

/** The tool that carries a `response_format` answer. */
export interface AnswerTool {
  name: string;
  description: string;
  schema: Json;
}

/** Tool names both providers accept (OpenAI's `json_schema.name` has the same grammar). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_NAME = 'json_output';

/**
 * The answer tool a request's `response_format` asks for; undefined for text (or none).
 *
 * @example
 *   answerTool({ response_format: { type: 'json_object' } })
 *   // { name: 'json_output', description: 'Respond with a JSON object.', schema: { type: 'object' } }
 */
export function answerTool(request: Json): AnswerTool | undefined {
  const format = request.response_format;
  if (!isRecord(format)) return undefined;
  if (format.type === 'json_object') return { name: DEFAULT_NAME, description: 'Respond with a JSON object.', schema: { type: 'object' } };
  if (format.type !== 'json_schema') return undefined;
  const spec = isRecord(format.json_schema) ? format.json_schema : {};
  const name = typeof spec.name === 'string' && TOOL_NAME.test(spec.name) ? spec.name : DEFAULT_NAME;
  const description = typeof spec.description === 'string' && spec.description.length > 0 ? spec.description : 'Respond with JSON that matches this schema.';
  return { name, description, schema: isRecord(spec.schema) ? spec.schema : { type: 'object' } };
}

/** True when the request has function tools of its own (the answer tool is then one choice among them). */
export function hasOwnTools(request: Json): boolean {
  return Array.isArray(request.tools) && request.tools.length > 0;
}

/**
 * Refuses what the provider cannot answer: several choices, token log probabilities.
 *
 * @example
 *   refuseUnanswerable({ n: 2 }, 'Anthropic') // throws 400 unsupported_parameter, param `n`
 */
export function refuseUnanswerable(request: Json, provider: string): void {
  if (typeof request.n === 'number' && request.n > 1) {
    throw Errors.unsupportedParameter(`${provider} returns one choice per call; n must be 1.`, { param: 'n' });
  }
  if (request.logprobs === true) {
    throw Errors.unsupportedParameter(`${provider} does not return token log probabilities; logprobs cannot be true.`, { param: 'logprobs' });
  }
  if (typeof request.top_logprobs === 'number' && request.top_logprobs > 0) {
    throw Errors.unsupportedParameter(`${provider} does not return token log probabilities; top_logprobs cannot be set.`, { param: 'top_logprobs' });
  }
}
