/**
 * Deterministic text helpers shared by every dialect: pulling text out of provider content
 * shapes, a cheap token estimate, and splitting a reply into stream pieces.
 *
 * Determinism is the point: the same request must yield the same reply and the same usage,
 * streamed or not, so cache and usage tests can compare exact values.
 */

import type { JsonObject } from './route.js';

/** How many characters of the prompt a reply quotes. */
export const QUOTE_CHARS = 40;

/**
 * The text of a content value: a string, or an array of parts whose `text` fields are joined.
 * Covers OpenAI chat parts (`text`) and Responses parts (`input_text`, `output_text`); other
 * parts (images, audio) contribute nothing.
 */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (isRecord(part) && typeof part.text === 'string') text += part.text;
  }
  return text;
}

/** A rough token count: four characters a token, as OpenAI's own rule of thumb. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The first `max` UTF-16 units of `text`, never ending inside a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return isHighSurrogate(text.charCodeAt(max - 1)) ? text.slice(0, max - 1) : text.slice(0, max);
}

/**
 * Splits `text` into at most `count` pieces of near-equal length whose concatenation is `text`.
 * Boundaries never fall inside a surrogate pair, so each piece is valid UTF-8 on its own.
 *
 * @example
 * splitPieces('abcdefg', 3) // ['abc', 'de', 'fg']
 */
export function splitPieces(text: string, count: number): string[] {
  const n = Math.max(1, Math.min(count, text.length));
  const pieces: string[] = [];
  let start = 0;
  for (let i = 1; i <= n; i++) {
    let end = i === n ? text.length : Math.round((text.length * i) / n);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end++;
    if (end > start) pieces.push(text.slice(start, end));
    start = Math.max(start, end);
  }
  return pieces;
}

/** The text of a prompt that may be a string or token ids, read as the numbers' text. */
export function promptText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join(' ');
  return '';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Tool arguments matching a JSON schema's top-level properties: strings are `Paris`, numbers 1, booleans true. */
export function mockInput(schema: unknown): JsonObject {
  const input: JsonObject = {};
  if (!isRecord(schema) || !isRecord(schema.properties)) return input;
  for (const [name, property] of Object.entries(schema.properties)) {
    const type = isRecord(property) ? property.type : undefined;
    input[name] = type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : 'Paris';
  }
  return input;
}
