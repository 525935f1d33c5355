/**
 * `default.requiredMetadataKeys`: the request's metadata (`x-gateway-metadata` and the key's
 * defaults) has all (default) or any of the listed keys; `none` (the reference's third operator)
 * is accepted too. The reference's `metadataKeys` is an alias of `keys`.
 */
import { defineCheck, ValidationErrors } from '../../../core/index.js';

export interface MetadataKeysParams {
  keys?: string[];
  metadataKeys?: string[];
  operator?: 'all' | 'any' | 'none';
}

const keyList = { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 128 } };

export const requiredMetadataKeys = defineCheck<MetadataKeysParams>({
  id: 'default.requiredMetadataKeys',
  description: 'Passes when the request metadata has all (default), any or none of the listed keys.',
  parameters: {
    type: 'object',
    properties: {
      keys: keyList,
      metadataKeys: keyList,
      operator: { type: 'string', enum: ['all', 'any', 'none'] },
    },
    additionalProperties: false,
  },
  phases: ['input'],
  run(ctx, p) {
    const keys = p.keys ?? p.metadataKeys ?? [];
    const operator = p.operator ?? 'all';
    const present = (k: string): boolean => Object.prototype.hasOwnProperty.call(ctx.metadata, k);
    const found = keys.filter(present);
    const missing = keys.filter((k) => !present(k));
    const verdict = operator === 'all' ? missing.length === 0 : operator === 'any' ? found.length > 0 : found.length === 0;
    return {
      verdict,
      explanation: `${found.length} of the ${keys.length} listed metadata keys are present (operator "${operator}").`,
      data: { operator, found, missing },
    };
  },
  validateParams(p, param) {
    if (p.keys !== undefined && p.metadataKeys !== undefined) {
      return ValidationErrors.invalidParameterCombination(`${param}: give keys or metadataKeys, not both.`, { param: `${param}.metadataKeys` });
    }
    if (p.keys === undefined && p.metadataKeys === undefined) {
      return ValidationErrors.missingRequiredParameter(`${param}.keys is required.`, { param: `${param}.keys` });
    }
    return null;
  },
});
