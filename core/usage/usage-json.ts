/**
 * A usage object read from its JSON bytes without `JSON.parse`, for the shape providers write
 * (see `trailingUsage` in meter.ts, which hands it the bytes after an answer's `"usage":`).
 *
 * In the gateway under load, parsing the bench's 260-byte OpenAI usage took about 8 µs a request
 * (its first parse finds the parser's code and the string table cold; a second parse right after
 * took under 3), against about 1 µs alone. Reading the bytes here takes about 4 µs in place: no
 * string is made for a key, and the objects get their keys in the providers' order.
 *
 * It reads only this shape: an object whose keys are the usage names below, each value a
 * non-negative integer (up to 15 digits), `null`, a string of printable ASCII with no escape, or
 * (in the root object only) an object of the same. Anything else (another key, a fraction, a
 * negative number, an escape, an array, `true`) gives undefined and the caller parses the text:
 * what this accepts, it reads as `JSON.parse` would (a repeated key keeps its last value in the
 * place of its first), and a text `JSON.parse` refuses is never accepted here.
 */
import { isBlank } from '../upstream/answer-check.js';

type Json = Record<string, unknown>;

/** The names of OpenAI's (chat, completions, Responses, embeddings) and Anthropic's usage members. */
const NAMES = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'prompt_tokens_details',
  'completion_tokens_details',
  'cached_tokens',
  'audio_tokens',
  'reasoning_tokens',
  'accepted_prediction_tokens',
  'rejected_prediction_tokens',
  'input_tokens',
  'output_tokens',
  'input_tokens_details',
  'output_tokens_details',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'cache_creation',
  'ephemeral_5m_input_tokens',
  'ephemeral_1h_input_tokens',
  'service_tier',
  'server_tool_use',
  'web_search_requests',
  'web_fetch_requests',
] as const;

/** The names by their length in bytes, each with its bytes to compare. */
const BY_LENGTH: Array<Array<{ name: string; bytes: Buffer }> | undefined> = [];
for (const name of NAMES) (BY_LENGTH[name.length] ??= []).push({ name, bytes: Buffer.from(name) });

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;
const MAX_DIGITS = 15;

/** The usage name the bytes `[start, end)` spell, or undefined. */
function nameAt(bytes: Buffer, start: number, end: number): string | undefined {
  const candidates = BY_LENGTH[end - start];
  if (candidates === undefined) return undefined;
  next: for (const candidate of candidates) {
    const name = candidate.bytes;
    for (let j = 0; j < name.length; j++) if (bytes[start + j] !== name[j]) continue next;
    return candidate.name;
  }
  return undefined;
}

function skipBlank(bytes: Buffer, i: number, end: number): number {
  while (i < end && isBlank(bytes[i]!)) i++;
  return i;
}

/**
 * Where the object read last ended (one past its `}`): set by readObject.
 *
 * The loops stop at `end`, but a single byte is looked at without checking it: a text cut short
 * makes the reader look at the bytes after `end` (the rest of the answer), and whatever it reads
 * there, the root object then ends past `end` and is refused.
 */
let readEnd = 0;

/** The object whose `{` is at `i` (nested: inside the root one), or undefined if it is not of the shape read here. */
function readObject(bytes: Buffer, i: number, end: number, nested: boolean): Json | undefined {
  const object: Json = {};
  i = skipBlank(bytes, i + 1, end);
  if (bytes[i] === CLOSE) {
    readEnd = i + 1;
    return object;
  }
  for (;;) {
    if (bytes[i] !== QUOTE) return undefined;
    const start = i + 1;
    let close = start;
    while (close < end && bytes[close] !== QUOTE) close++;
    // An escape or another name: its bytes spell none of the names.
    const name = nameAt(bytes, start, close);
    if (name === undefined) return undefined;
    i = skipBlank(bytes, close + 1, end);
    if (bytes[i] !== COLON) return undefined;
    i = skipBlank(bytes, i + 1, end);
    let c = bytes[i] ?? -1;
    let value: unknown;
    if (c >= ZERO && c <= NINE) {
      const first = i;
      let n = 0;
      while (i < end && (c = bytes[i]!) >= ZERO && c <= NINE) {
        n = n * 10 + (c - ZERO);
        i++;
      }
      // A leading zero (`01`) or a number too long to be exact; a fraction or an exponent stops at
      // the check for `,` or `}` below.
      if (i - first > MAX_DIGITS || (bytes[first] === ZERO && i - first > 1)) return undefined;
      value = n;
    } else if (c === QUOTE) {
      const first = i + 1;
      i = first;
      while (i < end && (c = bytes[i]!) !== QUOTE) {
        // Control characters (not allowed unescaped), escapes and non-ASCII: JSON.parse decides.
        if (c < 0x20 || c > 0x7e || c === 0x5c) return undefined;
        i++;
      }
      value = bytes.toString('latin1', first, i);
      i++;
    } else if (c === 0x6e && bytes[i + 1] === 0x75 && bytes[i + 2] === 0x6c && bytes[i + 3] === 0x6c) {
      value = null;
      i += 4;
    } else if (c === OPEN && !nested) {
      value = readObject(bytes, i, end, true);
      if (value === undefined) return undefined;
      i = readEnd;
    } else {
      return undefined;
    }
    object[name] = value;
    i = skipBlank(bytes, i, end);
    c = bytes[i] ?? -1;
    if (c === COMMA) {
      i = skipBlank(bytes, i + 1, end);
    } else if (c === CLOSE) {
      readEnd = i + 1;
      return object;
    } else {
      return undefined;
    }
  }
}

/**
 * The usage object whose JSON text is the bytes `[start, end)` (blank space around it allowed),
 * or undefined when it is not of the shape read here (then parse the text).
 */
export function readUsageJson(bytes: Buffer, start: number, end: number): Json | undefined {
  const open = skipBlank(bytes, start, end);
  if (bytes[open] !== OPEN) return undefined;
  const object = readObject(bytes, open, end, false);
  if (object === undefined || skipBlank(bytes, readEnd, end) !== end) return undefined;
  return object;
}
