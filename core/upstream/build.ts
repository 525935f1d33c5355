/**
 * Request building for one upstream attempt: the client's dialect (core/ingress), the provider's
 * dialect (its translator), the URL (checked as built), the body and the headers, and the
 * signature. Nothing here talks to the network or to the client.
 */
import type { GatewayContext } from '../context.js';
import type { UpstreamAttempt } from '../plugin.js';
import type { Target } from '../router/types.js';
import type { Runtime } from '../runtime.js';
import type { ModelRoute } from '../routes.js';
import type { NativeCall, ProviderAdapter, TranslateContext, TranslatedRequest, Translator } from '../providers/types.js';
import { Errors, isGatewayError, toGatewayError, type GatewayError } from '../errors.js';
import { headerValue, upstreamRequestHeaders } from './headers.js';
import { needsUsageInjection, withUsageRequested, withUsageRequestedBytes } from '../usage/meter.js';
import { checkBuiltUrl } from './ssrf.js';
import { ingressRoute, inputItems, withHistory, type IngressDialect } from '../ingress/index.js';

/** A call in a client dialect the provider does not speak: sent as `chat`, answered in the client's dialect. */
export interface Ingress {
  dialect: IngressDialect;
  strict: boolean;
  /** The OpenAI chat body the call became (target overrides applied). */
  chat: Record<string, unknown>;
  /** Told the finished answer (in the client's dialect): the Responses store keeps it. */
  onAnswer?: (answer: Record<string, unknown>) => void;
}

/** A model-route call to a provider with its own dialect. */
export interface Translation {
  translator: Translator;
  ctx: TranslateContext;
  request: TranslatedRequest;
}

/** One attempt, ready to go out (after onUpstreamRequest and signing). */
export interface BuiltCall {
  adapter: ProviderAdapter;
  url: URL;
  attempt: UpstreamAttempt;
  /** The model route the client called (undefined for pass-through). */
  route: ModelRoute | undefined;
  /** The upstream is asked for the usage chunk the client did not ask for. */
  inject: boolean;
  translation: Translation | undefined;
  ingress: Ingress | undefined;
}

function joinUrl(base: string, path: string, search: string): string {
  return (base.endsWith('/') ? base.slice(0, -1) : base) + path + search;
}

/** The model route of the request, when it has one. */
export function modelRoute(ctx: GatewayContext): ModelRoute | undefined {
  return ctx.route.kind === 'model' ? ctx.route.name : undefined;
}

/** True when the adapter serves `route` in the client's own dialect (no ingress translation). */
export function isNative(adapter: ProviderAdapter, route: ModelRoute | undefined): boolean {
  return route !== undefined && adapter.nativeRoutes?.has(route) === true;
}

/** Builds the call for `target`. A GatewayError when it cannot be made (the router may try elsewhere). */
export function buildCall(rt: Runtime, ctx: GatewayContext, adapter: ProviderAdapter, target: Target, number: number): BuiltCall | GatewayError {
  const route = modelRoute(ctx);
  const strict = headerValue(ctx.headers, 'x-gateway-strict-provider-compliance') !== 'false';
  // A route served natively for this call only, on a path and with a body of the adapter's making.
  let nativeCall: NativeCall | undefined;
  if (route !== undefined && adapter.nativeCall !== undefined) {
    // The adapter decides on the body as it would go out (an override may name the model); without
    // overrides that is the client's body itself, not a copy (adapters build a new body anyway).
    const overrides = target.overrideParams;
    const body = ctx.body !== undefined && overrides !== undefined && Object.keys(overrides).length > 0 ? withOverrides(ctx.body, target) : ctx.body;
    try {
      nativeCall = adapter.nativeCall(route, target, body);
    } catch (err) {
      return toGatewayError(err);
    }
  }
  const native = nativeCall !== undefined || isNative(adapter, route);
  // A client dialect the provider does not speak (Anthropic's Messages to OpenAI, Gemini, …) is
  // sent as a chat completion, then translated back (core/ingress).
  let ingress: Ingress | undefined;
  let callRoute = route;
  // A Responses call continuing a conversation the gateway holds (core/ingress/responses/continuation.ts):
  // the held items are expanded into `input`, except for the provider that made the previous
  // response natively (it knows the id, and keeps state the items cannot carry).
  const turn = route === 'responses' ? ctx.get('responsesTurn') : undefined;
  const expand = turn?.previous !== undefined && !(native && turn.previous.provider === target.provider);
  const clientBody = expand ? withHistory(ctx.body!, turn!.previous!) : ctx.body;
  if (turn !== undefined) turn.translated = !native;
  const entry = native ? undefined : ingressRoute(route);
  if (entry !== undefined) {
    try {
      ingress = { dialect: entry.dialect, strict, chat: withOverrides(entry.dialect.request(clientBody!, { strict }), target) };
    } catch (err) {
      return toGatewayError(err);
    }
    const save = turn?.save;
    if (save !== undefined) ingress.onAnswer = (answer) => save(answer, inputItems(ctx.body!.input));
    callRoute = 'chat.completions';
  }
  if (callRoute !== undefined && !native && adapter.routes !== undefined && !adapter.routes.has(callRoute)) {
    return Errors.unsupportedRoute(`Provider "${adapter.id}" does not serve this route.`);
  }
  const upstreamPath = ingress !== undefined ? '/chat/completions' : ctx.route.kind === 'model' || ctx.route.kind === 'passthrough' ? ctx.route.upstreamPath : ctx.path;
  // A dialect translates model-route calls; pass-through and native routes reach the provider's own API untouched.
  const translator = callRoute !== undefined && !native ? adapter.translate : undefined;
  if (translator !== undefined && !translator.routes.has(callRoute!)) {
    return Errors.unsupportedRoute(`Provider "${adapter.id}" does not serve this route.`);
  }
  let translation: Translation | undefined;
  let url: URL;
  try {
    if (translator !== undefined) {
      const request = ingress !== undefined ? { ...ingress.chat } : withOverrides(ctx.body ?? {}, target);
      const tctx: TranslateContext = { route: callRoute!, target, request, strict };
      translation = { translator, ctx: tctx, request: translator.request(tctx) };
    }
    const path = translation !== undefined ? translation.request.path : nativeCall !== undefined ? nativeCall.path : upstreamPath;
    // A translated call is a new request: the client's query (e.g. the Anthropic SDK's `?beta=true`) is not its own.
    const search = translation !== undefined || ingress !== undefined || nativeCall !== undefined ? '' : ctx.search;
    const href = adapter.url ? adapter.url({ target, route: callRoute, upstreamPath: path, search }) : joinUrl(target.customHost ?? adapter.baseUrl, path, search);
    url = new URL(href);
  } catch (err) {
    // An adapter that cannot build its URL (missing provider fields) says why; a bad URL is the host's.
    if (isGatewayError(err)) return toGatewayError(err);
    return Errors.invalidCustomHost('The upstream URL is not valid.', { cause: err });
  }
  // The guard runs on the URL as built, for every adapter: whatever a custom host, a provider
  // field or a future adapter put together, this is the host that would be dialled.
  const refused = checkBuiltUrl(url, rt.config.security.custom_hosts);
  if (refused !== null) return refused;

  // Metering asks OpenAI-style streams for their usage chunk, even when the client did not.
  const inject = (rt.pipeline.metering || ctx.meterUsage) && route !== undefined && translation === undefined && ingress === undefined && needsUsageInjection(route, ctx.body);
  const attempt: UpstreamAttempt = {
    number,
    target,
    url,
    method: ctx.method,
    headers: upstreamRequestHeaders(ctx.headers, {
      identity: route !== undefined,
      auth: adapter.authHeaders(target),
      extra: target.headers,
      forward: target.forwardHeaders,
    }),
    body:
      translation !== undefined
        ? JSON.stringify(translation.request.body)
        : ingress !== undefined
          ? JSON.stringify(ingress.chat)
          : nativeCall !== undefined
            ? JSON.stringify(nativeCall.body)
            : clientBody !== ctx.body
            ? JSON.stringify(withOverrides(clientBody!, target))
            : requestBody(ctx, target, inject),
  };
  if (translation !== undefined) Object.assign(attempt.headers, { 'content-type': 'application/json' }, translation.request.headers);
  else if (ingress !== undefined || nativeCall !== undefined) attempt.headers['content-type'] = 'application/json';
  return { adapter, url, attempt, route, inject, translation, ingress };
}

/** Signs the call as it goes out (after every hook that may edit it). */
export async function signCall(call: BuiltCall, ctx: GatewayContext): Promise<GatewayError | undefined> {
  const sign = call.adapter.sign;
  if (sign === undefined) return undefined;
  const attempt = call.attempt;
  try {
    Object.assign(attempt.headers, await sign({ method: ctx.method, url: attempt.url, headers: attempt.headers, body: attempt.body }, attempt.target));
    return undefined;
  } catch (err) {
    return isGatewayError(err) ? toGatewayError(err) : Errors.internal('The upstream call could not be signed.', { cause: err });
  }
}

/** A copy of `body` with the target's `override_params` merged over it. */
function withOverrides(body: Record<string, unknown>, target: Target): Record<string, unknown> {
  return { ...body, ...target.overrideParams };
}

/**
 * The original bytes when nothing changed the body (with the usage request spliced in when that is
 * the only change); otherwise the edited JSON, serialized once.
 */
function requestBody(ctx: GatewayContext, target: Target, injectUsage: boolean): Buffer | string | null {
  const overrides = target.overrideParams;
  const hasOverrides = overrides !== undefined && Object.keys(overrides).length > 0;
  if (injectUsage && !ctx.bodyChanged && !hasOverrides && ctx.body !== undefined && ctx.rawBody !== undefined) {
    const spliced = withUsageRequestedBytes(ctx.rawBody, ctx.body);
    if (spliced !== undefined) return spliced;
  }
  if (ctx.body !== undefined && (ctx.bodyChanged || hasOverrides || injectUsage)) {
    const body = hasOverrides ? withOverrides(ctx.body, target) : ctx.body;
    return JSON.stringify(injectUsage ? withUsageRequested(body) : body);
  }
  return ctx.rawBody !== undefined && ctx.rawBody.length > 0 ? ctx.rawBody : null;
}
