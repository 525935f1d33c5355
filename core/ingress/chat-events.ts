/**
 * What an ingress stream translator reads: one event of an OpenAI chat stream, classified the
 * same way for every client dialect (Anthropic's Messages, OpenAI's Responses).
 *
 *   event: error          ─► error     (its body, parsed when it is JSON)
 *   data: [DONE]          ─► done
 *   data: {…, error}      ─► error     (compatible servers that report a failure as a chunk)
 *   data: {chunk}         ─► chunk
 *   data: <not JSON>      ─► not_json
 *   empty, or not an object ─► skip
 */
import { isRecord } from '../providers/openai-shape.js';
import type { SseEvent } from '../sse/sse-parser.js';

export type ChatEvent =
  | { kind: 'error'; body: unknown }
  | { kind: 'done' }
  | { kind: 'chunk'; data: Record<string, unknown> }
  | { kind: 'not_json' }
  | { kind: 'skip' };

const SKIP: ChatEvent = Object.freeze({ kind: 'skip' });
const DONE: ChatEvent = Object.freeze({ kind: 'done' });
const NOT_JSON: ChatEvent = Object.freeze({ kind: 'not_json' });

export function readChatEvent(event: SseEvent): ChatEvent {
  if (event.data.length === 0) return SKIP;
  if (event.event === 'error') {
    let body: unknown;
    try {
      body = JSON.parse(event.data);
    } catch {
      body = undefined;
    }
    return { kind: 'error', body };
  }
  if (event.data === '[DONE]') return DONE;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return NOT_JSON;
  }
  if (!isRecord(data)) return SKIP;
  if (isRecord(data.error) && !Array.isArray(data.choices)) return { kind: 'error', body: data };
  return { kind: 'chunk', data };
}
