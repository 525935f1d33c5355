/**
 * The mock upstream's HTTP server: a real node:http listener that stands in for providers.
 *
 *   request ─► strip /mock/<directives> ─► parse directives ─► read body ─► record
 *           ─► fail_first gate ─► hang? ─► delay ─► reset? ─► authorize ─► status? error : route
 *           ─► writeReply
 *
 * Routes are picked by method and path; each belongs to a dialect that knows how its provider
 * phrases errors: OpenAI's routes, Anthropic's `/v1/messages`, Gemini's
 * `/v1beta/models/<model>:generateContent`, and Bedrock Runtime's
 * `/model/<model>/{converse,converse-stream,invoke}` (SigV4-checked, event-stream framed).
 * Vertex AI's `/v1/projects/…/publishers/{google,anthropic}/models/…` and its OAuth `/token`
 * endpoint are `vertex.ts`'s.
 * Fixed paths live in `ROUTES`; patterned ones are matched in `findRoute`.
 */

import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokensRoute, messagesRoute } from './anthropic.js';
import { bedrockRoute, isBedrockPath } from './bedrock.js';
import { generateContentRoute, isGeminiPath } from './gemini.js';
import { hasFault, parseDirectives, withoutFaults, type Directives } from './directives.js';
import { echoRoute, fileContentRoute, isFileContentPath, modelsRoute } from './echo.js';
import { embeddingsRoute } from './embedding.js';
import { mockId } from './ids.js';
import { moderationsRoute } from './moderation.js';
import { chatCompletionsRoute, completionsRoute } from './openai.js';
import { vertexRoute } from './vertex.js';
import { responsesRoute } from './openai-responses.js';
import { later, writeReply } from './reply.js';
import type { JsonObject, MockReply, MockRequest, Route } from './route.js';
import { isRecord } from './text.js';

/** One request as the mock received it. */
export interface RecordedRequest {
  method: string;
  /** Path and query as received, after stripping the `/mock/<directives>` prefix. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A running mock upstream. */
export interface MockUpstream {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
  /** Every request received, oldest first, while recording is on. */
  requests: RecordedRequest[];
  /** Clears `requests` (in place) and the `fail_first` counters. */
  reset(): void;
  /** Stops listening and cuts open connections, hung requests included. */
  close(): Promise<void>;
}

export interface MockUpstreamOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  host?: string;
  /** Record requests in `requests`; the benchmark turns this off. Default true. */
  record?: boolean;
}

interface MockState {
  readonly record: boolean;
  readonly requests: RecordedRequest[];
  /** `fail_first` counters by key. */
  readonly failCounts: Map<string, number>;
}

const DIRECTIVE_PREFIX = '/mock/';
/** Longer than any client's idle timeout, so the mock is never the side that drops a pooled connection. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const EMPTY_JSON: JsonObject = Object.freeze({});

const ROUTES: ReadonlyMap<string, Route> = new Map([
  ['POST /v1/chat/completions', chatCompletionsRoute],
  ['POST /v1/completions', completionsRoute],
  ['POST /v1/embeddings', embeddingsRoute],
  ['POST /v1/moderations', moderationsRoute],
  ['POST /v1/responses', responsesRoute],
  ['POST /v1/messages', messagesRoute],
  ['POST /v1/messages/count_tokens', countTokensRoute],
  ['GET /v1/models', modelsRoute],
]);

/**
 * Starts a mock upstream.
 *
 * @example
 * const mock = await startMockUpstream({ port: 0 });
 * const client = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'sk-test' });
 * await mock.close();
 */
export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const host = options.host ?? '127.0.0.1';
  const state: MockState = { record: options.record ?? true, requests: [], failCounts: new Map() };
  // requestTimeout 0: `hang=1` and long delays must stay open until the client gives up.
  const server = createServer({ noDelay: true, keepAlive: true, requestTimeout: 0 }, function onRequest(req, res) {
    handleRequest(state, req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;

  await new Promise<void>(function listen(resolve, reject) {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, function listening() {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    requests: state.requests,
    reset() {
      state.requests.length = 0;
      state.failCounts.clear();
    },
    close() {
      closing ??= new Promise<void>(function stop(resolve) {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function handleRequest(state: MockState, req: IncomingMessage, res: ServerResponse): void {
  // A client that vanishes mid-body or mid-stream is normal here, never a crash.
  req.on('error', ignore);
  res.on('error', ignore);
  const url = req.url ?? '/';
  let path = url;
  let prefix = '';
  if (url.startsWith(DIRECTIVE_PREFIX)) {
    const end = url.indexOf('/', DIRECTIVE_PREFIX.length);
    prefix = url.slice(DIRECTIVE_PREFIX.length, end === -1 ? url.length : end);
    path = end === -1 ? '/' : url.slice(end);
  }
  const directives = parseDirectives(prefix, req.rawHeaders);
  const chunks: Buffer[] = [];
  req.on('data', function onData(chunk: Buffer) {
    chunks.push(chunk);
  });
  req.on('end', function onEnd() {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    respond(state, { req, res, path, directives, body });
  });
}

function respond(
  state: MockState,
  exchange: { req: IncomingMessage; res: ServerResponse; path: string; directives: Directives; body: Buffer },
): void {
  const { req, res, path, body } = exchange;
  const method = req.method ?? 'GET';
  if (state.record) state.requests.push({ method, path, headers: req.headers, body });
  const queryAt = path.indexOf('?');
  const pathname = queryAt === -1 ? path : path.slice(0, queryAt);
  const directives = gateFaults(state, exchange.directives, pathname);
  // Hung requests hold nothing but the socket, which server.close() cuts.
  if (directives.hang) return;

  later(res, directives.delay, function afterDelay() {
    if (directives.reset === 'before_headers') {
      res.destroy();
      return;
    }
    const headers: OutgoingHttpHeaders = { 'x-request-id': mockId('req_') };
    if (directives.retryAfter !== undefined) headers['retry-after'] = directives.retryAfter;
    if (directives.retryAfterMs !== undefined) headers['retry-after-ms'] = directives.retryAfterMs;
    const request: MockRequest = {
      method,
      url: req.url ?? '/',
      path,
      pathname,
      query: queryAt === -1 ? '' : path.slice(queryAt + 1),
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
      json: EMPTY_JSON,
      directives,
    };
    writeReply(res, buildReply(findRoute(method, pathname), request), { directives, headers });
  });
}

function findRoute(method: string, pathname: string): Route {
  const route = ROUTES.get(`${method} ${pathname}`);
  if (route !== undefined) return route;
  if (method === 'GET' && isFileContentPath(pathname)) return fileContentRoute;
  if (method === 'POST' && isGeminiPath(pathname)) return generateContentRoute;
  if (method === 'POST' && isBedrockPath(pathname)) return bedrockRoute;
  const vertex = vertexRoute(method, pathname);
  if (vertex !== undefined) return vertex;
  // Azure OpenAI serves OpenAI's wire format under its deployment and v1 paths.
  const azure = AZURE_PATH.exec(pathname);
  if (azure !== null) return ROUTES.get(`${method} /v1${azure[1]}`) ?? echoRoute;
  return echoRoute;
}

/** `/openai/deployments/<name>/<route>` and `/openai/v1/<route>`. */
const AZURE_PATH = /^\/openai\/(?:deployments\/[^/]+|v1)(\/.+)$/;

function buildReply(route: Route, request: MockRequest): MockReply {
  // Credentials first, as real providers check them: a badly signed request fails even when a
  // directive asks for an error, so fault tests also prove the gateway signs correctly.
  const refused = route.authorize?.(request);
  if (refused !== undefined) return refused;
  const { status } = request.directives;
  if (status !== 0) {
    // Only the error path pays for parsing, to name the model the way OpenAI's messages do.
    const model = parseObject(request.body)?.model;
    return route.dialect.errorReply(status, typeof model === 'string' ? model : undefined);
  }
  if (request.directives.html) return { kind: 'raw', status: 200, contentType: 'text/html; charset=utf-8', body: HTML_PAGE };
  let json = EMPTY_JSON;
  if (route.json) {
    const parsed = parseObject(request.body);
    if (parsed === undefined) return route.dialect.invalidJson();
    json = parsed;
  }
  try {
    return route.handle(json === EMPTY_JSON ? request : { ...request, json });
  } catch {
    // A request shape no handler anticipated gets the provider's 500, not a dead mock.
    return route.dialect.errorReply(500, undefined);
  }
}

/** What `html` answers: a page a proxy or a login wall might put in front of a provider. */
export const HTML_PAGE = '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>\n';

/** The body as a JSON object, or undefined when it is not valid JSON or not an object. */
function parseObject(body: Buffer): JsonObject | undefined {
  if (body.length === 0) return undefined;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Applies `fail_first=N;key=K`: the first N requests with key K keep their fault directives
 * (a plain `status=503` when they name none); later ones have every fault removed.
 */
function gateFaults(state: MockState, directives: Directives, pathname: string): Directives {
  if (directives.failFirst === 0) return directives;
  const key = directives.key ?? pathname;
  const seen = state.failCounts.get(key) ?? 0;
  if (seen >= directives.failFirst) return withoutFaults(directives);
  state.failCounts.set(key, seen + 1);
  return hasFault(directives) ? directives : { ...directives, status: 503 };
}

function ignore(): void {}
