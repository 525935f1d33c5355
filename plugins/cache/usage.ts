/**
 * The token usage an entry remembers, so a hit can say what it saved. Taken from `ctx.usage`
 * when the core metered the answer, else from the answer itself: a JSON body's `usage`, or the
 * stream's last event that carries one (OpenAI's final chunk, the responses API's
 * `response.completed`). Parsed once, when the entry is stored, never on a hit.
 */
import type { Usage } from '../../core/index.js';
import type { CacheEntry } from './entry-store.js';

type EntryUsage = CacheEntry['usage'];
type Json = Record<string, unknown>;

const NONE: EntryUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** OpenAI's `{prompt_tokens, completion_tokens}` or the responses API's `{input_tokens, output_tokens}`. */
export function readUsage(raw: unknown): EntryUsage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as Json;
  const prompt = num(u.prompt_tokens ?? u.input_tokens);
  const completion = num(u.completion_tokens ?? u.output_tokens);
  const total = num(u.total_tokens) || prompt + completion;
  return total === 0 && prompt === 0 && completion === 0 ? undefined : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

function fromJson(text: string): EntryUsage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const o = parsed as Json | null;
  return readUsage(o?.usage) ?? readUsage((o?.response as Json | undefined)?.usage);
}

/** True for an SSE event's data that may carry usage (checked on every event, so a substring test). */
export const mayCarryUsage = (data: string): boolean => data.includes('"usage":{') || data.includes('"usage": {');

/**
 * The usage of an answer about to be stored: the metered one, else read from `json` (the JSON
 * body, or the data of the stream's last event that {@link mayCarryUsage}).
 */
export function entryUsage(metered: Usage | undefined, json: string | Buffer | undefined): EntryUsage {
  if (metered !== undefined) {
    return { prompt_tokens: metered.prompt_tokens, completion_tokens: metered.completion_tokens, total_tokens: metered.total_tokens };
  }
  if (json === undefined) return NONE;
  return fromJson(typeof json === 'string' ? json : json.toString('utf8')) ?? NONE;
}
