/**
 * Body schema for POST /chat/completions, plus the cross-field rules a schema expresses badly.
 *
 * The schema only *checks*: no `additionalProperties: false`, no defaults, no coercion, so unknown
 * and provider-specific fields pass through and the gateway can forward the original bytes.
 * Bounds come from the API spec's chat request table and Limits section.
 */

import type { SchemaObject } from 'ajv';
import type { GatewayError } from '../errors.js';
import { ValidationErrors } from './errors.js';

/**
 * Sampling fields chat and legacy completions share, with the spec's bounds. Several are also
 * nullable although the spec table only says so for some: OpenAI's own reference marks
 * `stop`, `logit_bias` and `stream_options` nullable and client libraries do send explicit nulls.
 */
export const samplingProperties = {
  model: { type: 'string' },
  temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
  top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  frequency_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
  presence_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
  n: { type: ['integer', 'null'], minimum: 1, maximum: 128 },
  // A string, or up to 4 strings; `maxItems`/`items` only apply when the value is an array.
  stop: { type: ['string', 'array', 'null'], maxItems: 4, items: { type: 'string' } },
  // Keys are token ids; every value is a bias in [-100, 100].
  logit_bias: {
    type: ['object', 'null'],
    additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
  },
  max_tokens: { type: ['integer', 'null'], minimum: 0 },
  seed: { type: ['integer', 'null'] },
  stream: { type: ['boolean', 'null'] },
  stream_options: { type: ['object', 'null'] },
  user: { type: 'string' },
} as const;

/**
 * A mode keyword or an object selecting a tool. `if/then` rather than `anyOf` so a bad keyword
 * reports `invalid_value` with the allowed list, and a number reports `invalid_type`.
 */
export function toolChoiceSchema(modes: readonly string[]): SchemaObject {
  return { type: ['string', 'object'], if: { type: 'string' }, then: { enum: modes } };
}

const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/**
 * `metadata`: at most 16 pairs, keys up to 64 characters, string values up to 512 characters (the
 * spec's bound for Responses metadata; chat completions take the same object).
 */
export const metadataSchema: SchemaObject = {
  type: ['object', 'null'],
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  additionalProperties: { type: 'string', maxLength: 512 },
};

/** A content part whose `type` is one of `types` (other fields are the provider's to check). */
function contentParts(types: readonly string[]): SchemaObject {
  return { items: { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: types } } } };
}

/**
 * The content part types each role may send (OpenAI's chat API): a typo or a part of another
 * API's shape (`{"type": "image"}`) is a 400 naming the part, not a silent drop by a translator.
 */
const PARTS_BY_ROLE: ReadonlyArray<[roles: readonly string[], types: readonly string[]]> = [
  [['user'], ['text', 'image_url', 'input_audio', 'file']],
  [['assistant'], ['text', 'refusal']],
  [['system', 'developer', 'tool', 'function'], ['text']],
];

/**
 * `tool_choice` for chat: a mode, or an object selecting a tool: `{type: "function", function:
 * {name}}` (also `custom` with `custom.name`, and `allowed_tools`). `{}` or a function without a
 * name is a 400.
 */
const chatToolChoiceSchema: SchemaObject = {
  type: ['string', 'object'],
  if: { type: 'string' },
  then: { enum: ['none', 'auto', 'required'] },
  else: {
    required: ['type'],
    properties: { type: { type: 'string', enum: ['function', 'custom', 'allowed_tools'] } },
    allOf: [
      namedChoice('function'),
      namedChoice('custom'),
      { if: { properties: { type: { const: 'allowed_tools' } }, required: ['type'] }, then: { required: ['allowed_tools'], properties: { allowed_tools: { type: 'object' } } } },
    ],
  },
};

/** `{type: kind, [kind]: {name}}` with a non-empty name. */
function namedChoice(kind: string): SchemaObject {
  return {
    // `required` too: without it an object lacking `type` would match the `if` vacuously.
    if: { properties: { type: { const: kind } }, required: ['type'] },
    then: {
      required: [kind],
      properties: { [kind]: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } },
    },
  };
}

/** A tool of `kind` carries `{[kind]: {name}}`. */
function namedTool(kind: string): SchemaObject {
  return {
    if: { properties: { type: { const: kind } }, required: ['type'] },
    then: { required: [kind], properties: { [kind]: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
  };
}

export const chatCompletionsSchema: SchemaObject = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    ...samplingProperties,
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { type: 'string', enum: MESSAGE_ROLES },
          // A string, or parts whose type the role allows (checked below); null for tool calls.
          content: { type: ['string', 'array', 'null'] },
        },
        allOf: PARTS_BY_ROLE.map(([roles, types]) => ({
          if: { properties: { role: { enum: roles } }, required: ['role'] },
          then: { properties: { content: contentParts(types) } },
        })),
      },
    },
    metadata: metadataSchema,
    max_completion_tokens: { type: ['integer', 'null'], minimum: 0 },
    logprobs: { type: ['boolean', 'null'] },
    top_logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 20 },
    // Function tools and GPT-5's custom tools (`{type: "custom", custom: {name, format?}}`), as
    // the official API takes them; a provider that cannot run a kind refuses it in its translator.
    tools: {
      type: 'array',
      maxItems: 128,
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string', enum: ['function', 'custom'] } },
        allOf: [namedTool('function'), namedTool('custom')],
      },
    },
    tool_choice: chatToolChoiceSchema,
    parallel_tool_calls: { type: 'boolean' },
    response_format: { type: 'object' },
    // Deprecated by tools, still accepted: 1 to 128 function definitions.
    functions: {
      type: 'array',
      minItems: 1,
      maxItems: 128,
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    },
    // Deprecated by tool_choice: a mode, or `{name}` naming one of `functions`.
    function_call: {
      type: ['string', 'object'],
      if: { type: 'string' },
      then: { enum: ['none', 'auto'] },
      else: { required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
    },
  },
};

/** `stream_options` configures a stream; without `stream: true` it is a caller mistake, not a no-op. */
export function checkStreamOptions(body: Record<string, unknown>): GatewayError | null {
  if (body.stream_options == null || body.stream === true) return null;
  return ValidationErrors.invalidParameterCombination('stream_options is only allowed when stream is true.', {
    param: 'stream_options',
  });
}

/** Cross-field rules of a chat body; runs only after the schema passed, so types are known. */
export function checkChatCompletionsRules(body: Record<string, unknown>): GatewayError | null {
  if (body.top_logprobs != null && body.logprobs !== true) {
    return ValidationErrors.invalidParameterCombination('top_logprobs requires logprobs to be true.', {
      param: 'top_logprobs',
    });
  }
  return checkStreamOptions(body);
}
