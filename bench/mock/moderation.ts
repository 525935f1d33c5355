/**
 * OpenAI moderations (`POST /v1/moderations`) with keyword rules instead of a classifier:
 * "kill" or "attack" flags `violence`, "hate" flags `hate`. Everything else is clean, with the
 * small non-zero scores the real endpoint reports for harmless text.
 */

import { mockId } from './ids.js';
import { openaiDialect, openaiMissing } from './openai-errors.js';
import { ok, type JsonObject, type MockReply, type MockRequest, type Route } from './route.js';
import { contentText, isRecord } from './text.js';

const DEFAULT_MODEL = 'text-moderation-007';
const FLAGGED_SCORE = 0.9;
const CLEAN_SCORE = 0.0001;

const CATEGORIES = [
  'hate',
  'hate/threatening',
  'harassment',
  'harassment/threatening',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

type Category = (typeof CATEGORIES)[number];

/** Substrings (of lower-cased input) that flag a category. */
const RULES: ReadonlyArray<{ category: Category; words: readonly string[] }> = [
  { category: 'violence', words: ['kill', 'attack'] },
  { category: 'hate', words: ['hate'] },
];

export const moderationsRoute: Route = { dialect: openaiDialect, json: true, handle: moderations };

function moderations(request: MockRequest): MockReply {
  const body = request.json;
  if (body.input === undefined || body.input === null) return openaiMissing('input');
  return ok({
    id: mockId('modr-'),
    model: typeof body.model === 'string' ? body.model : DEFAULT_MODEL,
    results: inputTexts(body.input).map(moderate),
  });
}

/**
 * A string gives one result and strings one each; a multimodal list (`[{type:"text",…},
 * {type:"image_url",…}]`) is one input, as in the real API.
 */
function inputTexts(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [''];
  if (input.some(isRecord)) return [contentText(input)];
  return input.map((item) => (typeof item === 'string' ? item : ''));
}

function moderate(text: string): JsonObject {
  const lower = text.toLowerCase();
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  for (const category of CATEGORIES) {
    categories[category] = false;
    scores[category] = CLEAN_SCORE;
  }
  let flagged = false;
  for (const rule of RULES) {
    if (rule.words.some((word) => lower.includes(word))) {
      categories[rule.category] = true;
      scores[rule.category] = FLAGGED_SCORE;
      flagged = true;
    }
  }
  return { flagged, categories, category_scores: scores };
}
