/**
 * Token counting, off the event loop. The gateway counts tokens for rate-limit reservations
 * (prompt + max_tokens before the call) and for usage when an upstream reports none. Heavy
 * inputs (100 KB prompts) go to a worker pool so the event loop stays responsive; the queue is
 * bounded, and a full queue is a 503 `overloaded`, never an unbounded wait.
 */
import type { ModelRoute } from '../routes.js';

export interface TokenCounter {
  /** Tokens of a request's input (messages, prompt, input) for the route and model in the body. */
  countPrompt(route: ModelRoute, body: Record<string, unknown>, signal?: AbortSignal): Promise<number>;
  /** Tokens of a text (e.g. a streamed answer) for a model. Special tokens count as plain text. */
  countText(text: string, model: string, signal?: AbortSignal): Promise<number>;
  close(): Promise<void>;
}
