/**
 * The request flow, the same for HTTP/1.1 and HTTP/2:
 *
 *   match route ─▶ onRequest hooks ─▶ read body (limit, JSON, validation) ─▶ onRequestBody hooks
 *     ─▶ terminal: plugin route handler | router (upstream attempts) | a WebSocket session (core/upgrade.ts)
 *     ─▶ response hooks (reverse) ─▶ wait for the response to finish ─▶ onDone (every plugin)
 *
 * Any failure before the head is sent becomes an error reply in the one shape; after it, the
 * response is ended visibly (see ResponseWriter.failStream). Nothing here may crash the process.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { GatewayContext, type Outcome } from './context.js';
import { ResponseWriter, respondWhole } from './response-writer.js';
import { Errors, isGatewayError, toGatewayError } from './errors.js';
import { isPromise, observeDone, runHooks, type Stop } from './pipeline.js';
import { ALL_PLUGINS, sendError, sendReply } from './respond.js';
import { isJsonContentType, parseJsonObject, readBody, type BodySource } from './body-reader.js';
import { routeRequest } from './router/index.js';
import { modelRouteMatch } from './routes.js';
import { headerValue } from './upstream/headers.js';
import { checkLookupHeaders } from './validation/lookup-bounds.js';
import { nonFiniteNumber } from './validation/finite-numbers.js';
import type { ConnectionHandlers } from './server.js';
import { findUpgradeRoute, OpenSessions, runUpgrade, upgradeResponse, type UpgradeRequest } from './upgrade.js';
import type { Runtime } from './runtime.js';

export interface HandlerState {
  /** The current runtime; swapped atomically by a reload. */
  runtime(): Runtime;
  /** True once shutdown began: answers carry `connection: close`. */
  readonly draining: boolean;
}

const HEALTH_BODY = '{"status":"ok"}';
const HEALTH_HEADERS_H1 = { 'content-type': 'application/json', 'content-length': HEALTH_BODY.length };
const HEALTH_HEADERS_H2 = { ...HEALTH_HEADERS_H1, [h2.HTTP2_HEADER_STATUS]: 200 };

/**
 * The two entry points the listener calls: HTTP/1.1 with Node's request and response, HTTP/2 with
 * the bare stream (see core/server.ts for why not the compatibility layer). Both end in the same
 * {@link begin}; only the objects that read the body and write the answer differ.
 */
export function createRequestHandler(state: HandlerState): ConnectionHandlers {
  // WebSocket sessions this gateway accepted: asked to end when it drains.
  const sessions = new OpenSessions();
  return {
    http1(req: IncomingMessage, res: ServerResponse) {
      const start = performance.now();
      const rt = state.runtime();
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const route = rt.routes.match(method, pathOf(url));
      if (route.kind === 'health') {
        // The liveness probe: no plugins, no context; answered before anything else can fail.
        res.writeHead(200, HEALTH_HEADERS_H1);
        res.end(HEALTH_BODY);
        return;
      }
      const ctx = new GatewayContext({ method, url, headers: req.headers, httpVersion: req.httpVersion, route, log: rt.log, start, remoteAddress: req.socket?.remoteAddress });
      begin(rt, ctx, new ResponseWriter(res, ctx, { closeConnection: state.draining }), req);
    },
    http2(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, remoteAddress: string | undefined) {
      const start = performance.now();
      const rt = state.runtime();
      // CONNECT has no :path; it falls to the router's 404/405 like any unknown request.
      // Node hands pseudo-headers over as single strings (a repeated one is a protocol error).
      const method = (headers[h2.HTTP2_HEADER_METHOD] as string | undefined) ?? 'GET';
      const url = (headers[h2.HTTP2_HEADER_PATH] as string | undefined) ?? '/';
      const expect = headers.expect;
      if (expect !== undefined) {
        // What Node's compatibility layer and the HTTP/1.1 server do: a 100 for `100-continue`,
        // 417 for any other expectation.
        if (expect.toLowerCase() !== '100-continue') return void stream.respond({ [h2.HTTP2_HEADER_STATUS]: 417 }, { endStream: true });
        stream.additionalHeaders({ [h2.HTTP2_HEADER_STATUS]: 100 });
      }
      const route = rt.routes.match(method, pathOf(url));
      if (route.kind === 'health') {
        respondWhole(stream, HEALTH_HEADERS_H2, HEALTH_BODY);
        return;
      }
      const ctx = new GatewayContext({ method, url, headers, httpVersion: '2.0', route, log: rt.log, start, remoteAddress });
      begin(rt, ctx, new ResponseWriter(stream, ctx, { closeConnection: state.draining }), stream);
    },
    upgrade(req, socket, head) {
      const start = performance.now();
      const rt = state.runtime();
      const url = req.url ?? '/';
      const path = pathOf(url);
      const upgrade = findUpgradeRoute(rt.pipeline, path, req);
      if (upgrade === undefined) return false;
      const method = req.method ?? 'GET';
      const route = rt.routes.match(method, path);
      const ctx = new GatewayContext({ method, url, headers: req.headers, httpVersion: req.httpVersion, route, log: rt.log, start, remoteAddress: socket.remoteAddress });
      ctx.set('upgrade', upgrade);
      const out = new ResponseWriter(upgradeResponse(req, socket), ctx, { closeConnection: false });
      begin(rt, ctx, out, req, { route: upgrade, req, socket, head, sessions, draining: () => state.draining });
      return true;
    },
    drain: () => sessions.closeAll(),
  };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function begin(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, body: BodySource, upgrade?: UpgradeTerminal): void {
  rt.inflight++;
  serve(rt, ctx, out, body, upgrade).then(
    () => {
      rt.inflight--;
    },
    (err: unknown) => {
      rt.inflight--;
      rt.log.error('request handler failed', { requestId: ctx.id, err });
    },
  );
}

/** A WebSocket upgrade request: no body to read, and its session is the terminal stage. */
interface UpgradeTerminal extends UpgradeRequest {
  draining: () => boolean;
}

async function serve(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, req: BodySource, upgrade?: UpgradeTerminal): Promise<void> {
  const pipeline = rt.pipeline;
  let limit = ALL_PLUGINS;
  try {
    const route = ctx.route;
    if (route.kind === 'not_found') throw Errors.routeNotFound();
    if (route.kind === 'method_not_allowed') throw Errors.methodNotAllowed(undefined, route.allow === undefined ? undefined : { headers: { allow: route.allow } });
    const oversized = checkLookupHeaders(ctx.headers);
    if (oversized !== null) throw oversized;
    ctx.metadata = parseMetadata(ctx);

    let stop: Stop | undefined;
    // Synchronous hooks (most) answer without a promise; only an async one is awaited.
    if (pipeline.onRequest !== null) {
      const ran = runHooks(pipeline.onRequest, ctx, (fn) => fn(ctx));
      stop = isPromise(ran) ? await ran : ran;
    }
    if (stop === undefined) {
      if (upgrade === undefined) await readRequestBody(rt, ctx, req);
      if (route.kind === 'plugin' && route.route.model !== undefined) {
        // A plugin route answered by a model call: from here on the request is that model call.
        const call = await route.route.model(ctx, route.params);
        const invalid = rt.validate(call.route, call.body);
        if (invalid) throw invalid;
        ctx.reroute(modelRouteMatch(call.route), call.body);
      }
      if (pipeline.onRequestBody !== null) {
        const ran = runHooks(pipeline.onRequestBody, ctx, (fn) => fn(ctx));
        stop = isPromise(ran) ? await ran : ran;
      }
    }

    if (stop !== undefined) {
      limit = stop.index;
      if (stop.reply) {
        ctx.source = 'plugin';
        await sendReply(rt, ctx, out, stop.reply, { limit, proxied: false });
      } else {
        await sendError(rt, ctx, out, stop.error!, limit);
      }
    } else if (upgrade !== undefined) {
      await runUpgrade(rt, ctx, out, upgrade, upgrade.draining);
    } else if (ctx.route.kind === 'plugin') {
      ctx.source = 'plugin';
      const answer = await ctx.route.route.handler(ctx, ctx.route.params);
      await sendReply(rt, ctx, out, answer, { limit, proxied: false });
    } else {
      await routeRequest(rt, ctx, out);
    }
  } catch (err) {
    const error = toGatewayError(err);
    if (!isGatewayError(err)) ctx.log.error('unexpected error', { requestId: ctx.id, err });
    // The rest of an oversized, broken or too slow body is never read: close the connection (on
    // HTTP/2, Node resets the stream once the answer is sent) instead of draining it.
    if (error.code === 'body_too_large' || error.code === 'bad_request' || error.code === 'request_timeout') out.closeAfterResponse();
    if (!out.headersSent) await sendError(rt, ctx, out, error, limit);
    else if (out.writable) {
      ctx.streamError = error;
      out.failStream(error, ctx.wantsStream);
    }
  }

  await out.done;
  const observing = finishRequest(rt, ctx);
  if (observing !== undefined) await observing;
}

/**
 * What is left of `server.request_timeout` for the body, counted from the start of the request
 * (for HTTP/2, the stream's start: its headers arrived whole).
 */
function bodyDeadline(rt: Runtime, ctx: GatewayContext): number {
  return rt.config.server.request_timeout - (performance.now() - ctx.timings.start);
}

/** Reads the body the route needs: every body for pass-through, a validated JSON object for model routes. */
async function readRequestBody(rt: Runtime, ctx: GatewayContext, req: BodySource): Promise<void> {
  const route = ctx.route;
  if (route.kind === 'plugin') {
    const mode = route.route.body ?? (ctx.method === 'GET' || ctx.method === 'DELETE' ? 'none' : 'json');
    if (mode === 'none') return;
    // The admin API takes small documents: its own, lower limit answers 413 before a byte is
    // parsed or audited, so a key cannot make the audit trail store megabytes per refused call.
    const server = rt.config.server;
    const limit = route.route.bodyLimit === 'admin' ? Math.min(server.admin_body_limit, server.body_limit) : server.body_limit;
    ctx.rawBody = await readBody(req, ctx.headers, limit, bodyDeadline(rt, ctx));
    if (mode === 'json') {
      if (ctx.rawBody.length === 0) ctx.body = {};
      else {
        requireJson(ctx);
        ctx.body = parseJsonObject(ctx.rawBody);
        // Plugin (admin) bodies are stored: 1e999 must not become an Infinity in the store.
        const nonFinite = nonFiniteNumber(ctx.body);
        if (nonFinite !== null) throw nonFinite;
      }
    }
    return;
  }
  if (route.kind === 'model') requireJson(ctx);
  ctx.rawBody = await readBody(req, ctx.headers, rt.config.server.body_limit, bodyDeadline(rt, ctx));
  if (route.kind !== 'model') return;
  const body = parseJsonObject(ctx.rawBody);
  const invalid = rt.validate(route.name, body);
  if (invalid) throw invalid;
  ctx.body = body;
}

function requireJson(ctx: GatewayContext): void {
  const type = headerValue(ctx.headers, 'content-type');
  if (!isJsonContentType(type)) {
    throw Errors.unsupportedContentType(
      type === undefined ? 'A content-type of application/json is required.' : 'The content type must be application/json.',
      { param: 'content-type' },
    );
  }
}

/** `x-gateway-metadata`: a JSON object whose values are strings (numbers and booleans are stringified). */
function parseMetadata(ctx: GatewayContext): Record<string, string> {
  const raw = headerValue(ctx.headers, 'x-gateway-metadata');
  if (raw === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw Errors.invalidHeader('x-gateway-metadata must be a JSON object.', { param: 'x-gateway-metadata' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw Errors.invalidHeader('x-gateway-metadata must be a JSON object.', { param: 'x-gateway-metadata' });
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string') out[key] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v);
    else if (v !== null) {
      throw Errors.invalidHeader('x-gateway-metadata values must be strings (numbers and booleans are accepted).', { param: 'x-gateway-metadata' });
    }
  }
  return out;
}

/** Runs onDone (batched, see observeDone): the promise of the batch, or undefined when no plugin observes. */
function finishRequest(rt: Runtime, ctx: GatewayContext): Promise<void> | undefined {
  const t = ctx.timings;
  t.end = performance.now();
  if (rt.pipeline.onDone === null) return undefined;
  const outcome: Outcome = {
    status: ctx.status,
    error: ctx.error,
    source: ctx.source,
    aborted: ctx.aborted && ctx.streamError === undefined,
    streamError: ctx.streamError,
    durationMs: t.end - t.start,
    upstreamMs: t.upstreamMs,
  };
  return observeDone(rt.pipeline.onDone, ctx, outcome);
}
