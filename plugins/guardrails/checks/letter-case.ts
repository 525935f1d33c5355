/**
 * `default.alllowercase` and `default.alluppercase`: every cased letter of the text is lower
 * (upper) case, in any script. Characters without case (digits, punctuation, CJK) do not count,
 * so a text with no cased letter passes. Data says how many letters are the other case.
 */
import { defineCheck, type CheckDefinition } from '../../../core/index.js';

type NoParams = Record<string, never>;

/** Letters in `text` that are not `want` case (a letter is cased when its two cases differ). */
export function wrongCase(text: string, want: 'lower' | 'upper'): number {
  let wrong = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      // ASCII, the common case, without allocating.
      if (want === 'lower' ? code >= 0x41 && code <= 0x5a : code >= 0x61 && code <= 0x7a) wrong++;
      continue;
    }
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    const ch = String.fromCodePoint(cp);
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    if (lower === upper) continue;
    if (want === 'lower' ? ch !== lower : ch !== upper) wrong++;
  }
  return wrong;
}

function caseCheck(id: string, want: 'lower' | 'upper'): CheckDefinition<NoParams> {
  return defineCheck<NoParams>({
    id,
    description: `Passes when every cased letter in the text is ${want} case.`,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    run(ctx) {
      const wrong = wrongCase(ctx.text, want);
      return {
        verdict: wrong === 0,
        explanation: wrong === 0 ? `Every cased letter is ${want} case.` : `${wrong} letters are not ${want} case.`,
        data: { [want === 'lower' ? 'uppercase_letters' : 'lowercase_letters']: wrong },
      };
    },
  });
}

export const allLowercase = caseCheck('default.alllowercase', 'lower');
export const allUppercase = caseCheck('default.alluppercase', 'upper');
