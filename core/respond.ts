/**
 * Answers a request from the gateway itself: a plugin's reply, a route handler's reply, or an
 * error. Response hooks run on these too (in reverse, up to the plugin that answered), so the
 * first plugin, usually logging, sees every outcome, including a 401 or a 429.
 */
import type { GatewayContext } from './context.js';
import type { ResponseHead } from './plugin.js';
import { runHooks, runObservers, upTo } from './pipeline.js';
import { reply as makeReply, type Reply } from './reply.js';
import { toGatewayError, type GatewayError } from './errors.js';
import type { ResponseWriter } from './response-writer.js';
import type { Runtime } from './runtime.js';

/** Every plugin's response hooks run (the request reached the terminal stage). */
export const ALL_PLUGINS = Number.MAX_SAFE_INTEGER;

/** A streamed reply body: a Readable, an async generator, any async iterable of chunks. */
export function isStreamBody(body: unknown): body is AsyncIterable<Buffer | string> {
  return typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && typeof (body as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function';
}

function encode(reply: Reply): { body: Buffer | string | undefined; json: boolean } {
  const b = reply.body;
  if (b === undefined) return { body: undefined, json: false };
  if (typeof b === 'string' || Buffer.isBuffer(b)) return { body: b, json: false };
  // Plugin replies are arbitrary values; admin routes serialize with their own compiled serializers.
  return { body: JSON.stringify(b), json: true };
}

export interface SendOptions {
  /** Response hooks run for plugins at or before this index. */
  limit: number;
  /** Add the routing headers (a proxied answer, e.g. a cache hit). */
  proxied: boolean;
}

export async function sendReply(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, reply: Reply, options: SendOptions): Promise<void> {
  const { body, json } = encode(reply);
  const headers: Record<string, string | string[]> = { ...reply.headers };
  if (json && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const head: ResponseHead = { status: reply.status, headers, sse: false };

  const hooks = upTo(rt.pipeline.onResponseHeaders, options.limit);
  if (hooks !== null) {
    const stop = await runHooks(hooks, ctx, (fn) => fn(ctx, head));
    // A response hook may replace a gateway reply once; its own reply is not hooked again.
    if (stop?.reply) return sendRaw(rt, ctx, out, stop.reply, options);
    if (stop?.error) return sendRaw(rt, ctx, out, errorReply(ctx, stop.error), options);
  }
  if (isStreamBody(reply.body)) return sendStream(rt, ctx, out, head, reply.body, options);
  if (out.pinged) {
    // The head already went out as an event stream (pings): the answer can only be an error event.
    out.failStream(eventBody(reply.body), true);
  } else if (out.writable) {
    out.send(head.status, head.headers, body, options.proxied);
  }
  await finish(rt, ctx, body, options.limit);
}

/** A reply or upstream body as the object of an error event: JSON bytes parsed, anything else wrapped. */
export function eventBody(body: unknown): Record<string, unknown> {
  let value = body;
  if (Buffer.isBuffer(value) || typeof value === 'string') {
    const text = value.toString();
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return { error: { message: String(value).slice(0, 2000), type: 'upstream_error', param: null, code: null } };
}

/**
 * Streams a reply body with backpressure (a `false` write waits for `drain`, or for the client to
 * go away). The first chunk is read before the head goes out, so a source that fails at once is
 * still an ordinary error reply; a failure after the head cuts the response (failStream).
 * `onResponseBody` does not run for streamed replies (there is no whole body to hand over).
 */
async function sendStream(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, head: ResponseHead, body: AsyncIterable<Buffer | string>, options: SendOptions): Promise<void> {
  const it = body[Symbol.asyncIterator]();
  try {
    let next = await it.next();
    if (!out.writable) return;
    delete head.headers['content-length'];
    out.writeHead(head.status, head.headers, options.proxied);
    while (!next.done) {
      if (!out.writable) break;
      if (!out.write(next.value)) {
        await new Promise<void>((resolve) => {
          const off = ctx.onAbort(resolve);
          out.onDrain(() => (off(), resolve()));
        });
      }
      next = await it.next();
    }
    if (out.writable) out.end();
  } catch (err) {
    if (!out.headersSent) throw err;
    const error = toGatewayError(err);
    ctx.log.warn('streamed reply failed', { code: error.code, err });
    ctx.streamError = error;
    out.failStream(error, false);
  } finally {
    // Lets a generator run its cleanup (close cursors, files) when the loop ended early.
    await it.return?.();
  }
  await runObservers(upTo(rt.pipeline.onResponseEnd, options.limit), ctx, (fn) => fn(ctx));
}

/** Sends a reply without running onResponseHeaders again (used after a hook replaced the answer). */
async function sendRaw(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, reply: Reply, options: SendOptions): Promise<void> {
  const { body, json } = encode(reply);
  const headers: Record<string, string | string[]> = { ...reply.headers };
  if (json && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  if (out.writable && !out.headersSent) out.send(reply.status, headers, body, options.proxied);
  await finish(rt, ctx, body, options.limit);
}

async function finish(rt: Runtime, ctx: GatewayContext, body: Buffer | string | undefined, limit: number): Promise<void> {
  const bodyHooks = upTo(rt.pipeline.onResponseBody, limit);
  if (bodyHooks !== null && body !== undefined) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await runObservers(bodyHooks, ctx, (fn) => fn(ctx, bytes));
  }
  await runObservers(upTo(rt.pipeline.onResponseEnd, limit), ctx, (fn) => fn(ctx));
}

function errorReply(ctx: GatewayContext, err: GatewayError): Reply {
  ctx.error = err;
  ctx.source = 'gateway';
  const body = err.toJSON();
  // On Anthropic's routes the one error shape also carries Anthropic's top-level `type: "error"`,
  // so Anthropic clients read it as their own (the `error.type` names are shared).
  const anthropic = ctx.route.kind === 'model' && (ctx.route.name === 'messages' || ctx.route.name === 'messages.count_tokens');
  return makeReply(err.status, anthropic ? { type: 'error', ...body } : body, { 'x-gateway-error-source': 'gateway', ...err.headers });
}

/** Answers with a gateway error in the one error shape. */
export function sendError(rt: Runtime, ctx: GatewayContext, out: ResponseWriter, err: GatewayError, limit: number): Promise<void> {
  if (err.status >= 500) ctx.log.warn('request failed', { code: err.code, status: err.status, err: err.cause ?? err });
  return sendReply(rt, ctx, out, errorReply(ctx, err), { limit, proxied: false });
}
