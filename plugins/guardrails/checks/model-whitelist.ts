/**
 * `default.modelWhitelist`: the model asked for is on the list (or, with `not`, is not). An entry
 * ending in `*` matches every model that starts with what comes before it (`gpt-4o*`); a `*`
 * anywhere else is refused when the guardrail is saved. A request whose model is unknown fails
 * either way: a guardrail that cannot tell does not let it through.
 */
import { defineCheck, ValidationErrors } from '../../../core/index.js';

export interface ModelWhitelistParams {
  models: string[];
  not?: boolean;
}

export function modelListed(model: string, models: ReadonlyArray<string>): boolean {
  return models.some((entry) => (entry.endsWith('*') ? model.startsWith(entry.slice(0, -1)) : model === entry));
}

export const modelWhitelist = defineCheck<ModelWhitelistParams>({
  id: 'default.modelWhitelist',
  description: 'Passes when the requested model is on the list (a trailing * matches any suffix); with `not`, when it is not. An unknown model fails.',
  parameters: {
    type: 'object',
    properties: {
      models: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 256 } },
      not: { type: 'boolean' },
    },
    required: ['models'],
    additionalProperties: false,
  },
  phases: ['input'],
  run(ctx, p) {
    if (ctx.model === undefined || ctx.model === '') {
      return { verdict: false, explanation: 'The request names no model.', data: { listed: null } };
    }
    const listed = modelListed(ctx.model, p.models);
    const verdict = p.not === true ? !listed : listed;
    return {
      verdict,
      explanation: `The model is ${listed ? '' : 'not '}on the list${p.not === true ? ' of refused models' : ''}.`,
      data: { listed },
    };
  },
  validateParams(p, param) {
    const i = p.models.findIndex((m) => m.indexOf('*') !== -1 && m.indexOf('*') !== m.length - 1);
    if (i === -1) return null;
    return ValidationErrors.invalidValue(`${param}.models[${i}]: a * is only allowed at the end.`, { param: `${param}.models[${i}]` });
  },
});
