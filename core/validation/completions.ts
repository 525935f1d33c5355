/**
 * Body schema for POST /completions (legacy text completions) and its cross-field rules.
 * Sampling bounds are chat's; the spec gives both routes the same ranges.
 */

import type { SchemaObject } from 'ajv';
import type { GatewayError } from '../errors.js';
import { checkStreamOptions, samplingProperties } from './chat-completions.js';
import { ValidationErrors } from './errors.js';

/**
 * A prompt or embedding input: one text, many texts, one token array, or many token arrays.
 * `anyOf` over `items` keeps arrays homogeneous (no mixing texts and tokens); a plain string
 * passes every branch because `items` only applies to arrays. `description` is what the error
 * message says the value must be.
 */
export function textOrTokensSchema(nonEmpty: boolean): SchemaObject {
  const min = nonEmpty ? { minLength: 1, minItems: 1 } : {};
  return {
    type: ['string', 'array'],
    ...min,
    description: 'a string, an array of strings, an array of integers, or an array of integer arrays',
    anyOf: [
      { items: { type: 'string', ...(nonEmpty ? { minLength: 1 } : {}) } },
      { items: { type: 'integer' } },
      { items: { type: 'array', ...(nonEmpty ? { minItems: 1 } : {}), items: { type: 'integer' } } },
    ],
  };
}

export const completionsSchema: SchemaObject = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    ...samplingProperties,
    // The official API takes `prompt: null` (the model then starts from nothing).
    prompt: { ...textOrTokensSchema(false), type: ['string', 'array', 'null'] },
    logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 5 },
    best_of: { type: ['integer', 'null'], minimum: 0, maximum: 20 },
    echo: { type: ['boolean', 'null'] },
    suffix: { type: ['string', 'null'] },
  },
};

/** Cross-field rules of a completions body; runs only after the schema passed. */
export function checkCompletionsRules(body: Record<string, unknown>): GatewayError | null {
  const bestOf = body.best_of;
  if (typeof bestOf === 'number') {
    // best_of generates candidates server-side and returns the best; there is nothing to stream
    // until all are done, so the spec forbids combining it with stream.
    if (body.stream === true) {
      return ValidationErrors.invalidParameterCombination('best_of cannot be used when stream is true.', {
        param: 'best_of',
      });
    }
    if (typeof body.n === 'number' && bestOf <= body.n) {
      return ValidationErrors.invalidParameterCombination('best_of must be greater than n.', { param: 'best_of' });
    }
  }
  return checkStreamOptions(body);
}
