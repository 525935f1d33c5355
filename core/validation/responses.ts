/**
 * Body schema for POST /responses, and its one cross-field rule: `input` and `model` are required
 * unless the call names a `prompt` (a prompt template kept at the provider supplies them, as
 * OpenAI allows; the `prompts` plugin renders prompts stored in this gateway). `prompt: null` is
 * no prompt, as the official API reads it.
 */

import type { SchemaObject } from 'ajv';
import type { GatewayError } from '../errors.js';
import { metadataSchema, toolChoiceSchema } from './chat-completions.js';
import { ValidationErrors } from './errors.js';

export const responsesSchema: SchemaObject = {
  type: 'object',
  properties: {
    // No enum although the spec lists four models: newer models must work through the gateway too.
    model: { type: 'string' },
    // Input items have many kinds (messages, tool outputs, files); only the outer kind is checked.
    input: { type: ['string', 'array'] },
    // Spec: at most 16 pairs, keys up to 64 characters, string values up to 512 characters.
    metadata: metadataSchema,
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    truncation: { enum: ['auto', 'disabled', null] },
    tool_choice: toolChoiceSchema(['none', 'auto', 'required']),
    include: { type: ['array', 'null'], items: { type: 'string' } },
    tools: { type: 'array' },
    instructions: { type: ['string', 'null'] },
    previous_response_id: { type: ['string', 'null'] },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'] },
    stream: { type: ['boolean', 'null'] },
    user: { type: 'string' },
    prompt: {
      type: ['object', 'null'],
      required: ['id'],
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 256 },
        version: { type: ['string', 'null'], maxLength: 64 },
        variables: { type: ['object', 'null'] },
      },
    },
  },
};

export function checkResponsesRules(body: Record<string, unknown>): GatewayError | null {
  if (body.prompt != null) return null;
  if (body.model === undefined) return ValidationErrors.missingRequiredParameter('model is required (or a prompt that supplies it).', { param: 'model' });
  if (body.input === undefined) {
    return ValidationErrors.missingRequiredParameter('input is required (or a prompt that supplies it).', { param: 'input' });
  }
  return null;
}
