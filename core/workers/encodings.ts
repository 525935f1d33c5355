/**
 * Which BPE encoding a model uses, and the counting code itself. Shared by the main thread
 * (small inputs) and the pool's workers (large ones), so both count exactly the same way.
 *
 * Each encoding is its own module of gpt-tokenizer, imported on first use: its ranks take
 * ~130–200 ms and ~70 MB to load, so a process (or worker) that only sees o200k models never
 * loads cl100k.
 */

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** A unit of counting work: the texts to encode one by one, plus tokens known without encoding. */
export interface CountJob {
  encoding: EncodingName;
  texts: string[];
  /** Per-message overhead, token-array prompts: tokens that need no encoding. */
  fixed: number;
}

// Longest prefixes first: `gpt-4o`, `gpt-4.1` and `gpt-4.5` must win over `gpt-4`.
const O200K = /^(?:gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|o[134](?:$|-))/;
const CL100K = /^(?:gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/;

/**
 * The encoding of a model, by family. Unknown models (Anthropic, Gemini, Llama, Mistral, …) have
 * tokenizers of their own that do not ship in JS; o200k_base is used for them as an estimate
 * (typically within ±20 % for English text), which is good enough for reservations and limits.
 *
 * @example
 *   encodingForModel('gpt-4o-mini'); // 'o200k_base'
 *   encodingForModel('gpt-4-turbo'); // 'cl100k_base'
 */
export function encodingForModel(model: string): EncodingName {
  // `openai/gpt-4o` (routed names) and `ft:gpt-4o-mini:org::id` (fine-tunes) share the base's encoding.
  let name = model.toLowerCase();
  const slash = name.lastIndexOf('/');
  if (slash >= 0) name = name.slice(slash + 1);
  if (name.startsWith('ft:')) name = name.slice(3);
  if (O200K.test(name)) return 'o200k_base';
  if (CL100K.test(name)) return 'cl100k_base';
  return 'o200k_base';
}

type CountFn = (text: string) => number;

// User text is data: `<|endoftext|>` typed by a user is 7 plain tokens, never a special token and
// never an error (gpt-tokenizer throws on special tokens by default).
const PLAIN_TEXT = Object.freeze({ allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() });

const LOADERS: Record<EncodingName, () => Promise<CountFn>> = {
  async o200k_base() {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    return (text) => countTokens(text, PLAIN_TEXT);
  },
  async cl100k_base() {
    const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
    return (text) => countTokens(text, PLAIN_TEXT);
  },
};

// Per thread: the main thread and each worker keep their own.
const loaded = new Map<EncodingName, Promise<CountFn>>();

/** Loads an encoding's ranks now (a worker preloads the default one while the pool starts). */
export function encoding(name: EncodingName): Promise<CountFn> {
  let fn = loaded.get(name);
  if (fn === undefined) {
    fn = LOADERS[name]();
    loaded.set(name, fn);
  }
  return fn;
}

/** Counts a job: the sum of each text's tokens plus its fixed tokens. */
export async function countJob(job: CountJob): Promise<number> {
  let total = job.fixed;
  if (job.texts.length === 0) return total;
  const count = await encoding(job.encoding);
  for (const text of job.texts) total += count(text);
  return total;
}
