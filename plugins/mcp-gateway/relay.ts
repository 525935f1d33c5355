/**
 * The short way of a call (`tools/call`, `prompts/get`, `resources/read`): the client's message,
 * checked, goes upstream as it came (but for its id and, on `/v1/mcp`, its name), and the
 * upstream's answer comes back event by event.
 *
 *   client ── POST tools/call ──▶ checks (the SDK's schema, route, enabled, allow-lists)
 *          ◀── SSE: notifications as they come, then the result ── POST ── upstream session
 *
 * The SDK way (proxy.ts: the session's SDK server, a handler, the session's SDK client) parsed,
 * validated and re-encoded each message four times on Web streams; this path costs what a proxied
 * model call costs. Everything else still takes the SDK way: initialize, lists, prompts, resources,
 * the GET stream, DELETE, servers on the older SSE transport, requests the SDK's transport would
 * refuse (bad headers or an unknown protocol version: it answers those), calls whose key or
 * workspace has guardrails (proxy.ts screens arguments and results), and `resources/read` on
 * `/v1/mcp` (the SDK way knows which server listed each URI).
 *
 * The upstream session is the one the session's SDK client opened, and the SDK client still answers
 * what the upstream asks on a call's stream (sampling, elicitation: it has no handler and says
 * so) and sends `notifications/cancelled` when a call is cancelled, times out or its client goes.
 * Upstream, a relayed call's id is `gw-<n>`, never one of the SDK client's numbers.
 *
 * The answer is what the SDK's server transport would send: an SSE stream (`event: message`), in
 * one write with its length when the result came before any notification.
 */
import type { Readable } from 'node:stream';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';
import { headerString, reply, serializeSse, SseParser, type GatewayContext, type GuardrailService, type McpCall, type Reply, type Store } from '../../core/index.js';
import { MCP_DENIED, MCP_UNAVAILABLE } from './errors.js';
import { checkUse, routeName } from './proxy.js';
import type { Linked, Session } from './session.js';
import { describe, mediaType, UpstreamUnavailable } from './upstream.js';

export interface RelayOptions {
  store: Store;
  timeoutFor(slug: string): number;
  guardrails?: () => GuardrailService | undefined;
}

/**
 * The calls relayed: the SDK's schemas of each (the request, and the result the gateway vouches
 * for, as the SDK's server did on the other way), what it uses, and the parameter that names it.
 */
const RELAYED = {
  'tools/call': { schema: CallToolRequestSchema, result: CallToolResultSchema, type: 'tool', key: 'name' },
  'prompts/get': { schema: GetPromptRequestSchema, result: GetPromptResultSchema, type: 'prompt', key: 'name' },
  'resources/read': { schema: ReadResourceRequestSchema, result: ReadResourceResultSchema, type: 'resource', key: 'uri' },
} as const;

type Kind = (typeof RELAYED)[keyof typeof RELAYED];

/** A relayed call as the client sent it (the SDK's schema checked it). */
interface Call {
  jsonrpc: '2.0';
  id: string | number;
  method: keyof typeof RELAYED;
  params: Record<string, unknown>;
}

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
/** Why a relayed call was aborted by the gateway itself (the per-server timeout), not by its client. */
const TIMED_OUT = Symbol('timed out');
/**
 * How long a call may be quiet before its answer's headers go out anyway (as a stream): clients
 * give up on headers long before a slow tool ends (undici's `fetch` after 300 s).
 */
const HEADERS_WITHIN_MS = 1000;
const KEEP_ALIVE = Buffer.from(serializeSse({ comment: 'the call is running', data: '' }));
/** Queued events past which the upstream is paused until the client reads. */
const HIGH_WATER = 16;

let sequence = 0;
const relayId = (): string => `gw-${(sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER)}`;

/** One message as the SDK's server transport writes it: `event: message`, its JSON as data. */
const frame = (message: unknown): Buffer => Buffer.from(serializeSse({ event: 'message', data: JSON.stringify(message) }));

/**
 * Whether a POST takes the short way: a call the SDK's transport would accept as it is. Anything
 * it would refuse goes its way, to be refused in its words.
 */
function relayable(ctx: GatewayContext, session: Session, message: unknown): message is Call {
  const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown } | undefined;
  if (typeof m !== 'object' || m === null || Array.isArray(m) || m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !Object.hasOwn(RELAYED, m.method)) return false;
  const kind = RELAYED[m.method as Call['method']];
  if (kind.type === 'resource' && session.scope.kind === 'all') return false;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return false;
  const accept = headerString(ctx.headers, 'accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (!(headerString(ctx.headers, 'content-type') ?? '').includes('application/json')) return false;
  const version = headerString(ctx.headers, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  return kind.schema.safeParse(message).success;
}

/** Whether the key's or workspace's guardrails would read this call (then proxy.ts screens it). */
function guarded(ctx: GatewayContext, options: RelayOptions): boolean {
  const service = options.guardrails?.();
  if (service === undefined) return false;
  try {
    return service.checksTexts(ctx, 'input') || service.checksTexts(ctx, 'output');
  } catch {
    // A guardrail that no longer exists: proxy.ts fails the call closed, in its words.
    return true;
  }
}

/**
 * Relays a call; undefined when the request takes the SDK way instead. `signal` is the
 * call's (its client went away, or sent `notifications/cancelled`); `done` runs once the answer is
 * over, however it ends.
 */
export async function relayCall(ctx: GatewayContext, session: Session, message: unknown, signal: AbortController, done: () => void, options: RelayOptions): Promise<Reply | undefined> {
  if (ctx.method !== 'POST' || !relayable(ctx, session, message) || guarded(ctx, options)) return undefined;
  const kind = RELAYED[message.method];
  const named = message.params[kind.key] as string;
  const call = ctx.get('mcpCall');
  const headers: Record<string, string> = { ...SSE_HEADERS };
  if (session.id !== undefined) headers['mcp-session-id'] = session.id;
  const fail = (err: RpcError): Reply => {
    done();
    if (call !== undefined) {
      call.outcome = err.code === MCP_DENIED ? 'denied' : 'error';
      call.error_code = err.code;
    }
    const body = frame({ jsonrpc: '2.0', id: message.id, error: err });
    return reply(200, body, headers);
  };

  let route: ReturnType<typeof routeName>;
  try {
    route = routeName(options.store, session, named);
    if (call !== undefined) call.server = route.r.server.slug;
    checkUse(options.store, session, route.r, kind.type, route.name);
  } catch (err) {
    return fail(asRpcError(err));
  }
  let linked: Linked;
  try {
    linked = await session.link(route.r);
  } catch (err) {
    return fail({ code: MCP_UNAVAILABLE, message: err instanceof UpstreamUnavailable ? err.message : `MCP server "${route.r.server.slug}": ${describe(err)}` });
  }
  const transport = linked.client.transport;
  // The older SSE transport answers on its one stream: the SDK client's to read.
  if (!(transport instanceof StreamableHTTPClientTransport)) {
    return undefined;
  }

  const rid = relayId();
  const upstreamHeaders: Record<string, string> = { ...linked.target.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (transport.sessionId !== undefined) upstreamHeaders['mcp-session-id'] = transport.sessionId;
  if (transport.protocolVersion !== undefined) upstreamHeaders['mcp-protocol-version'] = transport.protocolVersion;
  const body = JSON.stringify({ ...message, id: rid, params: route.name === named ? message.params : { ...message.params, [kind.key]: route.name } });
  const slug = route.r.server.slug;
  const timer = setTimeout(() => signal.abort(TIMED_OUT), options.timeoutFor(slug));
  const started = performance.now();

  const exchange = new Exchange(kind, message.id, rid, linked, call, signal.signal, timer, started, () => {
    clearTimeout(timer);
    done();
  });
  let res: Dispatcher.ResponseData;
  try {
    res = await session.dispatcher.request({ origin: linked.origin, path: linked.path, method: 'POST', headers: upstreamHeaders, body, signal: signal.signal });
  } catch (err) {
    return exchange.failedBeforeAnswer(err, slug, headers);
  }
  return exchange.answer(res, slug, headers);
}

/** A thrown error as the JSON-RPC error a client reads (the SDK's `McpError` carries its code). */
function asRpcError(err: unknown): RpcError {
  if (err instanceof McpError) return { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) };
  return { code: ErrorCode.InternalError, message: err instanceof Error ? err.message : String(err) };
}

/** One relayed call: the upstream's answer read as it comes and passed on. */
class Exchange {
  readonly #queue: Buffer[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #settled = false;
  #body: Readable | undefined;
  #slug = '';

  constructor(
    private readonly kind: Kind,
    private readonly clientId: string | number,
    private readonly rid: string,
    private readonly linked: Linked,
    private readonly call: McpCall | undefined,
    private readonly signal: AbortSignal,
    private readonly timer: NodeJS.Timeout,
    private readonly started: number,
    private readonly done: () => void,
  ) {}

  /** The request failed before any answer: refused, unreachable, aborted or timed out. */
  failedBeforeAnswer(err: unknown, slug: string, headers: Record<string, string>): Reply {
    this.#slug = slug;
    const error = this.#errorOf(err);
    this.#finish();
    return reply(200, frame({ jsonrpc: '2.0', id: this.clientId, error }), headers);
  }

  /**
   * The client's reply: the result in one buffer when it came before anything else; else a stream
   * of the notifications so far, the rest as they come, and the result last.
   */
  answer(res: Dispatcher.ResponseData, slug: string, headers: Record<string, string>): Promise<Reply> {
    this.#slug = slug;
    const body = (this.#body = res.body);
    const type = mediaType(res.headers['content-type']);
    if (res.statusCode !== 200 || (type !== 'application/json' && type !== 'text/event-stream')) {
      body.on('error', () => undefined).resume();
      // A session the upstream no longer knows: the next call connects again.
      if (res.statusCode === 404) void this.linked.client.close();
      return Promise.resolve(this.failedBeforeAnswer(new Error(`HTTP ${res.statusCode}${res.statusCode === 200 ? ` with content type "${type}"` : ''}`), slug, headers));
    }
    return new Promise<Reply>((resolve) => {
      let replied = false;
      const respond = (): void => {
        if (replied) return;
        replied = true;
        clearTimeout(quiet);
        // Only the result so far, and nothing more to come: one write.
        if (this.#ended && this.#queue.length === 1) resolve(reply(200, this.#queue.pop()!, headers));
        else resolve(reply(200, this.#stream(), headers));
      };
      this.#wake = respond;
      // A comment (`:`), which SSE parsers skip, carries the headers out.
      const quiet = setTimeout(() => {
        this.#queue.push(KEEP_ALIVE);
        respond();
      }, HEADERS_WITHIN_MS);
      const parser = new SseParser();
      const held: Buffer[] = [];
      body.on('data', (chunk: Buffer) => {
        if (this.#settled) return;
        if (type === 'application/json') {
          held.push(chunk);
          return;
        }
        for (const e of parser.push(chunk)) {
          if (e.data === '' || (e.event !== undefined && e.event !== 'message')) continue;
          this.#message(e.data);
          if (this.#settled) break;
        }
      });
      body.on('end', () => {
        if (this.#settled) return;
        if (type === 'application/json') this.#message(Buffer.concat(held).toString('utf8'));
        else for (const e of parser.end()) if (e.data !== '' && !this.#settled) this.#message(e.data);
        // The stream ended without the result: the server went away mid-call.
        if (!this.#settled) this.#fail(new Error('closed'));
      });
      body.on('error', (err) => {
        if (!this.#settled) this.#fail(err);
      });
    });
  }

  /** One message of the upstream's answer. */
  #message(data: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(data) as JSONRPCMessage;
    } catch {
      return; // As the SDK's client does: a message that is not JSON is skipped.
    }
    const m = message as { id?: string | number; method?: unknown; result?: Record<string, unknown>; error?: RpcError };
    if (m.id === this.rid && (m.result !== undefined || m.error !== undefined)) {
      m.id = this.clientId;
      if (m.result !== undefined) {
        const checked = this.kind.result.safeParse(m.result);
        if (!checked.success) {
          // Not a result of its kind: the client reads what the SDK's server would have said.
          delete m.result;
          m.error = { code: ErrorCode.InternalError, message: `The MCP server "${this.#slug}" answered with an invalid result: ${checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ').slice(0, 300)}` };
        }
      }
      if (this.call !== undefined) {
        if (m.error !== undefined) {
          this.call.outcome = m.error.code === MCP_DENIED ? 'denied' : 'error';
          this.call.error_code = m.error.code;
        } else this.call.outcome = m.result?.isError === true ? 'error' : 'ok';
      }
      this.#push(frame(m));
      this.#finish();
      return;
    }
    if (typeof m.method === 'string' && m.id === undefined) {
      // Progress (and log messages) as they come; progress keeps the call alive.
      if (m.method === 'notifications/progress') this.timer.refresh();
      this.#push(frame(m));
      this.#wake?.();
      return;
    }
    // A request to the client (sampling, elicitation, roots): the SDK client answers it, as when
    // it makes the call itself.
    this.linked.client.transport?.onmessage?.(message);
  }

  #push(b: Buffer): void {
    this.#queue.push(b);
    if (this.#queue.length > HIGH_WATER && !this.#settled) this.#body?.pause();
  }

  /** The call failed mid-answer: the client reads a JSON-RPC error for it. */
  #fail(err: unknown): void {
    this.#push(frame({ jsonrpc: '2.0', id: this.clientId, error: this.#errorOf(err) }));
    this.#finish();
  }

  /** The error a failed upstream exchange is to the client, recorded in the call's log record. */
  #errorOf(err: unknown): RpcError {
    let error: RpcError;
    if (this.signal.aborted) {
      // Cancelled or timed out here: the upstream is told, as the SDK client tells it.
      const timedOut = this.signal.reason === TIMED_OUT;
      void this.linked.client.notification({ method: 'notifications/cancelled', params: { requestId: this.rid, reason: timedOut ? 'Request timed out' : 'The call was cancelled.' } }).catch(() => undefined);
      error = timedOut ? { code: ErrorCode.RequestTimeout, message: 'Request timed out' } : { code: ErrorCode.ConnectionClosed, message: 'The call was cancelled.' };
      if (!timedOut && this.call !== undefined) this.call.outcome = 'cancelled';
    } else if ((err as Error)?.message === 'closed' || (err as { code?: unknown })?.code === 'UND_ERR_SOCKET') {
      error = { code: MCP_UNAVAILABLE, message: `The MCP server "${this.#slug}" closed the connection mid-call.` };
    } else {
      error = { code: MCP_UNAVAILABLE, message: `The MCP server "${this.#slug}" failed mid-call: ${describe(err)}` };
    }
    if (this.call !== undefined) {
      if (this.call.outcome !== 'cancelled') this.call.outcome = 'error';
      this.call.error_code = error.code;
    }
    return error;
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#ended = true;
    if (this.call !== undefined) this.call.upstream_ms = performance.now() - this.started;
    // The rest of the upstream's answer is read and dropped (the connection stays usable).
    this.#body?.resume();
    this.done();
    this.#wake?.();
  }

  /** The queued events, then the rest as they come; the upstream is read again as the client reads. */
  async *#stream(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        while (this.#queue.length > 0) {
          yield this.#queue.shift()!;
          if (this.#queue.length === 0 && !this.#settled) this.#body?.resume();
        }
        if (this.#ended) return;
        await new Promise<void>((r) => (this.#wake = r));
      }
    } finally {
      // The client went away (its abort reached the signal): the call ends here too.
      if (!this.#settled) this.#fail(new Error('closed'));
    }
  }
}
