/**
 * `default.endsWith`: the text ends with a suffix, after trailing white space is dropped (unless
 * `trim` is false).
 */
import { defineCheck } from '../../../core/index.js';

export interface EndsWithParams {
  suffix: string;
  trim?: boolean;
}

export const endsWith = defineCheck<EndsWithParams>({
  id: 'default.endsWith',
  description: 'Passes when the text ends with the suffix (trailing white space ignored unless trim is false).',
  parameters: {
    type: 'object',
    properties: { suffix: { type: 'string', minLength: 1, maxLength: 4096 }, trim: { type: 'boolean' } },
    required: ['suffix'],
    additionalProperties: false,
  },
  run(ctx, p) {
    const text = p.trim === false ? ctx.text : ctx.text.trimEnd();
    const verdict = text.endsWith(p.suffix);
    return { verdict, explanation: verdict ? 'The text ends with the suffix.' : 'The text does not end with the suffix.' };
  },
});
