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
