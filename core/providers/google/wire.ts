/**
 * The slice of Gemini's `generateContent` wire format the translator reads and writes
 * (https://ai.google.dev/api/generate-content, API version `v1beta`).
 *
 * Upstream bodies arrive as `unknown`; the guards narrow them field by field instead of trusting a
 * cast, because a provider that adds or renames a field must not crash the gateway.
 */

export type Json = Record<string, unknown>;

/** One part of a `Content` (the kinds this translator produces). */
export type Part =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: Json } }
  | { functionResponse: { name: string; response: { content: unknown } } };

export interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

import { isRecord, stringField } from '../openai-shape.js';
export { isRecord, stringField };

export function numberField(value: Json, key: string): number | undefined {
  const field = value[key];
  return typeof field === 'number' && Number.isFinite(field) ? field : undefined;
}
