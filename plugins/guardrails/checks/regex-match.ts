/**
 * `default.regexMatch`: the text must match an operator's pattern (or, with `not`, must not).
 *
 * Patterns run on RE2 (`compileSafeRegex`), never on V8's backtracking engine: a pattern that
 * needs backtracking is a 400 when the guardrail is saved or sent. With `not`, the matches are
 * the spans that fail the text, so the check can redact and scan streams; `max_match` bounds a
 * span (and so what a stream holds back): a match longer than that may come back in pieces.
 */
import { compileSafeRegex, defineCheck, isGatewayError, type Finding, type GatewayError } from '../../../core/index.js';
import { spanVerdict } from './spans.js';

export interface RegexMatchParams {
  rule: string;
  flags?: string;
  not?: boolean;
  max_match?: number;
}

const DEFAULT_MAX_MATCH = 256;

function compiled(p: RegexMatchParams) {
  return compileSafeRegex(p.rule, p.flags === undefined ? {} : { flags: p.flags });
}

function matchSpans(text: string, p: RegexMatchParams): Finding[] {
  return compiled(p)
    .matches(text, p.max_match ?? DEFAULT_MAX_MATCH)
    .map(([start, end]) => ({ start, end, label: 'MATCH' }));
}

export const regexMatch = defineCheck<RegexMatchParams>({
  id: 'default.regexMatch',
  description: 'Passes when the text matches the pattern (RE2 syntax); with `not`, when it does not, and then each match is a span that can be redacted.',
  parameters: {
    type: 'object',
    properties: {
      rule: { type: 'string', minLength: 1 },
      flags: { type: 'string', pattern: '^[ims]{0,3}$' },
      not: { type: 'boolean' },
      max_match: { type: 'integer', minimum: 1, maximum: 4096 },
    },
    required: ['rule'],
    additionalProperties: false,
  },
  find: (text, p) => (p.not === true ? matchSpans(text, p) : null),
  maxMatch: (p) => p.max_match ?? DEFAULT_MAX_MATCH,
  run(ctx, p) {
    if (p.not === true) return spanVerdict(matchSpans(ctx.text, p), 'matches of the rule');
    const matched = compiled(p).test(ctx.text);
    return {
      verdict: matched,
      explanation: matched ? 'The text matches the rule.' : 'The text does not match the rule.',
      data: { matched },
    };
  },
  validateParams(p, param): GatewayError | null {
    try {
      compileSafeRegex(p.rule, { param: `${param}.rule`, ...(p.flags === undefined ? {} : { flags: p.flags }) });
      return null;
    } catch (err) {
      if (isGatewayError(err)) return err;
      throw err;
    }
  },
});
