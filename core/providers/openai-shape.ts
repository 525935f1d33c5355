/**
 * Reading OpenAI-shaped requests and building OpenAI-shaped answers: the helpers every dialect
 * translator needs on the OpenAI side, kept once.
 */
export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringField(value: Json, key: string): string | undefined {
  const field = value[key];
  return typeof field === 'string' ? field : undefined;
}

/** Non-empty text pieces of an OpenAI content value (a string or parts). */
export function texts(content: unknown): string[] {
  if (typeof content === 'string') return content.length > 0 ? [content] : [];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string' && part.text.length > 0) out.push(part.text);
  }
  return out;
}

/** Tool arguments are a JSON string in OpenAI and an object in most dialects; anything unparsable is `{}`. */
export function parseArguments(args: unknown): Json {
  if (typeof args !== 'string' || args.length === 0) return {};
  try {
    const value: unknown = JSON.parse(args);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** Seconds since the epoch, the unit of OpenAI's `created`. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/** One embedding as OpenAI sends it: floats, or with `encoding_format: 'base64'` the float32 little-endian bytes. */
export function embeddingValue(values: readonly number[], format: unknown): number[] | string {
  if (format !== 'base64') return values as number[];
  const bytes = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i]!, i * 4);
  return bytes.toString('base64');
}

/** An OpenAI embeddings answer; `promptTokens` undefined leaves `usage` out (the gateway then estimates it). */
export function embeddingList(vectors: ReadonlyArray<readonly number[]>, model: string, format: unknown, promptTokens?: number): Json {
  const body: Json = {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: embeddingValue(values, format) })),
    model,
  };
  if (promptTokens !== undefined) body.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens };
  return body;
}

/** The answer-length cap of an OpenAI request (`max_completion_tokens` wins over `max_tokens`), if any. */
export function maxTokens(req: Json): number | undefined {
  for (const value of [req.max_completion_tokens, req.max_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}

/** OpenAI `stop` (a string or strings) as a list, empty strings dropped. */
export function stopSequences(stop: unknown): string[] {
  if (typeof stop === 'string') return stop.length > 0 ? [stop] : [];
  if (!Array.isArray(stop)) return [];
  return stop.filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/**
 * Appends a turn to a dialect's alternating conversation, merging it into the previous turn when
 * the role repeats (Anthropic and Bedrock require alternation). With `toolResultFirst`, a merged
 * user turn keeps tool results ahead of the rest, each group in its order (Claude requires it).
 */
export function pushTurn<R extends string, B>(
  turns: Array<{ role: R; content: B[] }>,
  role: R,
  blocks: B[],
  toolResultFirst?: (block: B) => boolean,
): void {
  if (blocks.length === 0) return;
  const last = turns.at(-1);
  if (last === undefined || last.role !== role) {
    turns.push({ role, content: blocks });
    return;
  }
  last.content.push(...blocks);
  if (toolResultFirst !== undefined) last.content.sort((a, b) => Number(!toolResultFirst(a)) - Number(!toolResultFirst(b)));
}

/** What every chunk of one streamed answer repeats. */
export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  /** The client asked for usage: OpenAI then sends `usage: null` on every chunk. */
  includeUsage: boolean;
}

/** One `chat.completion.chunk` event with a delta for choice `index`. */
export function chatChunk(head: ChunkHead, delta: Json, finish: string | null = null, index = 0): { data: string } {
  const body: Json = {
    id: head.id,
    object: 'chat.completion.chunk',
    created: head.created,
    model: head.model,
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
  };
  if (head.includeUsage) body.usage = null;
  return { data: JSON.stringify(body) };
}
