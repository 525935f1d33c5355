/**
 * `gen_ai.response.model`: the model the upstream says answered (`gpt-4o-2024-08-06` for a
 * request naming `gpt-4o`). Read from the head of the answer with one bounded regex instead of
 * parsing it again: OpenAI-style bodies and chunks carry `model` near the start, and the core's
 * usage meter has already parsed the whole thing once.
 */

/** How far into a body or chunk the field is looked for. */
const HEAD = 2048;
const MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;

export function responseModelOf(text: string): string | undefined {
  return MODEL.exec(text.length > HEAD ? text.slice(0, HEAD) : text)?.[1];
}
