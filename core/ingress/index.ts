/**
 * Which model routes arrive in a client dialect other than chat completions (Anthropic's Messages,
 * OpenAI's Responses), and how each is served when its target does not speak that dialect
 * natively (see `ProviderAdapter.nativeRoutes`).
 */
import type { ModelRoute } from '../routes.js';
import { anthropicIngress } from './anthropic/index.js';
import { responsesIngress } from './responses/index.js';
import type { IngressDialect } from './types.js';

export type { IngressDialect, AnswerOptions } from './types.js';
export { inputItems, withHistory, type ResponsesTurn } from './responses/index.js';

export interface IngressRoute {
  dialect: IngressDialect;
  /**
   * `generate`: translated to a chat completion and sent on; `count`: answered by the gateway's
   * own tokenizer (the provider has no such call).
   */
  kind: 'generate' | 'count';
}

export const INGRESS_ROUTES: ReadonlyMap<ModelRoute, IngressRoute> = new Map<ModelRoute, IngressRoute>([
  ['messages', { dialect: anthropicIngress, kind: 'generate' }],
  ['messages.count_tokens', { dialect: anthropicIngress, kind: 'count' }],
  ['responses', { dialect: responsesIngress, kind: 'generate' }],
]);

/** The ingress translation a call on `route` needs (to a target that does not speak its dialect), if any. */
export function ingressRoute(route: ModelRoute | undefined): IngressRoute | undefined {
  if (route === undefined) return undefined;
  const entry = INGRESS_ROUTES.get(route);
  return entry?.kind === 'generate' ? entry : undefined;
}

/** True when the gateway answers a call on `route` itself (to a target that does not speak its dialect). */
export function answeredLocally(route: ModelRoute | undefined): boolean {
  return route !== undefined && INGRESS_ROUTES.get(route)?.kind === 'count';
}

export { countLocally } from './count.js';
