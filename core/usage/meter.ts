/**
 * Usage metering of one answer, plain or streamed, on every model route.
 *
 *   request  ── stream with no `stream_options.include_usage`? ask the upstream for it anyway
 *   stream   ── each event: take `usage` when it appears (the final chunk; `response.completed`);
 *               when the client did not ask for usage, drop the usage-only chunk and the
 *               `"usage": null` fields, so it sees exactly what it asked for; OpenAI's
 *               content chunks after the first (and Anthropic's text deltas) are kept as
 *               text, parsed only if their answer text is wanted (no usage came)
 *   body     ── the JSON answer's `usage`
 *   end      ── no usage reported? count the prompt and the collected answer text
 *
 * Anthropic's Messages answers (the `/v1/messages` route) are read the same way, in their shape.
 *
 * This is what makes a streamed call and a plain call of the same answer report the same usage:
 * peers meter streams at zero because they never ask for or read the usage chunk.
 */
import type { ModelRoute } from '../routes.js';
import type { SseEvent } from '../sse/sse-parser.js';
import type { Usage } from './types.js';
import { isBlank } from '../upstream/answer-check.js';
import { readUsageJson } from './usage-json.js';

/** Routes whose streams take `stream_options.include_usage` (OpenAI's chat and completions). */
const INJECTABLE: ReadonlySet<ModelRoute> = new Set(['chat.completions', 'completions']);
/** Answer text kept for estimation is bounded: beyond it the estimate scales the count. */
const MAX_TEXT = 1 << 20;

type Json = Record<string, unknown>;

/**
 * How a chunk that parsed as an object ends when its last member is `"usage": null`, written
 * compactly. Such a text's final `}` closes the root, so the member before it is the root's own (a
 * nested object would need its own `}` in between, and a string cannot hold an unescaped `"`).
 */
const NULL_USAGE_END = ',"usage":null}';

/** True when the upstream must be asked for the usage chunk the client did not request. */
export function needsUsageInjection(route: ModelRoute, body: Json | undefined): boolean {
  if (body === undefined || body.stream !== true || !INJECTABLE.has(route)) return false;
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  return options?.include_usage !== true;
}

/** The body with usage requested (a copy; the client's body is not changed). */
export function withUsageRequested(body: Json): Json {
  return { ...body, stream_options: { ...(body.stream_options as Json | undefined), include_usage: true } };
}

const USAGE_MEMBER = Buffer.from(',"stream_options":{"include_usage":true}');

/**
 * The client's bytes with usage requested, when `stream_options` is not among its members: the
 * member is added before the closing brace, so a long prompt is copied rather than serialised
 * again (and reaches the upstream as the client wrote it). `raw` must be the bytes `body` was
 * parsed from; undefined when the splice does not apply (an empty object, or one with `stream_options`:
 * the caller serialises {@link withUsageRequested} instead).
 */
export function withUsageRequestedBytes(raw: Buffer, body: Json): Buffer | undefined {
  if (body.stream_options !== undefined || !hasMember(body)) return undefined;
  let close = raw.length - 1;
  while (close > 0 && isBlank(raw[close]!)) close--;
  if (raw[close] !== 0x7d /* } */) return undefined;
  const out = Buffer.allocUnsafe(close + USAGE_MEMBER.length + 1);
  raw.copy(out, 0, 0, close);
  USAGE_MEMBER.copy(out, close);
  out[out.length - 1] = 0x7d;
  return out;
}

function hasMember(body: Json): boolean {
  for (const _ in body) return true;
  return false;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** OpenAI chat/completions/embeddings `usage`, or the responses API's `usage`, normalised. */
export function readUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as Json;
  if ('cache_read_input_tokens' in u || 'cache_creation_input_tokens' in u) {
    // Anthropic's Messages usage: `input_tokens` excludes the cached prompt, read or written.
    const read = num(u.cache_read_input_tokens);
    const prompt = num(u.input_tokens) + read + num(u.cache_creation_input_tokens);
    const completion = num(u.output_tokens);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cached_tokens: read, reasoning_tokens: 0, source: 'upstream' };
  }
  if ('input_tokens' in u || 'output_tokens' in u) {
    const prompt = num(u.input_tokens);
    const completion = num(u.output_tokens);
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: num(u.total_tokens) || prompt + completion,
      cached_tokens: num((u.input_tokens_details as Json | undefined)?.cached_tokens),
      reasoning_tokens: num((u.output_tokens_details as Json | undefined)?.reasoning_tokens),
      source: 'upstream',
    };
  }
  if (!('prompt_tokens' in u) && !('total_tokens' in u)) return undefined;
  const prompt = num(u.prompt_tokens);
  const completion = num(u.completion_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(u.total_tokens) || prompt + completion,
    cached_tokens: num((u.prompt_tokens_details as Json | undefined)?.cached_tokens),
    reasoning_tokens: num((u.completion_tokens_details as Json | undefined)?.reasoning_tokens),
    source: 'upstream',
  };
}

export class UsageMeter {
  usage: Usage | undefined;
  #text = '';
  /**
   * Chunks kept unparsed ({@link deferrable}), oldest first, and their length in characters. Their
   * text is read only if someone asks for {@link text} (no usage came: the estimate), or before
   * text from a later chunk is added, so the answer text keeps the stream's order.
   */
  #deferred: string[] | undefined;
  #deferredChars = 0;
  /** The model the upstream says answered (for pricing). */
  model: string | undefined;
  readonly #strip: boolean;

  /** `strip`: the usage chunk was asked for by the gateway, not the client. */
  constructor(strip: boolean) {
    this.#strip = strip;
  }

  /** Observes one SSE event; returns the event to forward (possibly edited) or null to drop it. */
  event(ev: SseEvent): SseEvent | null {
    const data = ev.data;
    if (data.length === 0 || data === '[DONE]' || data.charCodeAt(0) !== 123 /* '{' */) return ev;
    if (this.model !== undefined) {
      // A content chunk like the ones before it: nothing in it can change usage, model or what
      // the client is sent (beyond the cut of OpenAI's null usage), so its parse waits until its
      // text is wanted.
      if (deferrable(data)) {
        this.#defer(data);
        return this.#strip ? { ...ev, data: `${data.slice(0, -NULL_USAGE_END.length)}}` } : ev;
      }
      if (anthropicTextDelta(data)) {
        this.#defer(data);
        return ev;
      }
    }
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      return ev;
    }
    if (typeof chunk.model === 'string') this.model ??= chunk.model;
    if (typeof chunk.type === 'string') {
      // Anthropic's Messages stream: usage in message_start, cumulative counts in message_delta.
      switch (chunk.type) {
        case 'message_start': {
          const message = chunk.message as Json | undefined;
          if (typeof message?.model === 'string') this.model ??= message.model;
          this.#anthropic(message?.usage);
          return ev;
        }
        case 'message_delta':
          this.#anthropic(chunk.usage);
          return ev;
        case 'content_block_delta':
          this.#addDeltaText(chunk);
          return ev;
      }
      // The responses API: usage arrives in `response.completed`; text in output_text deltas.
      if (chunk.type === 'response.output_text.delta' && typeof chunk.delta === 'string') this.#addText(chunk.delta);
      const response = chunk.response as Json | undefined;
      if (response !== undefined) {
        const u = readUsage(response.usage);
        if (u) this.usage = u;
        if (typeof response.model === 'string') this.model = response.model;
      }
      return ev;
    }
    const usage = readUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choices = chunk.choices;
    this.#addChoicesText(choices);
    if (!this.#strip || !('usage' in chunk)) return ev;
    // The client did not ask for usage: drop the usage-only chunk, and the null field elsewhere.
    if (Array.isArray(choices) && choices.length === 0) return null;
    // Every chunk before the usage one ends in `,"usage":null}` (OpenAI's compact JSON): when that
    // is the text's only `"usage":`, cut the member from the text, which keeps the upstream's bytes
    // and skips serialising each event again.
    if (endsInOnlyNullUsage(data)) return { ...ev, data: `${data.slice(0, -NULL_USAGE_END.length)}}` };
    delete chunk.usage;
    return { ...ev, data: JSON.stringify(chunk) };
  }

  /**
   * Observes a whole JSON answer. False when it is not a JSON object (an HTML page, a cut body):
   * the caller decides what an unreadable answer means; the meter then has nothing to count.
   * An answer that ends with its usage (OpenAI's, Anthropic's and the Responses API's do) is read
   * from its end alone (see {@link trailingUsage}); any other is parsed whole.
   */
  body(bytes: Buffer): boolean {
    const tail = readUsage(trailingUsage(bytes));
    if (tail !== undefined) {
      this.usage = tail;
      return true;
    }
    const parsed = jsonObject(bytes.toString('utf8'));
    if (parsed === undefined) return false;
    if (typeof parsed.model === 'string') this.model = parsed.model;
    const u = readUsage(parsed.usage);
    if (u) {
      this.usage = u;
      return true;
    }
    // No usage (some OpenAI-compatible servers): keep the text for an estimate.
    if (Array.isArray(parsed.content)) {
      for (const block of parsed.content as Json[]) if (typeof block?.text === 'string') this.#addText(block.text);
    }
    for (const c of (Array.isArray(parsed.choices) ? parsed.choices : []) as Json[]) {
      const message = c.message as Json | undefined;
      if (typeof message?.content === 'string') this.#addText(message.content);
      else if (typeof c.text === 'string') this.#addText(c.text);
    }
    return true;
  }

  /** Anthropic's stream usage, merged field by field as events add to it. */
  #raw: Json | undefined;

  #anthropic(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null) return;
    const merged: Json = { ...this.#raw };
    for (const [k, v] of Object.entries(raw as Json)) if (typeof v === 'number') merged[k] = v;
    // Even a stream that reports no cache fields is Anthropic's: its input excludes nothing.
    merged.cache_read_input_tokens ??= 0;
    this.#raw = merged;
    this.usage = readUsage(merged);
  }

  /** The answer text seen, for estimation when no usage is reported. */
  get text(): string {
    if (this.#deferred !== undefined) this.#readDeferred();
    return this.#text;
  }

  #addText(s: string): void {
    if (this.#deferred !== undefined) this.#readDeferred();
    if (this.#text.length < MAX_TEXT) this.#text += s;
  }

  #defer(data: string): void {
    (this.#deferred ??= []).push(data);
    this.#deferredChars += data.length;
    if (this.#deferredChars > MAX_DEFERRED) this.#readDeferred();
  }

  /** Parses the kept chunks in order for their text, as {@link event} would have at once. */
  #readDeferred(): void {
    const chunks = this.#deferred!;
    this.#deferred = undefined;
    this.#deferredChars = 0;
    for (const data of chunks) {
      let chunk: Json;
      try {
        chunk = JSON.parse(data) as Json;
      } catch {
        continue;
      }
      // Anthropic's content_block_delta ({@link anthropicTextDelta}) or OpenAI's chunk.
      if (typeof chunk.type === 'string') this.#addDeltaText(chunk);
      else this.#addChoicesText(chunk.choices);
    }
  }

  /** The text of an Anthropic `content_block_delta`. */
  #addDeltaText(chunk: Json): void {
    const delta = chunk.delta as Json | undefined;
    if (typeof delta?.text === 'string') this.#addText(delta.text);
  }

  /** The text of an OpenAI chunk's choices (chat deltas, or completions' `text`). */
  #addChoicesText(choices: unknown): void {
    if (!Array.isArray(choices)) return;
    for (const c of choices as Json[]) {
      const delta = c.delta as Json | undefined;
      if (typeof delta?.content === 'string') this.#addText(delta.content);
      else if (typeof c.text === 'string') this.#addText(c.text);
    }
  }
}

/** How many characters of unparsed chunks a stream keeps before reading them (memory bound). */
const MAX_DEFERRED = 256 * 1024;

/** The tails of `"choices"` and `"type"` that {@link deferrable} and {@link anthropicTextDelta} look for. */
const CHOICES_TAIL = 'hoices"';
const TYPE_TAIL = 'ype"';
/** The tail of `"usage":` looked for, and where the last member's begins from the end of the text. */
const USAGE_TAIL = 'ge":';
const USAGE_TAIL_FROM_END = NULL_USAGE_END.length - NULL_USAGE_END.indexOf(USAGE_TAIL);

/**
 * Whether a chunk's parse can wait: OpenAI's content chunk, which ends in a null usage and has
 * one non-empty `choices`. Read from its text, for a chunk after the stream's first (the model is
 * known), everything {@link UsageMeter.event} would do with it is then: no usage (its only
 * `"usage":` is the root's null, see {@link endsInOnlyNullUsage}); no `type` (the Anthropic and
 * Responses shapes: `ype"` appears nowhere, not even in a value, so no member is named `type`);
 * and not the usage-only chunk the client is spared (its root `choices` is empty: a text whose
 * only `"choices"` opens a non-empty array cannot have an empty root one). What remains is the
 * answer text, and the strip of the null usage, which the text cut gives as the parse did.
 * Anything else is parsed at once. One difference: a chunk ending so that is not JSON at all is forwarded without its null
 * usage, where parsed it would have been forwarded as it came. Names written with escapes
 * (`"\u0074ype"`) are not looked for, here or in {@link anthropicTextDelta}: no provider writes
 * them, and the upstream is the authority on the usage it reports anyway.
 */
function deferrable(data: string): boolean {
  if (!endsInOnlyNullUsage(data)) return false;
  // Each name is looked for by a tail that starts with a letter rare in these chunks: a search
  // skips to its first character, and `"` (every key's) took it ten times as long. A tail found
  // elsewhere (`"image":`, `"prototype"`) only sends the chunk to be parsed; a lone `hoices"` that
  // is not `"choices"` means the root has no `choices`, so nothing is dropped or read either way.
  const tail = data.indexOf(CHOICES_TAIL);
  return (
    tail !== -1 &&
    data.startsWith(':[', tail + CHOICES_TAIL.length) &&
    data.charCodeAt(tail + CHOICES_TAIL.length + 2) !== 93 /* ] */ &&
    data.indexOf(CHOICES_TAIL, tail + 1) === -1 &&
    data.indexOf(TYPE_TAIL) === -1
  );
}

const DELTA_START = '{"type":"content_block_delta",';
const DELTA_TYPE = '"delta":{"type":';
const DELTA_TYPE_TAIL = DELTA_TYPE.indexOf(TYPE_TAIL);
/**
 * Whether a chunk's parse can wait: Anthropic's `content_block_delta`, its type the first member.
 * The meter reads nothing from it but the delta's text, provided no later member of the root is
 * also named `type` (the last of equal names wins in `JSON.parse`): the text names `type` (by the
 * tail `ype"`) only in its first member and, at most, as the first member of a `delta` object,
 * which is not the root. Anything else is parsed at once. A text that is not JSON is forwarded
 * as it came either way.
 */
function anthropicTextDelta(data: string): boolean {
  if (!data.startsWith(DELTA_START)) return false;
  const second = data.indexOf(TYPE_TAIL, DELTA_START.length);
  if (second === -1) return true;
  return data.startsWith(DELTA_TYPE, second - DELTA_TYPE_TAIL) && data.indexOf(TYPE_TAIL, second + 1) === -1;
}

/**
 * Whether the text ends in `,"usage":null}` and names `usage` nowhere else (by the tail
 * `ge":`, so a `"usage":` anywhere else, or an `"image":`, says no): then that member is the
 * root's, see {@link NULL_USAGE_END}, and cutting it from the text is what deleting it would do.
 */
function endsInOnlyNullUsage(data: string): boolean {
  return data.endsWith(NULL_USAGE_END) && data.indexOf(USAGE_TAIL) === data.length - USAGE_TAIL_FROM_END;
}

/** The body as a JSON object, or undefined when it is not one (`null`, a number, HTML…). */
function jsonObject(text: string): Json | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isObject(value) ? value : undefined;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const USAGE_KEY = '"usage":';
const USAGE_KEY_BYTES = Buffer.from(USAGE_KEY);
/** How far from the end the usage key is looked for first (bytes). */
const TAIL_WINDOW = 2048;

/**
 * The `usage` object of an answer whose last member it is, read alone (about half the cost of
 * parsing the whole answer, measured on a chat completion; the usual shape is read from its bytes
 * by usage-json.ts, any other parsed); undefined otherwise, and the caller
 * parses the whole answer. Only those bytes are decoded: a long answer is not turned into a string.
 * The answer must start with `{` and end with `}` (the same check as answer-check.ts makes of an
 * answer nothing parses). The key found is the root's own:
 * - the value must run from the key to the root's closing brace and parse on its own: a nested
 *   `usage` would leave its object's `}` (or an array's `]`) in between, and that does not parse;
 * - the key must follow `{` or `,`: a key that merely ends in `"usage"` (`"a\"usage"`) does not;
 * - inside a string, `"usage":` cannot occur unescaped (and in UTF-8 no byte of a multi-byte
 *   character is an ASCII one, so the bytes are searched as the text would be).
 */
export function trailingUsage(bytes: Buffer): Json | undefined {
  let first = 0;
  while (first < bytes.length && isBlank(bytes[first]!)) first++;
  let close = bytes.length - 1;
  while (close > first && isBlank(bytes[close]!)) close--;
  if (bytes[first] !== 0x7b || bytes[close] !== 0x7d) return undefined;
  // The usage object is short: the key is looked for in the answer's last bytes, read as Latin-1
  // (one character a byte, so an index in the text is one in the bytes), then further back.
  const from = Math.max(first, close - TAIL_WINDOW);
  const found = bytes.toString('latin1', from, close).lastIndexOf(USAGE_KEY);
  const key = found !== -1 ? from + found : from > first ? bytes.lastIndexOf(USAGE_KEY_BYTES, from - 1) : -1;
  if (key <= first) return undefined;
  let before = key - 1;
  while (before > first && isBlank(bytes[before]!)) before--;
  const c = bytes[before];
  if (c !== 0x2c && c !== 0x7b) return undefined;
  const value = key + USAGE_KEY_BYTES.length;
  return readUsageJson(bytes, value, close) ?? jsonObject(bytes.toString('utf8', value, close));
}
