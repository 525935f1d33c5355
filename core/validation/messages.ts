/**
 * Body schemas for Anthropic's POST /v1/messages and /v1/messages/count_tokens, with the bounds of
 * Anthropic's Messages API. Like every route schema they only check: unknown fields pass, so a
 * call that goes to Anthropic unchanged keeps every field Anthropic adds later.
 */
import type { SchemaObject } from 'ajv';

const contentSchema: SchemaObject = {
  type: ['string', 'array'],
  items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
};

const messagesProperty: SchemaObject = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    required: ['role', 'content'],
    properties: { role: { type: 'string', enum: ['user', 'assistant'] }, content: contentSchema },
  },
};

const shared = {
  model: { type: 'string', minLength: 1 },
  messages: messagesProperty,
  system: contentSchema,
  tools: {
    type: 'array',
    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, input_schema: { type: 'object' } } },
  },
  tool_choice: { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['auto', 'any', 'tool', 'none'] } } },
  thinking: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, budget_tokens: { type: 'integer', minimum: 1024 } } },
} as const;

export const messagesSchema: SchemaObject = {
  type: 'object',
  required: ['model', 'messages', 'max_tokens'],
  properties: {
    ...shared,
    max_tokens: { type: 'integer', minimum: 1 },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    stream: { type: 'boolean' },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'], maxLength: 256 } } },
  },
};

export const countTokensSchema: SchemaObject = {
  type: 'object',
  required: ['model', 'messages'],
  properties: shared,
};
