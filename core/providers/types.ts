/**
 * Provider adapters are data first: where to send a call (base URL, path), how to authenticate,
 * and, for providers that do not speak the OpenAI dialect, how a request, a response and a stream
 * event map. The OpenAI-compatible family is one adapter configured many times, not copied.
 */
import type { ModelRoute } from '../routes.js';
import type { Target } from '../router/types.js';
import type { SseEvent } from '../sse/sse-parser.js';

/** The provider call a translator builds for an OpenAI-shaped request. */
export interface TranslatedRequest {
  /** Appended to the base URL (or custom host), e.g. `/messages`. */
  path: string;
  body: Record<string, unknown>;
  /** Extra headers (e.g. `anthropic-version`). */
  headers?: Record<string, string>;
}

/** Turns one streamed answer's provider events into OpenAI chunks. Stateful: one per response. */
export interface StreamTranslator {
  /** One provider event in; zero or more OpenAI events out (`data: {chunk}` events, `[DONE]` last). */
  event(event: SseEvent): SseEvent[];
  /** The provider stream ended; anything left to send (e.g. `data: [DONE]`). */
  end(): SseEvent[];
}

export interface TranslateContext {
  route: ModelRoute;
  target: Target;
  /** The OpenAI request body after overrides (the model the client asked for is `body.model`). */
  request: Record<string, unknown>;
  /** `x-gateway-strict-provider-compliance: false` lets provider extras through (e.g. `thinking`). */
  strict: boolean;
}

/**
 * A dialect: how an OpenAI-shaped request maps to a provider that speaks something else, and how
 * its answers map back. Model routes only; pass-through goes to the provider's own API untouched.
 */
export interface Translator {
  /** Routes this dialect serves (others get 400 `unsupported_route`). */
  routes: ReadonlySet<ModelRoute>;
  request(ctx: TranslateContext): TranslatedRequest;
  /** A 2xx non-stream answer → the OpenAI body. */
  response(ctx: TranslateContext, body: unknown): Record<string, unknown>;
  stream(ctx: TranslateContext): StreamTranslator;
  /** A non-2xx answer body → the OpenAI error shape `{error:{message,type,param,code}}` (the status is kept). */
  error(ctx: TranslateContext, status: number, body: unknown): Record<string, unknown>;
}

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
  /** For providers that do not speak OpenAI's API: how model-route calls translate. */
  translate?: Translator;
}
