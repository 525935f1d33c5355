/**
 * `default.wordCount`, `default.sentenceCount`, `default.characterCount`: the text's size is
 * within `min`..`max` (each optional, inclusive).
 *
 * Words and sentences follow Unicode text segmentation (UAX #29, through `Intl.Segmenter`), so
 * "don't", "e-mail" and text without spaces (Chinese, Thai) count as a reader would, not as a
 * split on spaces would. Characters are Unicode code points: an emoji is one, an accented letter
 * written as letter + combining mark is two. The reference gateway's names (`minWords`,
 * `maxSentences`, `minCharacters`, …) are accepted as aliases.
 */
import { defineCheck, ValidationErrors, type CheckDefinition } from '../../../core/index.js';

export type CountParams = Record<string, number | undefined> & { min?: number; max?: number };

// Made on first use: creating a segmenter loads ICU's break rules (tens of ms at every start otherwise).
let words: Intl.Segmenter | undefined;
let sentences: Intl.Segmenter | undefined;
const HAS_CONTENT = /[\p{L}\p{N}]/u;

export function countWords(text: string): number {
  let n = 0;
  for (const s of (words ??= new Intl.Segmenter(undefined, { granularity: 'word' })).segment(text)) if (s.isWordLike === true) n++;
  return n;
}

/** Sentences with at least one letter or digit (a trailing run of spaces or "..." is none). */
export function countSentences(text: string): number {
  let n = 0;
  for (const s of (sentences ??= new Intl.Segmenter(undefined, { granularity: 'sentence' })).segment(text)) if (HAS_CONTENT.test(s.segment)) n++;
  return n;
}

/** Code points. */
export function countCharacters(text: string): number {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}

interface CountSpec {
  id: string;
  /** Plural noun, for messages: "words". */
  unit: string;
  /** The reference gateway's parameter names: [min alias, max alias]. */
  aliases: [string, string];
  count(text: string): number;
}

function countCheck(spec: CountSpec): CheckDefinition<CountParams> {
  const [minAlias, maxAlias] = spec.aliases;
  const bounds = (p: CountParams): { min: number | undefined; max: number | undefined } => ({
    min: p.min ?? p[minAlias],
    max: p.max ?? p[maxAlias],
  });
  return defineCheck<CountParams>({
    id: spec.id,
    description: `Passes when the number of ${spec.unit} is within min..max (inclusive; either may be left out).`,
    parameters: {
      type: 'object',
      properties: {
        min: { type: 'integer', minimum: 0 },
        max: { type: 'integer', minimum: 0 },
        [minAlias]: { type: 'number', minimum: 0 },
        [maxAlias]: { type: 'number', minimum: 0 },
      },
      additionalProperties: false,
    },
    run(ctx, p) {
      const { min, max } = bounds(p);
      const count = spec.count(ctx.text);
      const verdict = (min === undefined || count >= min) && (max === undefined || count <= max);
      const range = `${min ?? 0}..${max ?? '∞'}`;
      return {
        verdict,
        explanation: `The text has ${count} ${spec.unit}; ${verdict ? 'within' : 'outside'} ${range}.`,
        data: { count, ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) },
      };
    },
    validateParams(p, param) {
      for (const [name, alias] of [['min', minAlias], ['max', maxAlias]] as const) {
        if (p[name] !== undefined && p[alias] !== undefined) {
          return ValidationErrors.invalidParameterCombination(`${param}: give ${name} or ${alias}, not both.`, { param: `${param}.${alias}` });
        }
      }
      const { min, max } = bounds(p);
      if (min !== undefined && max !== undefined && min > max) {
        return ValidationErrors.invalidParameterCombination(`${param}.max must be at least min.`, { param: `${param}.max` });
      }
      return null;
    },
  });
}

export const wordCount = countCheck({ id: 'default.wordCount', unit: 'words', aliases: ['minWords', 'maxWords'], count: countWords });
export const sentenceCount = countCheck({ id: 'default.sentenceCount', unit: 'sentences', aliases: ['minSentences', 'maxSentences'], count: countSentences });
export const characterCount = countCheck({ id: 'default.characterCount', unit: 'characters', aliases: ['minCharacters', 'maxCharacters'], count: countCharacters });
