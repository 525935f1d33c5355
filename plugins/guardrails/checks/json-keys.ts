/**
 * `default.jsonKeys`: the answer is a JSON object (whole, or in a fenced block) whose top-level
 * keys include all (default), any or none of the listed keys.
 */
import { defineCheck } from '../../../core/index.js';
import { parseJsonAnswer } from './json-answer.js';

export interface JsonKeysParams {
  keys: string[];
  operator?: 'any' | 'all' | 'none';
}

export const jsonKeys = defineCheck<JsonKeysParams>({
  id: 'default.jsonKeys',
  description: 'Passes when the answer is a JSON object whose top-level keys include all (default), any or none of the listed keys.',
  parameters: {
    type: 'object',
    properties: {
      keys: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', maxLength: 1024 } },
      operator: { type: 'string', enum: ['any', 'all', 'none'] },
    },
    required: ['keys'],
    additionalProperties: false,
  },
  phases: ['output'],
  run(ctx, p) {
    const operator = p.operator ?? 'all';
    const answer = parseJsonAnswer(ctx.text);
    if (!answer.ok) return { verdict: false, explanation: answer.reason, data: { json: false } };
    const value = answer.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { verdict: false, explanation: 'The answer is JSON but not an object.', data: { json: true, object: false } };
    }
    const present = (key: string): boolean => Object.prototype.hasOwnProperty.call(value, key);
    const found = p.keys.filter(present);
    const missing = p.keys.filter((k) => !present(k));
    const verdict = operator === 'all' ? missing.length === 0 : operator === 'any' ? found.length > 0 : found.length === 0;
    return {
      verdict,
      explanation: `${found.length} of the ${p.keys.length} listed keys are in the answer (operator "${operator}").`,
      data: { operator, found, missing },
    };
  },
});
