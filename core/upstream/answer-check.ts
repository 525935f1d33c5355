/**
 * Which committed answers must be JSON. Model routes speak JSON (or SSE, checked elsewhere): a
 * 2xx with any other body (a proxy's HTML page, a cut body) is forwarded untouched, since the
 * bytes are the provider's, but logged as `upstream_invalid_response` rather than a success.
 * Pass-through routes carry whatever the provider serves, so they are never judged.
 *
 * When the usage meter reads the answer, it decides: an answer ending with its usage is read from
 * its end with this same edge check (meter.ts `trailingUsage`), any other is parsed. When nothing
 * reads it, the check must not add a parse per request to the hot path: the answer's first and
 * last non-blank bytes must be `{` and `}`, which tells an HTML page, an empty or a cut body from
 * an object without reading the middle.
 */
import type { GatewayContext } from '../context.js';

/** 204 and 205 have no body by definition. */
const BODYLESS = new Set([204, 205]);

export function expectsJson(ctx: GatewayContext, status: number): boolean {
  return ctx.route.kind === 'model' && status >= 200 && status < 300 && !BODYLESS.has(status);
}

/** True when the first non-blank byte of the chunks is `{` and the last is `}` (no parse). */
export function looksLikeJsonObject(chunks: readonly Buffer[]): boolean {
  return edgeByte(chunks, true) === OPEN && edgeByte(chunks, false) === CLOSE;
}

const OPEN = 0x7b;
const CLOSE = 0x7d;

/** JSON's blank space, as a byte or a UTF-16 code unit (the same values). */
export function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function edgeByte(chunks: readonly Buffer[], first: boolean): number | undefined {
  for (let c = first ? 0 : chunks.length - 1; c >= 0 && c < chunks.length; c += first ? 1 : -1) {
    const chunk = chunks[c]!;
    for (let i = first ? 0 : chunk.length - 1; i >= 0 && i < chunk.length; i += first ? 1 : -1) {
      if (!isBlank(chunk[i]!)) return chunk[i];
    }
  }
  return undefined;
}
