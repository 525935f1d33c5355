/**
 * Provider adapters are data first: where to send a call (base URL, path), how to authenticate,
 * and, for providers that do not speak the OpenAI dialect, how a request, a response and a stream
 * event map. The OpenAI-compatible family is one adapter configured many times, not copied.
 */
import type { IncomingHttpHeaders } from 'node:http';
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
  /**
   * A non-2xx answer body → the OpenAI error shape `{error:{message,type,param,code}}` (the status
   * is kept). `headers` are the provider's (some name the error there, e.g. `x-amzn-errortype`).
   */
  error(ctx: TranslateContext, status: number, body: unknown, headers?: IncomingHttpHeaders): Record<string, unknown>;
  /**
   * For streams that are not server-sent events (AWS's binary event stream): the content type
   * that marks one, and how its bytes become events for `stream()`. Absent: streams are SSE.
   */
  streamDecoder?: StreamDecoder;
}

/** Turns a provider's non-SSE stream bytes into events, e.g. AWS event-stream messages. */
export interface StreamDecoder {
  /** The response content type that marks a stream, e.g. `application/vnd.amazon.eventstream`. */
  contentType: string;
  create(): EventDecoder;
}

/** Stateful, one per response: bytes in any split, whole events out (like {@link SseParser}). */
export interface EventDecoder {
  push(chunk: Buffer): SseEvent[];
  /** The stream ended; a partial message left over is reported as an event the translator fails on. */
  end(): SseEvent[];
}

/** The final upstream call, as a signer sees it after every hook ran. */
export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | Buffer | null;
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

/** How a call is sent natively in the client's dialect (see {@link ProviderAdapter.nativeCall}). */
export interface NativeCall {
  /** Appended to the base URL (or built by `url`), like a translator's path. */
  path: string;
  body: Record<string, unknown>;
}

export interface ProviderAdapter {
  /** The id used in `x-gateway-provider` and configs, e.g. `openai`. */
  id: string;
  /** The default base URL, up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Model routes this provider serves; a route outside the set gets 400 `unsupported_route`. Undefined: all. */
  routes?: ReadonlySet<ModelRoute>;
  /**
   * Client-dialect routes (core/ingress, e.g. Anthropic's `messages`) this provider speaks itself:
   * they go through unchanged to the same path. Other providers get them translated.
   */
  nativeRoutes?: ReadonlySet<ModelRoute>;
  /**
   * A client-dialect route this provider serves natively for some calls only, with its own path
   * and an adjusted body (Claude on Vertex AI takes Anthropic's Messages body at `:rawPredict`,
   * without `model`). Undefined for this call: the usual rules (`nativeRoutes`, else translation).
   * The answer goes back untouched, as for `nativeRoutes`. `body` is the client's (with the
   * target's overrides): read it, never change it.
   */
  nativeCall?(route: ModelRoute, target: Target, body: Record<string, unknown> | undefined): NativeCall | undefined;
  /**
   * The full upstream URL. Default: (custom host or base URL) + upstream path + query. For a
   * translated call `upstreamPath` is the translator's path and `search` is empty.
   */
  url?(input: UrlInput): string;
  /** Headers that authenticate the call (e.g. `authorization: Bearer …`); empty when the target has no key. */
  authHeaders(target: Target): Record<string, string>;
  /**
   * Request signing (AWS SigV4): headers to add once the call is final (after `onUpstreamRequest`),
   * computed over its method, URL, headers and body. Runs after `authHeaders`.
   */
  sign?(request: SignableRequest, target: Target): Promise<Record<string, string>>;
  /** For providers that do not speak OpenAI's API: how model-route calls translate. */
  translate?: Translator;
}
