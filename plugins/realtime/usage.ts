/**
 * Usage of a Realtime session: the sum of the `usage` of every `response.done` event the upstream
 * sent (`input_tokens`, `output_tokens`, `total_tokens`, cached input tokens). Only text messages
 * that contain the event's name are parsed: audio deltas, the bulk of a session, are skipped with
 * one byte search.
 */
import type { Usage } from '../../core/index.js';

const MARKER = Buffer.from('"response.done"');

interface RealtimeUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  total_tokens?: unknown;
  input_token_details?: { cached_tokens?: unknown };
  output_token_details?: { reasoning_tokens?: unknown };
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

export class UsageMeter {
  #usage: Usage | undefined;
  /** Responses whose usage was counted. */
  responses = 0;

  /** Looks at one upstream message. */
  observe(data: Buffer): void {
    if (data.indexOf(MARKER) === -1) return;
    let event: { type?: unknown; response?: { usage?: RealtimeUsage | null } };
    try {
      event = JSON.parse(data.toString('utf8')) as typeof event;
    } catch {
      return;
    }
    const usage = event.type === 'response.done' ? event.response?.usage : undefined;
    if (usage === undefined || usage === null || typeof usage !== 'object') return;
    const input = count(usage.input_tokens);
    const output = count(usage.output_tokens);
    const u = (this.#usage ??= { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, source: 'upstream' });
    u.prompt_tokens += input;
    u.completion_tokens += output;
    u.total_tokens += usage.total_tokens === undefined ? input + output : count(usage.total_tokens);
    u.cached_tokens += count(usage.input_token_details?.cached_tokens);
    u.reasoning_tokens += count(usage.output_token_details?.reasoning_tokens);
    this.responses++;
  }

  /** The session's usage so far; undefined when no response reported any. */
  get usage(): Usage | undefined {
    return this.#usage;
  }
}
