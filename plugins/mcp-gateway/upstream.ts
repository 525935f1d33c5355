/**
 * The gateway's side of a registered MCP server: where it is, the credentials the gateway holds
 * for it, and an SDK client connected to it over Streamable HTTP (or SSE for older servers).
 *
 *   integration record ── upstreamTarget ──▶ {url, transport, headers (unsealed, never logged)}
 *                       ── connectUpstream ─▶ Client (SDK) over the gateway's guarded dispatcher
 *
 * Every connection passes the SSRF guard twice: the URL against `security.custom_hosts` before
 * connecting, and each socket's addresses at connect time (the dispatcher). Redirects are not
 * followed. Nothing from the MCP client's request reaches the upstream but the JSON-RPC message:
 * not its headers, not the gateway key.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { checkUpstreamUrl, SseParser, type CustomHostPolicy } from '../../core/index.js';
import { VERSION } from '../../core/version.js';
import { describe, UpstreamUnavailable, type UpstreamTarget } from './target.js';

export { describe, UpstreamUnavailable, upstreamTarget, type UpstreamTarget } from './target.js';

export interface ConnectOptions {
  dispatcher: Dispatcher;
  policy: CustomHostPolicy;
  /** Bounds the connect and initialize handshake. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Statuses whose response has no body, which `new Response()` refuses one for. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for the SDK transports on the guarded dispatcher's request API. Redirects come back
 * as they are (the SDK follows same-origin ones itself, through this fetch again).
 *
 * Not undici's `fetch`: per call that built a `Request`, cloned it and teed its body (any redirect
 * mode but "error"), and added a listener to the transport's one long-lived abort signal that was
 * removed only when the request was garbage-collected, so each call scanned the listeners of all
 * calls since the last major GC. `request()` removes its listener when the response ends.
 *
 * A POST's answer of only JSON-RPC responses is read here whole and handed over as JSON (see
 * {@link readAnswer}); anything else reaches the SDK as the stream it is.
 */
export function guardedFetch(dispatcher: Dispatcher): FetchLike {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const target = typeof url === 'string' ? new URL(url) : url;
    const headers: Record<string, string> = {};
    const given = init?.headers;
    if (given instanceof Headers) given.forEach((v, k) => (headers[k] = v));
    else new Headers(given).forEach((v, k) => (headers[k] = v));
    const method = init?.method ?? 'GET';
    const signal = init?.signal ?? undefined;
    // The SDK's transports send JSON text; anything else would be dropped silently here.
    if (init?.body !== undefined && init.body !== null && typeof init.body !== 'string') throw new TypeError('The MCP upstream fetch sends text bodies only.');
    const res = await dispatcher.request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: method as Dispatcher.HttpMethod,
      headers,
      body: (init?.body ?? undefined) as string | undefined,
      ...(signal !== undefined ? { signal } : {}),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (Array.isArray(v)) for (const one of v) out.append(k, one);
      else if (v !== undefined) out.set(k, v);
    }
    if (method === 'POST' && res.statusCode === 200) {
      const type = mediaType(out.get('content-type'));
      if (type === 'application/json' || type === 'text/event-stream') return readAnswer(res.body, type, out, typeof init?.body === 'string' && init.body.startsWith('{'));
    }
    const empty = NULL_BODY.has(res.statusCode) || method === 'HEAD';
    if (empty) res.body.resume();
    // undici's own web view of the body (`Readable.toWeb` throws past a closed controller on Node 20).
    const body = empty ? null : (res.body as unknown as { body: ReadableStream<Uint8Array> }).body;
    return new Response(body, { status: res.statusCode, statusText: STATUS_CODES[res.statusCode] ?? '', headers: out });
  };
}

/** `text/event-stream` of `text/event-stream; charset=utf-8` (a header as `Headers` or undici's response headers give it). */
export const mediaType = (value: string | string[] | null | undefined): string => (Array.isArray(value) ? value[0] ?? '' : value ?? '').split(';', 1)[0]!.trim().toLowerCase();

/**
 * What the SDK's Streamable HTTP client reads of a POST's `Response` (status, headers, `json()`,
 * `text()`), for an answer already read and parsed. No web streams: on Node 20 the SDK's way, a
 * `ReadableStream` through a `TextDecoderStream` and an SSE parser stream, cost more CPU than the
 * rest of a proxied call.
 */
class ReadAnswer {
  readonly ok = true;
  readonly status = 200;
  readonly statusText = 'OK';
  readonly redirected = false;
  readonly type = 'basic';
  readonly url = '';
  readonly body = null;
  readonly bodyUsed = false;

  /** `raw`: the JSON text as received, when there was one. */
  constructor(readonly headers: Headers, private readonly value: unknown, private readonly raw?: string) {}

  async json(): Promise<unknown> {
    return this.value;
  }

  async text(): Promise<string> {
    return this.raw ?? JSON.stringify(this.value);
  }
}

/** A JSON-RPC response (a result or an error), not a request or notification. */
const isResponse = (m: unknown): boolean =>
  typeof m === 'object' && m !== null && !('method' in m) && 'id' in m && ('result' in m || 'error' in m);

/**
 * A POST's 200 answer. JSON is read whole (the SDK would too). An SSE answer is read until it has
 * answered the request (`single`: the POST carried one message), or to its end for a batch. When
 * responses were all it held (the common case: a tool call without progress), they go to the SDK
 * as a JSON answer. As soon as anything else appears (a progress notification, a request to the
 * client, an event id or retry for resumption, a named event), the SDK gets the stream instead,
 * the bytes read so far first, and handles every event itself.
 */
function readAnswer(body: Readable, type: string, headers: Headers, single: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const held: Buffer[] = [];
    const parser = new SseParser();
    const responses: unknown[] = [];

    const finish = (answer: Response): void => {
      body.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(answer);
    };
    /** The responses as a JSON answer; what is left of the stream is read and dropped. */
    const asJson = (value: unknown, raw?: string): void => {
      headers.set('content-type', 'application/json');
      finish(new ReadAnswer(headers, value, raw) as unknown as Response);
      if (!body.readableEnded) body.on('error', () => undefined).resume();
    };
    /** The SSE stream as it is: what was read, then the rest, with backpressure. */
    const asStream = (): void => {
      body.pause();
      finish(new Response(replay(body, held), { status: 200, statusText: 'OK', headers }));
    };
    const onData = (chunk: Buffer): void => {
      held.push(chunk);
      if (type === 'application/json') return;
      for (const e of parser.push(chunk)) {
        // Resumption state (an event id, a retry delay) is the SDK's to keep.
        if (e.id !== undefined || e.retry !== undefined) return asStream();
        // A comment or keep-alive: the SDK skips it too.
        if (e.data === '') continue;
        let message: unknown;
        try {
          message = e.event === undefined || e.event === 'message' ? JSON.parse(e.data) : undefined;
        } catch {
          message = undefined;
        }
        if (!isResponse(message)) return asStream();
        responses.push(message);
      }
      // One request, answered: the stream has nothing more to say (the SDK would read on to its end).
      if (single && responses.length === 1) asJson(responses[0]);
    };
    const onEnd = (): void => {
      if (type === 'application/json') {
        const text = Buffer.concat(held).toString('utf8');
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          // Not JSON after all: the SDK's own `json()` says so.
          return finish(new Response(text, { status: 200, statusText: 'OK', headers }));
        }
        return asJson(value, text);
      }
      // A last event without its blank line: the SDK's parser drops it, so the stream goes as it is.
      for (const e of parser.end()) if (e.data !== '' || e.event !== undefined || e.id !== undefined || e.retry !== undefined) return asStream();
      if (responses.length === 0) return asStream();
      asJson(responses.length === 1 ? responses[0] : responses);
    };
    // Listened to only until the answer is settled (finish takes it off): an error before then fails the call.
    const onError = (err: Error): void => reject(err);
    body.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** A web stream of `held`, then of the rest of `body`. */
function replay(body: Readable, held: Buffer[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of held) controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      if (body.readableEnded) return controller.close();
      body.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.on('end', () => controller.close());
      body.on('error', (err) => controller.error(err));
    },
    pull() {
      body.resume();
    },
    cancel() {
      body.destroy();
    },
  });
}

/** Connects and initializes an SDK client to `target`; rejects with {@link UpstreamUnavailable}. */
export async function connectUpstream(target: UpstreamTarget, options: ConnectOptions): Promise<Client> {
  const refused = checkUpstreamUrl(target.url, options.policy, 'url');
  if (refused !== null) throw new UpstreamUnavailable(`MCP server "${target.name}": ${refused.message}`);
  const fetch = guardedFetch(options.dispatcher);
  const url = new URL(target.url);
  const requestInit: RequestInit = { headers: { ...target.headers } };
  const transport =
    target.transport === 'sse'
      ? new SSEClientTransport(url, { fetch, requestInit, eventSourceInit: { fetch } })
      : // No reconnection: a stream that drops fails its calls at once instead of hanging them.
        new StreamableHTTPClientTransport(url, { fetch, requestInit, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
  const client = new Client({ name: 'model-gateway', version: VERSION });
  const timer = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timer : AbortSignal.any([timer, options.signal]);
  try {
    await client.connect(transport, { signal, timeout: options.timeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new UpstreamUnavailable(`MCP server "${target.name}" at ${url.origin} did not answer initialize: ${describe(err)}`, { cause: err });
  }
  return client;
}
