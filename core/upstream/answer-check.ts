/**
 * Which committed answers must be JSON. Model routes speak JSON (or SSE, checked elsewhere): a
 * 2xx with any other body (a proxy's HTML page, a cut body) is forwarded untouched, since the
 * bytes are the provider's, but logged as `upstream_invalid_response` rather than a success.
 * Pass-through routes carry whatever the provider serves, so they are never judged.
 */
import type { GatewayContext } from '../context.js';

/** 204 and 205 have no body by definition. */
const BODYLESS = new Set([204, 205]);

export function expectsJson(ctx: GatewayContext, status: number): boolean {
  return ctx.route.kind === 'model' && status >= 200 && status < 300 && !BODYLESS.has(status);
}
