/**
 * Provider adapters are data first: where to send a call (base URL, path), how to authenticate,
 * and, for providers that do not speak the OpenAI dialect, how a request, a response and a stream
 * event map. The OpenAI-compatible family is one adapter configured many times, not copied.
 */
import type { ModelRoute } from '../routes.js';
import type { Target } from '../router/types.js';

export interface UrlInput {
  target: Target;
  /** The model route, or undefined for pass-through. */
  route: ModelRoute | undefined;
  /** The path after `/v1` as the client sent it, e.g. `/chat/completions` or `/files/abc`. */
  upstreamPath: string;
  /** The query string including `?`, or `''`. */
  search: string;
}

export interface ProviderAdapter {
  /** The id used in `x-gateway-provider` and configs, e.g. `openai`. */
  id: string;
  /** The default base URL, up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Model routes this provider serves; a route outside the set gets 400 `unsupported_route`. Undefined: all. */
  routes?: ReadonlySet<ModelRoute>;
  /** The full upstream URL. Default: (custom host or base URL) + upstream path + query. */
  url?(input: UrlInput): string;
  /** Headers that authenticate the call (e.g. `authorization: Bearer …`); empty when the target has no key. */
  authHeaders(target: Target): Record<string, string>;
}
