/**
 * Which model routes arrive in a client dialect other than OpenAI's, and how each is served when
 * its target does not speak that dialect natively (see `ProviderAdapter.nativeRoutes`).
 */
import type { ModelRoute } from '../routes.js';
import { anthropicIngress } from './anthropic/index.js';
import type { IngressDialect } from './types.js';

export type { IngressDialect } from './types.js';

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
]);
