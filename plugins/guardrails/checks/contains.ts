/**
 * `default.contains`: the text contains any, all or none of an operator's words or phrases.
 *
 * `none` objects to spans (each occurrence, label WORD), so it can redact and scan streams; `any`
 * and `all` need the whole text (a word may still come), so they have no spans. The words are
 * the operator's own, so `data` may name the ones found and missing.
 */
import { defineCheck, type Finding } from '../../../core/index.js';
import { leftmostLongest, WordSearch } from './word-search.js';

export interface ContainsParams {
  operator?: 'any' | 'all' | 'none';
  words: string[];
  case_sensitive?: boolean;
  word_boundary?: boolean;
}

/** Words named in `data`, at most: a 1,000-word list is the operator's, not news for every log line. */
const MAX_LISTED = 50;

/**
 * One trie per parameter object (saved and inline configs are parsed once and shared), and per
 * word list as text for copies of it (a worker thread gets a clone with every task); built when
 * the guardrail is validated, so a request builds none.
 */
const searches = new WeakMap<ContainsParams, WordSearch>();
const byText = new Map<string, WordSearch>();
const TEXT_CACHE_LIMIT = 64;

function searchFor(p: ContainsParams): WordSearch {
  let search = searches.get(p);
  if (search !== undefined) return search;
  const options = { caseSensitive: p.case_sensitive === true, wordBoundary: p.word_boundary !== false };
  const key = `${Number(options.caseSensitive)}${Number(options.wordBoundary)}${JSON.stringify(p.words)}`;
  search = byText.get(key);
  if (search === undefined) {
    search = new WordSearch(p.words, options);
    if (byText.size >= TEXT_CACHE_LIMIT) byText.delete(byText.keys().next().value!);
    byText.set(key, search);
  }
  searches.set(p, search);
  return search;
}

function spans(text: string, p: ContainsParams): Finding[] {
  return leftmostLongest(searchFor(p), text).map(([start, end]) => ({ start, end, label: 'WORD' }));
}

export const contains = defineCheck<ContainsParams>({
  id: 'default.contains',
  description: 'Passes when the text contains any (default), all or none of the words or phrases; case-insensitive and on word boundaries unless told otherwise. With `none`, each occurrence is a span that can be redacted.',
  parameters: {
    type: 'object',
    properties: {
      operator: { type: 'string', enum: ['any', 'all', 'none'] },
      words: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 256 } },
      case_sensitive: { type: 'boolean' },
      word_boundary: { type: 'boolean' },
    },
    required: ['words'],
    additionalProperties: false,
  },
  find: (text, p) => ((p.operator ?? 'any') === 'none' ? spans(text, p) : null),
  validateParams(p) {
    searchFor(p);
    return null;
  },
  maxMatch: (p) => Math.max(...p.words.map((w) => w.length)),
  run(ctx, p) {
    const operator = p.operator ?? 'any';
    const search = searchFor(p);
    const distinct = new Set(search.canonical).size;
    const seen = new Uint8Array(p.words.length);
    let found = 0;
    search.scan(ctx.text, (_start, _end, word) => {
      if (seen[word] === 0) {
        seen[word] = 1;
        found++;
      }
      return found < distinct; // every word seen: nothing left to learn

    });
    const listed = (pick: (canonical: number) => boolean): string[] => {
      const words = new Set<string>();
      search.canonical.forEach((c, i) => {
        if (pick(c)) words.add(p.words[i]!);
      });
      return [...words];
    };
    const verdict = operator === 'any' ? found > 0 : operator === 'all' ? found === distinct : found === 0;
    const data: Record<string, unknown> = { operator, found: listed((c) => seen[c] === 1).slice(0, MAX_LISTED) };
    if (operator === 'all') data.missing = listed((c) => seen[c] === 0).slice(0, MAX_LISTED);
    if (operator === 'none' && !verdict) data.occurrences = leftmostLongest(search, ctx.text).length;
    let explanation: string;
    if (verdict) explanation = `The text passes the "${operator}" word check.`;
    else if (operator === 'none') explanation = `The text contains ${found} of the listed words.`;
    else if (operator === 'all') explanation = `The text lacks ${distinct - found} of the listed words.`;
    else explanation = 'The text contains none of the listed words.';
    return { verdict, explanation, data };
  },
});
